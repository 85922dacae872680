"""docs/workload-validation.md is exactly what trnkb.workload.validation computes."""

from pathlib import Path

from trnkb.workload.validation import page

DOC = Path(__file__).resolve().parents[2] / "docs" / "workload-validation.md"


def test_validation_page_is_up_to_date(kb):
    assert DOC.read_text(encoding="utf-8") == page(kb), \
        "re-run: python -m trnkb.workload.validation > docs/workload-validation.md"
