"""The claims registry: every claim evaluates, verdicts follow from the numbers, bad
claims are errors (not silent unverifiables)."""

from pathlib import Path

import pytest

import trnkb
from trnkb.claims import evaluate_claims, validate_claims
from trnkb.specfile import SpecError


@pytest.fixture(scope="module")
def kb():
    return trnkb.load()


@pytest.fixture(scope="module")
def claims(kb):
    return {c.id: c for c in validate_claims(kb)}


def test_every_claim_evaluates_and_there_are_at_least_60(claims):
    assert len(claims) >= 60


def test_contradicted_claims_show_both_numbers(claims):
    bad = [c for c in claims.values() if c.verdict == "contradicted"]
    assert bad
    for c in bad:
        d = c.to_dict()
        assert d["claimed"] is not None and d["computed"] is not None, c.id


def test_unverifiable_claims_say_why(claims):
    for c in claims.values():
        if c.verdict == "unverifiable":
            assert c.reason, c.id


@pytest.mark.parametrize(("cid", "verdict"), [
    ("s004-fabric-3-layer-12t8-100g-524288", "supported"),
    ("s004-nl72x2-184-switches-per-rack", "supported"),
    ("s004-cross-rack-under-10pct-of-backplane", "contradicted"),  # 16/64 = 25%
    ("s004-nl72x2-64-chips-per-rack-slip", "contradicted"),       # 18 x 4 = 72
    ("s001-lnc1-36gb", "contradicted"),                           # 144/8 = 18 GB
    ("s001-nl72x2-144gb-per-rack", "contradicted"),
    ("s002-2x-hbm-capacity", "contradicted"),                     # 144/96 = 1.5
    ("s000-hbm-bandwidth-over-3-tbs", "supported"),
])
def test_verdicts_follow_from_the_numbers(claims, cid, verdict):
    assert claims[cid].verdict == verdict


def test_lnc2_claim_computes_36_gb(claims):
    c = claims["s004-lnc2-36gb-per-device"]
    assert c.computed.to("GB").magnitude == pytest.approx(36)
    assert any(i.get("kb") == "trainium3.hbm_capacity" for i in c.inputs)


def _claims_file(tmp_path, text: str) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BASE = """- id: x
  source: semianalysis-trn3
  locator: here
  statement: a test
  quantity: something
"""


@pytest.mark.parametrize(("body", "problem"), [
    ("  compute: {kb: trainium3.no_such_field}\n  compare: '=='\n  claimed: 1\n", "no KB value"),
    ("  compute: {kb: no-such-chip.hbm_capacity}\n  compare: '=='\n  claimed: 1 GB\n", "no KB value"),
    ("  compute: {kb: trainium3.hbm_capacity}\n  compare: '=='\n  claimed: 1 TB/s\n", "dimension"),
    ("  compute: {calc: fabric-size, args: {layers: 2}}\n  compare: '=='\n  claimed: 1\n", "missing"),
    ("  compute: {kb: trainium3.hbm_capacity}\n  compare: '~'\n  claimed: 144 GB\n", "tolerance"),
    ("  compare: '=='\n  claimed: 1\n", "reason"),
    ("  compute: {eval: '__import__(\"os\")'}\n  compare: '=='\n  claimed: 1\n", "exactly one of"),
])
def test_a_claim_that_cannot_be_evaluated_is_an_error(kb, tmp_path, body, problem):
    with pytest.raises(SpecError) as e:
        validate_claims(kb, _claims_file(tmp_path, BASE + body))
    assert problem in str(e.value)
    assert "claims.yaml:1: x" in str(e.value)


def test_ratio_of_calculators_without_eval(kb, tmp_path):
    body = ("  compute:\n    ratio:\n"
            "      - {calc: fabric-size, args: {switch-bandwidth: 51.2 Tbit/s, port-speed: 100 Gbit/s, layers: 2}}\n"
            "      - {calc: fabric-size, args: {switch-bandwidth: 51.2 Tbit/s, port-speed: 400 Gbit/s, layers: 2}}\n"
            "  compare: between\n  claimed: [15, 17]\n")
    claims, errors = evaluate_claims(kb, _claims_file(tmp_path, BASE + body))
    assert errors == [] and claims[0].verdict == "supported"
    assert claims[0].computed.magnitude == 16
