"""Cost views (owner, cloud), the prices table and its CLI, with the arithmetic done by hand."""

import json

import pytest
from typer.testing import CliRunner

import trnkb.workload as W
from trnkb.cli import app
from trnkb.workload.cost import cost_inputs, range_shares, usd_per_chip_hour
from trnkb.workload.prices import price_rows

runner = CliRunner()


def test_instance_price_to_chip_hour_to_usd_per_mtok_by_hand(kb):
    # AWS EC2 Capacity Blocks pricing page: p5.48xlarge $39.33 per instance-hour, 8 x H100
    # (source aws-capacity-blocks-pricing); the page itself prints $4.916 per accelerator-hour
    row = next(r for r in price_rows(kb, "h100") if r["id"] == "aws-p5-48xlarge-capacity-block")
    assert row["price_per_chip_usd_per_hour"] == pytest.approx(39.33 / 8)
    assert row["price_per_chip_usd_per_hour"] == pytest.approx(4.916, abs=5e-4)
    # the cloud view of hgx-h100-8 is centred on the first row listed for the chip:
    # p5.48xlarge on-demand $98.32 / 8 GPUs (factualminds-trainium2-blog)
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "hgx-h100-8")
    r = W.serve(m, s, 8, 64, 2048, 256, "fp8", pricing="cloud", curve=False)
    per_chip_hour = 98.32 / 8
    tok_s_chip = r.breakdown["tokens_per_s_per_chip"]
    by_hand = per_chip_hour / (tok_s_chip * 3600) * 1e6  # USD per million tokens
    assert r.breakdown["usd_per_chip_hour"] == pytest.approx(per_chip_hour)
    assert r.breakdown["usd_per_million_tokens"] == pytest.approx(by_hand, rel=1e-9)
    # the range spans every rented offer: low end Lambda/3-year rental, high end on-demand
    assert s.cloud_price.lo == pytest.approx(1.30) and s.cloud_price.hi == pytest.approx(12.29)


def test_owner_price_is_per_owned_hour_so_it_is_divided_by_utilisation():
    v = {"owner_price": 1.3, "utilisation": 0.8, "capex_per_chip": 1e9, "chip_power": 1e9,
         "pue": 9.0, "power_price": 9.0, "depreciation_years": 5.0, "cost_of_capital": 0.08,
         "opex_fraction": 0.05}
    assert usd_per_chip_hour(v) == pytest.approx(1.3 / 0.8)
    v["cloud_price"] = 2.0  # a renter pays per hour used: no utilisation
    assert usd_per_chip_hour(v) == pytest.approx(2.0)


def test_owner_view_uses_the_analyst_owner_cost_where_one_exists(kb):
    gb = W.system(kb, "gb200-nvl72")
    # InferenceX GPU_SPECS.gb200: costh 2.21, costn 2.75 USD per GPU-hour
    assert (gb.owner_price.lo, gb.owner_price.hi) == pytest.approx((2.21, 2.75))
    assert "owner_price" in cost_inputs(gb, "owner") and "owner_price" in cost_inputs(gb, "tco")
    trn3 = W.system(kb, "trn3-nl72x2-switched")
    assert trn3.owner_price is None and trn3.cloud_price is None
    assert cost_inputs(trn3, "owner")["depreciation_years"].kind == "assumption"
    with pytest.raises(ValueError, match="no cloud price for trainium3"):
        cost_inputs(trn3, "cloud")
    with pytest.raises(ValueError, match="pricing must be one of"):
        cost_inputs(trn3, "free")


def test_range_shares_name_every_driver_with_its_kind_and_sum_to_one(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "trn3-nl72x2-switched")
    r = W.serve(m, s, 8, 64, 2048, 256, "fp8", curve=False)
    shares = range_shares(r, "usd_per_million_tokens")
    assert sum(x["share"] for x in shares) == pytest.approx(1.0)
    kinds = {x["input"]: x["kind"] for x in shares}
    assert kinds["capex_per_chip"] == "assumption"
    assert all(k in {"sourced", "assumption", "sourced x assumption", "user", "fitted"}
               for k in kinds.values())
    assert [x["share"] for x in shares] == sorted((x["share"] for x in shares), reverse=True)


def test_every_system_whose_chip_has_a_rented_price_answers_pricing_cloud(kb):
    priced = {r["chip"] for r in price_rows(kb) if r["view"] == "cloud"}
    answered = 0
    for sid in W.fromkb.system_ids(kb):
        s = W.system(kb, sid)
        if s.chip in priced:
            assert cost_inputs(s, "cloud")["cloud_price"].kind == "sourced", sid
            answered += 1
    # h100, h200, b200, gb200 (x2), gb300, mi300x, mi325x, mi355x, trn1, trn2 (x2), v5e, v5p, v6e
    assert answered >= 15
    res = runner.invoke(app, ["workload", "serve", "--model", "llama-3.1-70b", "--system",
                              "mi355x-8", "--precision", "fp8", "--pricing", "cloud", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["inputs"]["cloud_price"]["kind"] == "sourced"


def test_trnkb_prices_lists_every_price_with_source_and_date(kb):
    res = runner.invoke(app, ["prices", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert len(rows) == len(kb.table("prices"))
    assert all(r["source"] and r["date"] and r["price_per_chip_usd_per_hour"] for r in rows)
    assert {r["view"] for r in rows} == {"cloud", "owner"}
    text = runner.invoke(app, ["prices", "--chip", "mi300x"])
    assert text.exit_code == 0 and "tensorwave-mi300x-on-demand" in text.output
    # a "starting at" rate is marked as a lower bound (Akash B300 $6.00/hr, 'Starting at')
    b300 = runner.invoke(app, ["prices", "--chip", "b300"])
    assert b300.exit_code == 0 and ">=6.00" in b300.output
    bad = runner.invoke(app, ["prices", "--chip", "nope"])
    assert bad.exit_code == 1 and "Traceback" not in bad.output


def test_trn2_instance_price_to_chip_hour_to_usd_per_mtok_by_hand(kb):
    # SkyPilot AWS catalog (AWS price list), trn2.48xlarge us-east-2 on-demand $85.964 per
    # instance-hour; AWS's Trn2 table: 16 Trainium2 chips per trn2.48xlarge
    row = next(r for r in price_rows(kb, "trainium2") if r["id"] == "aws-trn2-48xlarge-on-demand")
    assert row["price_usd_per_hour"] == pytest.approx(85.964)
    assert row["chips_per_instance"] == 16
    assert row["price_per_chip_usd_per_hour"] == pytest.approx(5.37275)  # 85.964 / 16
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "trn2-nl16-2d-torus")
    r = W.serve(m, s, 16, 32, 2048, 256, "fp8", pricing="cloud", curve=False)
    tok_s_chip = r.breakdown["tokens_per_s_per_chip"]
    assert r.breakdown["usd_per_chip_hour"] == pytest.approx(5.37275)
    # $/Mtok = $/chip-h / (tokens/s per chip x 3600 s/h) x 1e6
    assert r.breakdown["usd_per_million_tokens"] == pytest.approx(
        5.37275 / (tok_s_chip * 3600) * 1e6, rel=1e-9)


@pytest.mark.parametrize(("system", "chips", "usd_per_chip_hour"), [
    ("trn2-nl16-2d-torus", 16, 85.964 / 16),   # trn2.48xlarge on-demand, 16 chips
    ("tpu-v6e-pod", 8, 21.6 / 8),             # tpu-v6e-8 us-central1 on-demand, 8 chips
    ("hgx-h200-8", 8, 43.26 / 8),             # AWS Capacity Block, 8 x H200 (first H200 row)
])
def test_newly_priced_systems_answer_pricing_cloud_from_the_cli(system, chips, usd_per_chip_hour):
    res = runner.invoke(app, ["workload", "serve", "--model", "llama-3.1-70b", "--system", system,
                              "--chips", str(chips), "--precision", "fp8", "--pricing", "cloud",
                              "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["inputs"]["cloud_price"]["kind"] == "sourced"
    assert out["inputs"]["cloud_price"]["central"] == pytest.approx(usd_per_chip_hour)


def test_gb200_rack_instance_price_is_normalised_by_its_four_gpus(kb):
    # CoreWeave pricing page (transcribed 2026-09-20): GB200 NVL72 on-demand $42.00 per hour for
    # an instance of 4 GPUs -> $10.50 per GPU-hour; the page itself quotes $10.50 single-GPU
    row = next(r for r in price_rows(kb, "gb200") if r["id"] == "coreweave-gb200-nvl72-on-demand")
    assert row["chips_per_instance"] == 4
    assert row["price_per_chip_usd_per_hour"] == pytest.approx(10.50)
    gb = W.system(kb, "gb200-nvl72")
    # the cloud range spans the 3-year rental tier ($3.30) to CoreWeave on-demand ($10.50)
    assert (gb.cloud_price.lo, gb.cloud_price.hi) == pytest.approx((3.30, 10.50))
