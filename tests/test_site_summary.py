"""The closing summary of `make report`: counts, not failure-looking lines."""

from trnkb.audit import claims
from trnkb.kb import load
from trnkb.site.summary import summary


def test_summary_counts_findings_without_alarm(tmp_path):
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "01-x.ipynb").write_text("{}")
    lines = summary(tmp_path / "site", tmp_path / "nb")
    kb = load()
    text = "\n".join(lines)
    assert f"{len(kb.facts):,} from {len(kb.sources):,} sources" in text
    # the count the sources page shows (sources.yaml plus the claim files' own sources)
    from trnkb.site.pages import all_sources

    n_page = len(all_sources(kb))
    assert n_page > len(kb.sources) and f"{n_page:,} sources with the claim files' own" in text
    n = (claims.claims_table(claims.validate_claims(kb))["verdict"] == "contradicted").sum()
    assert f"{n} contradicted" in text
    assert "1 executed (01)" in text and "(not built)" in text
    assert not any(line.lstrip().startswith(("!!", "error", "FAIL")) for line in lines)
