"""A versus B with shared assumptions tied, and the tco claims built on it."""

from types import SimpleNamespace

import pytest

from trnkb.workload.ranges import Input, Ranged
from trnkb.workload.versus import ratio_range


def _result(mid, drivers, inputs):
    m = Ranged("usd_per_million_tokens", "USD", mid, 0.0, 0.0, tuple(drivers))
    return SimpleNamespace(metrics={"usd_per_million_tokens": m}, inputs=inputs)


def test_a_shared_assumption_cancels_in_the_ratio():
    util = Input("utilisation", 0.6, 0.8, 0.9, "", "assumption", "same on both sides")
    # utilisation moves both $/Mtok by the same factors (0.8/0.6 and 0.8/0.9 of central)
    a = _result(1.0, [("utilisation", 0.8 / 0.6, 0.8 / 0.9)], {"utilisation": util})
    b = _result(2.0, [("utilisation", 2 * 0.8 / 0.6, 2 * 0.8 / 0.9)], {"utilisation": util})
    v = ratio_range(a, b, "usd_per_million_tokens")
    assert (v.central, v.low, v.high) == pytest.approx((0.5, 0.5, 0.5))
    assert v.shared == ("utilisation",)


def test_an_input_of_one_side_moves_the_ratio_by_its_own_factor():
    capex = Input("capex_per_chip", 1.0, 2.0, 3.0, "USD", "assumption", "A only")
    capex_b = Input("capex_per_chip", 5.0, 6.0, 7.0, "USD", "assumption", "B differs")
    a = _result(1.0, [("capex_per_chip", 0.75, 1.25)], {"capex_per_chip": capex})
    b = _result(2.0, [("capex_per_chip", 1.8, 2.2)], {"capex_per_chip": capex_b})
    v = ratio_range(a, b, "usd_per_million_tokens")
    # by hand: A's swing 0.75..1.25, B's 0.9..1.1 inverted: 1/0.9..1/1.1, multiplied
    assert v.low == pytest.approx(0.5 * 0.75 / 1.1)
    assert v.high == pytest.approx(0.5 * 1.25 / 0.9)
    assert v.drivers[0][0] == "capex_per_chip (A)" and v.shared == ()


def test_tco_claims_name_the_deciding_input_when_ranges_overlap(kb):
    from trnkb.audit.claims import core

    claims, errors = core.evaluate_claims(kb)
    assert not errors
    tco = {c.id: c for c in claims if c.kind == "tco"}
    assert len(tco) >= 8
    for c in tco.values():
        assert c.verdict in ("supported", "contradicted", "unverifiable")
        lo, hi = (q.magnitude for q in c.computed)
        assert lo <= hi
        if c.verdict == "unverifiable":
            assert "deciding input:" in c.reason
            assert "(sourced" in c.reason or "(assumption" in c.reason or "(fitted" in c.reason \
                or "sourced x assumption" in c.reason
