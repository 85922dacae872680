"""One site build per test session, shared by the site tests (it takes about a minute).

The build uses a copy of the shipped specs plus rows whose text is HTML, so the escaping
tests run against the real pages.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import shutil
import tempfile
from collections.abc import Iterator
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
    """The shared build: one per test session, and one per run when pytest-xdist spreads
    the tests over worker processes (the first worker to ask builds it, under a lock, and
    the last one to finish removes it)."""
    reuse = os.environ.get("TRNKB_TEST_SITE")  # a developer's earlier build of this same tree
    if reuse:
        return Path(reuse)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # the same in every worker of one run
    if not run:
        tmp = Path(tempfile.mkdtemp(prefix="trnkb-site-"))
        atexit.register(shutil.rmtree, tmp, ignore_errors=True)
        _build(tmp)
        return tmp / "site"
    shared = Path(tempfile.gettempdir()) / f"trnkb-site-{run}"
    with _locked(shared) as users:
        if not (shared / "built").exists():
            _build(shared)
            (shared / "built").touch()
        users.write_text(str(int(users.read_text() or 0) + 1))
    atexit.register(_release, shared)
    return shared / "site"


def _build(tmp: Path) -> None:
    specs = tmp / "specs"
    shutil.rmtree(specs, ignore_errors=True)
    shutil.copytree(default_specs_dir(), specs)
    with open(specs / "sources.yaml", "a", encoding="utf-8") as f:
        f.write(INJECTED_SOURCE + HOSTILE_SOURCE)
    with open(specs / "chips.yaml", "a", encoding="utf-8") as f:
        f.write(INJECTED_CHIP + HOSTILE_CHIP)
    site.build(tmp / "site", specs=specs)


@contextlib.contextmanager
def _locked(shared: Path) -> Iterator[Path]:
    """Hold the shared build's lock; yields the file counting the workers using it."""
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        users = shared / "users"
        if not users.exists():
            users.write_text("0")
        yield users


def _release(shared: Path) -> None:
    with _locked(shared) as users:
        left = int(users.read_text() or 1) - 1
        users.write_text(str(left))
        if left <= 0:  # the last worker: remove the build (a late worker would rebuild it)
            for p in shared.iterdir():
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                elif p.name != "lock":
                    p.unlink()
    if left <= 0:
        shutil.rmtree(shared, ignore_errors=True)
