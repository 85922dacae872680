"""Notebook 10's computations (trnkb.views.tco) checked by independent arithmetic."""

import pytest

import trnkb.workload as W
from trnkb.views import tco
from trnkb.workload.ranges import user_value


def test_breakeven_capex_makes_trainium3_cost_what_the_competitor_costs(kb):
    df = tco.serving(kb, target=20, systems=(tco.TRN3, "gb300-nvl72"),
                     models={"dense": "llama-3.1-70b"})
    be = tco.breakeven_capex(df)
    capex = float(be["breakeven_capex_usd"].iloc[0])
    t3 = df[(df["id"] == tco.TRN3) & (df["pricing"] == "owner")].iloc[0]
    gb = df[(df["id"] == "gb300-nvl72") & (df["pricing"] == "owner")].iloc[0]
    # re-run Trainium3 at the same operating point with capex set to the break-even
    r = W.simulate(W.model(kb, "llama-3.1-70b"), W.system(kb, tco.TRN3), int(t3["chips"]),
                   input_len=2048, output_len=512, precision="fp8",
                   concurrency=int(t3["load"]),
                   assumptions={"capex_per_chip": user_value("capex_per_chip", capex, "USD")})
    assert r.breakdown["usd_per_million_tokens"] == pytest.approx(gb["usd_per_mtok"], rel=1e-9)


def test_power_check_by_hand(kb):
    pc = tco.power_check(kb).set_index("system")
    # H100: TDP 700 W (hpctech-h100) x 1.45 overhead x PUE 1.5 (dlc-chiller peak) = 1522.5 W,
    # below InferenceX's 1.73 kW all-in: a miss of (1730 - 1522.5) / 1522.5
    assert pc.loc["hgx-h100-8", "model_high_w"] == pytest.approx(700 * 1.45 * 1.5)
    assert pc.loc["hgx-h100-8", "miss"] == pytest.approx((1730 - 1522.5) / 1522.5, abs=1e-3)
    # GB200 NVL72: 120 kW rack / 72 chips x PUE 1.5 = 2500 W; 2.1 kW all-in is inside
    assert pc.loc["gb200-nvl72", "model_high_w"] == pytest.approx(120e3 / 72 * 1.5)
    assert bool(pc.loc["gb200-nvl72", "within"])


def test_verdict_is_three_sentences_and_ranks_only_separated_ranges(kb):
    df = tco.serving(kb, target=20, systems=(tco.TRN3, "gb300-nvl72", "mi355x-8"),
                     models={"dense": "llama-3.1-70b"})
    vs = tco.versus(df)
    for row in vs.itertuples():
        if row.call == "Trainium3 cheaper":
            assert row.high < 1
        elif row.call == "Trainium3 dearer":
            assert row.low > 1
        else:
            assert row.low <= 1 <= row.high
    sentences = tco.verdict(df, vs, tco.breakeven_capex(df))
    assert len(sentences) == 3 and all(s.endswith(".") for s in sentences)
    # every per-dollar row names its sourced and assumed inputs (range_shares of its $/Mtok)
    own = df[(df["id"] == tco.TRN3) & (df["pricing"] == "owner")].iloc[0]
    assert "capex_per_chip" in own["assumed_inputs"].split(", ")
    cloud = df[(df["id"] == "gb300-nvl72") & (df["pricing"] == "cloud")].iloc[0]
    assert "cloud_price" in cloud["sourced_inputs"].split(", ")
    assert "capex_per_chip" not in cloud["assumed_inputs"]  # a renter pays no capex
    assert not (df["pricing"] == "cloud").loc[df["id"] == tco.TRN3].any()  # no Trn3 price
    rests = tco.rests_on(df, "dense", pricing="cloud")
    assert set(rests["system"]) == set(df.loc[df["pricing"] == "cloud", "system"])
