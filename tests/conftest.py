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
