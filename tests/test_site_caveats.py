"""The site's FP8 views say what they rest on: MI455X's qualifier and the Trainium3 FP8
figure used (expected texts read from specs/chips.yaml with PyYAML, not from trnkb)."""

from pathlib import Path

import pytest
import yaml

import trnkb

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def kb():
    return trnkb.load()


def _block(row_id: str, field: str) -> dict:
    rows = yaml.safe_load((ROOT / "specs" / "chips.yaml").read_text())
    block = next(r for r in rows if r["id"] == row_id)[field]
    return block[0] if isinstance(block, list) else block


def test_explorer_cells_carry_the_qualifier(kb):
    from trnkb.site.explorer import explorer_data

    data = explorer_data(kb)
    rows = {r["id"]: r for r in data["chips"]["rows"]}
    for field in ("dense_fp8", "dense_fp4"):
        assert rows["mi455x"]["cells"][field]["q"] == _block("mi455x", field)["qualifier"]
    assert "q" not in rows["trainium3"]["cells"]["dense_bf16"]
    assert rows["trainium3"]["cells"]["dense_fp8"].get("c")  # the FP8 conflict is flagged
    js = (ROOT / "docs" / "_static" / "explorer.js").read_text()
    assert "cell.q" in js  # the script shows it


def test_landing_lists_what_the_fp8_figures_rest_on(kb):
    from trnkb.site.landing import _caveats

    text = "\n".join(_caveats(kb))
    assert _block("mi455x", "dense_fp8")["qualifier"] in text
    trn3 = _block("trainium3", "dense_fp8")
    assert trn3["source"] in text and "neuron-nki-arch-trn3" in text
