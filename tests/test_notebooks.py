"""The notebook executor: re-running a committed notebook gives the same bytes."""

import shutil
from pathlib import Path

import pytest

from trnkb import notebooks

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def test_every_issue_notebook_exists():
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert [n[:3] for n in names] == [f"{i:02d}-" for i in range(1, 10)], names


@pytest.mark.parametrize("name", ["06-datacenter.ipynb"])
def test_reexecution_is_byte_identical(tmp_path, name):
    # The smallest notebook; nbval checks every notebook's outputs, this checks the file
    # itself (no timing metadata, ids or paths that change between runs).
    copy = tmp_path / name
    shutil.copy(NOTEBOOKS / name, copy)
    changed = notebooks.execute(copy)
    assert not changed, f"re-executing {name} changed it; run `make notebooks` and commit"
    assert copy.read_bytes() == (NOTEBOOKS / name).read_bytes()
