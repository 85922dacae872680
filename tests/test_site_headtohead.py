"""Head-to-head pages: one per pair of the nine headline systems, JSON-LD a parser reads,
a CSV each, HBM compared on the physical basis."""

from __future__ import annotations

import csv
import io
import json
import re
from itertools import combinations

import pytest
from sitebuild import built_site

from trnkb.site.headtohead import slug
from trnkb.site.serving_grid import HEADLINE_SYSTEMS

jsonld = pytest.importorskip("pyld.jsonld")

_LD = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.DOTALL)


def _offline_loader(url, options=None):
    # schema.org's context maps every term into its vocabulary; served locally (no network)
    assert url.rstrip("/") in ("https://schema.org", "http://schema.org"), url
    return {"contextUrl": None, "documentUrl": url,
            "document": {"@context": {"@vocab": "https://schema.org/"}}}


def test_every_pair_has_a_page_with_json_ld_a_parser_reads_and_a_csv():
    out = built_site()
    pairs = list(combinations(HEADLINE_SYSTEMS, 2))
    assert len(HEADLINE_SYSTEMS) == 9 and len(pairs) == 36
    for a, b in pairs:
        page = out / "compare" / f"{slug(a, b)}.html"
        text = page.read_text(encoding="utf-8")
        blocks = _LD.findall(text)
        assert len(blocks) == 1, page
        doc = json.loads(blocks[0])
        expanded = jsonld.expand(doc, {"documentLoader": _offline_loader})
        assert expanded[0]["@type"] == ["https://schema.org/Dataset"], page
        names = [v["@value"] for v in expanded[0]["https://schema.org/name"]]
        assert a in names[0] and b in names[0]
        dist = expanded[0]["https://schema.org/distribution"][0]
        url = dist["https://schema.org/contentUrl"][0]["@value"]
        rows = list(csv.DictReader(io.StringIO((page.parent / url).read_text())))
        assert rows and {a, b} <= set(rows[0])


def test_trainium3_vs_gb300_hbm_reads_half_on_the_physical_basis():
    out = built_site()
    a, b = "trn3-nl72x2-switched", "gb300-nvl72"
    rows = list(csv.DictReader(io.StringIO(
        (out / "compare" / f"{slug(a, b)}.csv").read_text())))
    phys = next(r for r in rows if r["item"].startswith("hbm_physical"))
    # 4 stacks against 8, both 12-high with 24 Gbit dies
    assert float(phys["ratio_a_over_b"]) == (4 * 12 * 24) / (8 * 12 * 24)
    assert "144 GiB" in phys["note"] and "288 GB" in phys["note"]  # the vendors' labels
    label = next(r for r in rows if r["item"] == "hbm_capacity")
    assert label["ratio_a_over_b"] == ""  # the mixed-basis 0.537 is never shown as a ratio
    html = (out / "compare" / f"{slug(a, b)}.html").read_text()
    assert "0.537" in html  # the difference explained once, in words


def test_head_to_head_gives_training_days_cost_per_mtok_and_tokens_per_mw_for_both():
    from trnkb import workload as W
    from trnkb.kb import load
    from trnkb.workload.fleet import train_plan

    out = built_site()
    a, b = "trn3-nl72x2-switched", "gb300-nvl72"
    rows = {r["item"]: r for r in csv.DictReader(io.StringIO(
        (out / "compare" / f"{slug(a, b)}.csv").read_text()))}
    for item in ("days to train", "tokens/s per MW of facility power",
                 "cost per million output tokens", "chips (whole racks)"):
        assert float(rows[item][a]) > 0 and float(rows[item][b]) > 0, item
    cloud = rows["cost per million output tokens, cloud prices"]
    assert cloud[a] == "" and f"no published cloud price for {a}" in cloud["note"]
    assert float(cloud[b]) > 0  # GB300 has rented prices in specs/prices.yaml
    kb = load()
    plan = train_plan(W.model(kb, "llama-3-1-70b"), W.system(kb, a, None), 15e12, 30, "bf16")
    assert float(rows["days to train"][a]) == pytest.approx(plan["days"]["central"], rel=1e-3)
    assert int(float(rows["chips (whole racks)"][a])) == plan["chips"]
    html = (out / "compare" / f"{slug(a, b)}.html").read_text()
    assert "Training llama-3-1-70b on 15 trillion tokens in 30 days" in html
    assert html.count('fill-opacity="0.15"') == 2  # both frontiers drawn with their bands
