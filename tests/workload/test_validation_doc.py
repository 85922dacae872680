"""docs/workload-validation.md is exactly what trnkb.audit.workload_validation computes."""

from pathlib import Path

from trnkb.audit.workload_validation import page

DOC = Path(__file__).resolve().parents[2] / "docs" / "workload-validation.md"


def test_validation_page_is_up_to_date(kb):
    assert DOC.read_text(encoding="utf-8") == page(kb), \
        "re-run: python -m trnkb.audit.workload_validation > docs/workload-validation.md"


def test_measured_runs_have_central_inside_range_and_verdicts_agree(kb):
    """Each measured run's central prediction lies in its range, and the verdict says whether
    the measurement does (checked here from the numbers, independently of the verdict code)."""
    from trnkb.audit.workload_validation import measured_claims

    rows = measured_claims(kb)
    assert sum(1 for r in rows if r["held_out"]) >= 20
    answered = [r for r in rows if r["measured"] is not None]
    assert len(answered) >= 20
    for r in answered:
        assert r["low"] <= r["central"] <= r["high"], r["id"]
        inside = r["low"] <= r["measured"] <= r["high"]
        assert r["verdict"] == ("supported" if inside else "contradicted"), r["id"]


def test_mlperf_llama2_claims_use_the_reference_output_length():
    """MLCommons' llama2-70b README: 'Tokens per sample: 294.45' (the reference's mean output)."""
    import yaml

    from trnkb.audit.workload_validation import MLPERF_LLAMA2_OUTPUT

    assert MLPERF_LLAMA2_OUTPUT == round(294.45)
    doc = yaml.safe_load((DOC.parents[1] / "specs" / "claims" / "measured.yaml").read_text())
    mlperf = [c for c in doc["claims"] if "MLPerf" in c["measured"]["benchmark"]
              and c["measured"]["model"] == "llama-2-70b"]
    assert len(mlperf) >= 2
    for c in mlperf:
        assert c["workload"]["args"]["output_len"] == 294
        assert c["workload"]["args"]["input_len"] <= 1024  # processorca.py --seqlen_limit=1024


def test_validation_numbers_read_as_plain_numbers_with_units():
    """Written by hand: separators, no exponent, '/s' for counts per second, days plural."""
    from trnkb.audit.workload_validation import _ranged, _with_unit

    assert _with_unit(865000.0, "1/s") == "865,000 /s"
    assert _with_unit(12014.0, "1 / s") == "12,014 /s"
    assert _with_unit(44, "day") == "44 days"
    assert _with_unit(1, "day") == "1 day"
    assert _with_unit(65.4, "%") == "65.4%"
    assert _ranged(535649.0, 310612.0, 748731.0) == "535,600 (310,600 to 748,700)"
    assert _ranged(0.016363, 0.016363, 0.017161) == "0.01636 (0.01636 to 0.01716)"


def test_validation_page_has_no_exponents_and_one_rate_spelling():
    import re

    text = DOC.read_text(encoding="utf-8")  # equal to page(kb): the first test checks that
    unquoted = re.sub(r"'[^'|]*'", "", text)  # a source's own words are quoted as written
    # a number in exponent form, not a run id such as jetstream-pytorch-tpu-v5e-8-...
    assert not re.search(r"(?<![\w-])\d+\.?\d*e[+-]?\d", unquoted), "exponent on the page"
    assert "1/s" not in text and "1 / s" not in text
    assert " day |" not in text.replace("| 1 day |", "")
    # the source id alone in its cell, so the site's post-build pass links it
    assert "| azure-nd-gb200-v6-llama2-70b |" in text
    assert "| scaling-book |" in text
