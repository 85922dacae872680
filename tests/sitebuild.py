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

# Attribute and element break-outs (issue 25): quotes, tags and template syntax in every
# text a page shows; each payload would set window.__pwned if it ever ran.
HOSTILE_SOURCE = """
- id: test-hostile
  title: '"><svg onload="window.__pwned=5">'
  publisher: "' onmouseover='window.__pwned=6' x='"
  url: https://example.org/hostile?a=1&b=2#frag
  date: 2025
  kind: press
"""
HOSTILE_CHIP = """
- id: test-hostile-chip
  name: 'Q"><img src=x onerror="window.__pwned=1">'
  vendor: "' onmouseover='window.__pwned=2' x='"
  status: announced
  notes: "</td></tr></table><script>window.__pwned=3</script>"
  process_node: {value: "`${window.__pwned=4}` {{7*7}}", source: test-hostile,
                 locator: "</a><img src=x onerror=window.__pwned=7>", kind: reported,
                 qualifier: "\\\"'><script>window.__pwned=8</script>",
                 note: "javascript:window.__pwned=9"}
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
        f.write(INJECTED_SOURCE + HOSTILE_SOURCE)
    with open(specs / "chips.yaml", "a", encoding="utf-8") as f:
        f.write(INJECTED_CHIP + HOSTILE_CHIP)
    site.build(tmp / "site", specs=specs)
    return tmp / "site"
