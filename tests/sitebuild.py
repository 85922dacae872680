"""One site build per test session, shared by the site tests (it takes about a minute).

The build uses a copy of the shipped specs plus rows whose text is HTML, so the escaping
tests run against the real pages.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

from trnkb import site
from trnkb.kb import default_specs_dir

INJECTED_SOURCE = """
- id: test-injection
  title: "<script>alert('title')</script>"
  publisher: "<b>bold</b> | pipe"
  url: https://example.org/injection
  date: 2025
  kind: press
"""
INJECTED_CHIP = """
- id: test-injected-chip
  name: "<script>alert('name')</script>"
  vendor: Test
  status: announced
  process_node:
    - {value: "<script>alert('value')</script>", source: test-injection, locator: "x",
       kind: reported, preferred: true, note: "test override"}
    - {value: "N3 *plain*", source: test-injection, locator: "y", kind: reported}
"""


@functools.cache
def built_site() -> Path:
    reuse = os.environ.get("TRNKB_TEST_SITE")  # a developer's earlier build of this same tree
    if reuse:
        return Path(reuse)
    tmp = Path(tempfile.mkdtemp(prefix="trnkb-site-"))
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    specs = tmp / "specs"
    shutil.copytree(default_specs_dir(), specs)
    with open(specs / "sources.yaml", "a", encoding="utf-8") as f:
        f.write(INJECTED_SOURCE)
    with open(specs / "chips.yaml", "a", encoding="utf-8") as f:
        f.write(INJECTED_CHIP)
    site.build(tmp / "site", specs=specs)
    return tmp / "site"
