"""Notebooks on the site: no code is shown above or below the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trnkb.site import answer_first

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_is_hidden_on_the_site_and_kept_in_the_notebook(path):
    raw = json.loads(path.read_text())
    staged = json.loads(answer_first(path.read_text()))
    assert len(staged["cells"]) == len(raw["cells"])  # nothing dropped from the file
    for before, after in zip(raw["cells"], staged["cells"], strict=True):
        assert after["source"] == before["source"]
        if after["cell_type"] == "code":
            tags = set(after["metadata"].get("tags", []))
            assert tags & {"remove-input", "remove-cell"}, "".join(after["source"])[:80]
            assert ("remove-input" in tags) == bool(after.get("outputs"))
