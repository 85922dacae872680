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


def pytest_configure(config):  # xdist registers the mark too; this covers -p no:xdist
    config.addinivalue_line("markers", "xdist_group(name): run on the worker of that group")


def pytest_collection_modifyitems(config, items):
    root = Path(__file__).parent
    for item in items:
        try:
            rel = Path(item.path).relative_to(root).as_posix()
        except ValueError:  # not a test under tests/ (the doctests, the notebooks)
            continue
        for group, files in _GROUPS.items():
            if rel in files:
                item.add_marker(pytest.mark.xdist_group(group))
