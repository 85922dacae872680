"""docs/engine-validation.md holds the table the engine produces today (it cannot rot)."""

from __future__ import annotations

import re
from pathlib import Path

from trnkb.engine.validation import CASES, table

DOC = Path(__file__).parents[2] / "docs" / "engine-validation.md"


def test_the_validation_page_matches_the_engines_predictions(kb):
    text = DOC.read_text()
    block = re.search(r"<!-- validation-table:start -->\n(.*?)\n<!-- validation-table:end -->",
                      text, re.S)
    assert block, "docs/engine-validation.md lost its generated table markers"
    assert block.group(1) == table(kb), ("the engine's predictions changed: regenerate the table "
                                         "with trnkb.engine.validation.table()")


def test_every_case_states_its_device_or_that_it_is_unknown():
    for c in CASES:
        assert c.device
        if c.call is not None and "not stated" in c.device:
            assert "unknown" in c.note  # the assumed chip is said to be an assumption
