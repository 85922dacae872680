"""docs/workload-validation.md is exactly what trnkb.workload.validation computes."""

from pathlib import Path

from trnkb.workload.validation import page

DOC = Path(__file__).resolve().parents[2] / "docs" / "workload-validation.md"


def test_validation_page_is_up_to_date(kb):
    assert DOC.read_text(encoding="utf-8") == page(kb), \
        "re-run: python -m trnkb.workload.validation > docs/workload-validation.md"


def test_measured_runs_have_central_inside_range_and_verdicts_agree(kb):
    """Each measured run's central prediction lies in its range, and the verdict says whether
    the measurement does (checked here from the numbers, independently of the verdict code)."""
    from trnkb.workload.validation import measured_claims

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

    from trnkb.workload.validation import MLPERF_LLAMA2_OUTPUT

    assert MLPERF_LLAMA2_OUTPUT == round(294.45)
    doc = yaml.safe_load((DOC.parents[1] / "specs" / "claims" / "measured.yaml").read_text())
    mlperf = [c for c in doc["claims"] if "MLPerf" in c["measured"]["benchmark"]
              and c["measured"]["model"] == "llama-2-70b"]
    assert len(mlperf) >= 2
    for c in mlperf:
        assert c["workload"]["args"]["output_len"] == 294
        assert c["workload"]["args"]["input_len"] <= 1024  # processorca.py --seqlen_limit=1024
