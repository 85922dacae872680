import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def good_specs(tmp_path) -> Path:
    """A small valid spec directory (tests/data/good) copied to a temp dir."""
    dst = tmp_path / "specs"
    shutil.copytree(DATA / "good", dst)
    return dst


@pytest.fixture(scope="session")
def kb():
    """The shipped knowledge base, loaded once per test session (issue 15 §2).

    Shared by every test module: do not mutate it (load your own copy to mutate).
    """
    import trnkb

    return trnkb.load()


# Tests that share one expensive per-process result run on one pytest-xdist worker
# (`make test` passes --dist loadgroup), so the result is computed once per run instead of
# once per worker: the measured ledger's evaluation (about a minute of CPU, cached per
# knowledge base by trnkb.audit.ledger) and the wheel's site build (tests/sitebuild.py; a
# second worker would wait on its lock). Other tests are spread over the workers as before.
_GROUPS = {
    "ledger": ("workload/test_ledger.py", "workload/test_energy_validation.py",
               "workload/test_validation_doc.py", "workload/test_calibration.py"),
    "site": ("test_site.py", "test_site_browser.py", "test_site_headtohead.py",
             "test_site_hostile.py", "test_wheel.py"),
}


def _group_of(nodeid: str) -> str | None:
    rel = nodeid.split("::", 1)[0].removeprefix("tests/")
    return next((g for g, files in _GROUPS.items() if rel in files), None)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: absent under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """--dist loadgroup with the groups above read from the node ids. xdist 3.8's own
    grouping (``xdist_group`` marks) suffixes ``item._nodeid``, which pytest 9 no longer
    reads (``Node.nodeid`` is built from ``_id``): with marks, every group was split."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class _ByFile(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group_of(nodeid) or nodeid

    return _ByFile(config, log)
