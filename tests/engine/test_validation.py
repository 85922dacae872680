"""docs/engine-validation.md is the page the engine and the data produce today (it cannot rot)."""

from __future__ import annotations

import re
from pathlib import Path

from trnkb.audit.engine_validation import CASES, page, table, write_page

DOC = Path(__file__).parents[2] / "docs" / "engine-validation.md"


def test_the_committed_page_is_the_generated_page(kb):
    assert DOC.read_text(encoding="utf-8") == page(kb), (
        "regenerate it: python -m trnkb.audit.engine_validation")


def test_every_operatorx_row_is_on_the_page_marked_fitted_or_held_out():
    from trnkb.engine.calibration import FIT_FILE, held_out_files, load

    text = DOC.read_text(encoding="utf-8")
    for name in [FIT_FILE, *held_out_files()]:
        role = "fitted" if name == FIT_FILE else "held out"
        assert f"### `{name}` ({role}, {len(load(name))} rows)" in text
    assert text.count(" | held out |") == 250 and text.count(" | fitted |") == 20


def test_the_validation_page_matches_the_engines_predictions(kb):
    text = DOC.read_text()
    block = re.search(r"<!-- validation-table:start -->\n(.*?)\n<!-- validation-table:end -->",
                      text, re.S)
    assert block, "docs/engine-validation.md lost its generated table markers"
    assert block.group(1) == table(kb), ("the engine's predictions changed: regenerate the table "
                                         "with trnkb.audit.engine_validation.table()")


def test_every_case_states_its_device_or_that_it_is_unknown():
    for c in CASES:
        assert c.device
        if c.call is not None and "not stated" in c.device:
            assert "unknown" in c.note  # the assumed chip is said to be an assumption


def test_published_times_read_as_their_sources_write_them(kb):
    # the page printed "320.00" and "117,000.00" (a reader took the ".00" for precision)
    rows = {line.split(" | ")[1] + " " + line.split(" | ")[4]: line.split(" | ")[5]
            for line in table(kb).splitlines()[2:]}
    assert rows["quantized double-row matmul bf16 x fp8 (double row)"] == "320"
    assert rows["flash attention backward bf16"] == "117,000"
    assert rows["fused Mamba fp32"] == "172.93"  # a published digit is never rounded away
    assert rows["fused Mamba v2 fp32"] == "1,610"
    assert ".00 |" not in table(kb)


def test_the_page_cites_public_sources_not_a_local_path():
    # the page cited /work/shared/neuroncore_facts.md, which a reader of the repository lacks
    text = DOC.read_text()
    assert "/work/" not in text and "neuroncore_facts" not in text
    assert "https://github.com/aws-neuron/nki-samples/" in text
    assert "https://github.com/aws-neuron/aws-neuron-sdk/blob/7c165a3e" in text


def test_write_page_writes_the_generated_page(kb, tmp_path, monkeypatch):
    import trnkb.audit.engine_validation as ev

    monkeypatch.setattr(ev, "page", lambda kb=None: "# generated\n")
    out = write_page(tmp_path / "v.md", kb)
    assert out.read_text(encoding="utf-8") == "# generated\n"


def test_attention_is_within_15_percent_of_the_published_attention_times_median(kb):
    # issue 20: median |error| <= 15% over every modelled published attention time
    import statistics

    from trnkb.audit.engine_validation import predict

    errs = [abs(predict(c, kb) - c.published_us) / c.published_us for c in CASES
            if c.call is not None and c.call[0] == "attention"]
    assert len(errs) >= 4
    assert statistics.median(errs) <= 0.15
