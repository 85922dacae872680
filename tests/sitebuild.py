"""One site build per test session, shared by the site tests, made by the wheel.

The site is built once per run (about a minute) by ``python -m trnkb.site`` of a virtualenv
that holds only this checkout's wheel (:func:`installed_wheel`, which tests/test_wheel.py
uses too), with the docs and notebooks packaged in it: the site tests read the pages of
the package as installed, and the wheel test needs no second build. The build uses a copy
of the shipped specs plus rows whose text is HTML, so the escaping tests run against the
real pages.

The virtualenv gets only the wheel; its third-party dependencies are borrowed from the
test environment's site-packages through a path file (installing them again would take
minutes), whose own path files (the editable install of this checkout) are not processed.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import shutil
import site as pysite
import subprocess
import sys
import tempfile
import venv
from collections.abc import Iterator
from pathlib import Path

from trnkb.kb import default_specs_dir

ROOT = Path(__file__).resolve().parents[1]

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


def sh(*args, cwd, timeout=300) -> str:
    """Run a command with nothing from the checkout on its path; its stdout (fails the test
    with the output's tail when it exits non-zero)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing from the checkout
    proc = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert proc.returncode == 0, f"{args}: {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    return proc.stdout


@functools.cache
def _shared() -> Path:
    """This run's shared directory: one per test session, and one per run when pytest-xdist
    spreads the tests over worker processes (the last worker to finish removes it)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # the same in every worker of one run
    if not run:
        tmp = Path(tempfile.mkdtemp(prefix="trnkb-site-"))
        atexit.register(shutil.rmtree, tmp, ignore_errors=True)
        return tmp
    shared = Path(tempfile.gettempdir()) / f"trnkb-site-{run}"
    with _locked(shared) as users:
        users.write_text(str(int(users.read_text() or 0) + 1))
    atexit.register(_release, shared)
    return shared


@functools.cache
def installed_wheel() -> Path:
    """The ``bin`` directory of a virtualenv holding only this checkout's wheel (built once
    per run, under the shared lock)."""
    shared = _shared()
    with _locked(shared):
        if not (shared / "wheel-installed").exists():
            _install_wheel(shared / "wheel")
            (shared / "wheel-installed").touch()
    return shared / "wheel" / "venv" / "bin"


def _install_wheel(tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
       "-w", tmp / "dist", ROOT, cwd=tmp)
    wheel = next((tmp / "dist").glob("trnkb-*.whl"))
    env = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    purelib = Path(sh(env / "bin" / "python", "-c",
                      "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                      cwd=tmp).strip())
    deps = [p for p in pysite.getsitepackages() if Path(p).is_dir()]
    (purelib / "_trnkb_test_deps.pth").write_text("\n".join(deps) + "\n")
    sh(sys.executable, "-m", "pip", "--python", env / "bin" / "python", "install", "--no-deps",
       "--no-index", "-q", wheel, cwd=tmp)


@functools.cache
def built_site() -> Path:
    """The shared build, made by the wheel's ``python -m trnkb.site`` (the first worker to ask
    builds it, under a lock)."""
    reuse = os.environ.get("TRNKB_TEST_SITE")  # a developer's earlier build of this same tree
    if reuse:
        return Path(reuse)
    bin_ = installed_wheel()
    shared = _shared()
    with _locked(shared):
        if not (shared / "built").exists():
            _build(shared, bin_)
            (shared / "built").write_text(str(bin_ / "python"))
    return shared / "site"


def built_by() -> Path | None:
    """The interpreter that made the shared build (None for a reused ``TRNKB_TEST_SITE``)."""
    if os.environ.get("TRNKB_TEST_SITE"):
        return None
    built_site()
    return Path((_shared() / "built").read_text())


def _build(tmp: Path, bin_: Path) -> None:
    specs = tmp / "specs"
    shutil.rmtree(specs, ignore_errors=True)
    shutil.copytree(default_specs_dir(), specs)
    with open(specs / "sources.yaml", "a", encoding="utf-8") as f:
        f.write(INJECTED_SOURCE + HOSTILE_SOURCE)
    with open(specs / "chips.yaml", "a", encoding="utf-8") as f:
        f.write(INJECTED_CHIP + HOSTILE_CHIP)
    elsewhere = tmp / "elsewhere"  # not the checkout: the wheel's docs and notebooks are used
    elsewhere.mkdir(exist_ok=True)
    sh(bin_ / "python", "-m", "trnkb.site", tmp / "site", "--specs", specs, cwd=elsewhere,
       timeout=900)


@contextlib.contextmanager
def _locked(shared: Path) -> Iterator[Path]:
    """Hold the shared directory's lock; yields the file counting the workers using it."""
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
