"""Serving: KV capacity, rooflines, the curve over batch, cost."""

import pytest

from trnkb import workload as W
from trnkb.calc.tco import tco
from trnkb.workload.cost import usd_per_chip_hour


def test_kv_capacity_limits_the_batch(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "gb300-nvl72")
    r = W.serve(m, s, 8, 64, 2048, 512, "fp8", curve=False)
    v = {k: i.mid for k, i in r.inputs.items()}
    free = v["hbm_capacity"] * (1 - v["workspace_fraction"]) - m.total_params * 1.0 / 8
    per_seq = 2 * 8 * 128 * 80 * 2560 / 8  # fp8 KV, 8 KV heads over tp=8
    assert r.breakdown["max_batch"] == int(free // per_seq)
    big = W.serve(m, s, 8, 10**6, 2048, 512, "fp8", curve=False)
    assert not big.breakdown["fits"] and "exceeds the KV-cache capacity" in big.notes[-1]


def test_decode_is_memory_bound_at_small_batch(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "gb300-nvl72")
    r = W.serve(m, s, 8, 1, 2048, 512, "fp8", curve=False)
    v = {k: i.mid for k, i in r.inputs.items()}
    weights = (m.total_params - m.params()["embedding"]) / 8
    assert r.breakdown["decode_compute_or_memory"] == pytest.approx(
        (weights + r.breakdown["decode_kv_read"]) / (v["hbm_bandwidth"] * v["hbm_efficiency"])
    )


def test_throughput_latency_curve_trades_latency_for_throughput(kb):
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "gb300-nvl72")
    curve = W.serve(m, s, 72, 64, 2048, 512, "fp8").extra["curve"]
    tpot = [c["tpot_ms"] for c in curve]
    thr = [c["tokens_per_s_per_chip"] for c in curve]
    assert tpot == sorted(tpot) and thr == sorted(thr) and len(curve) > 5


def test_moe_decode_reads_only_touched_experts(kb):
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "gb300-nvl72")
    one = W.serve(m, s, 72, 1, 1024, 16, "fp8", curve=False)
    many = W.serve(m, s, 72, 4096, 1024, 16, "fp8", curve=False)
    p = m.params()
    # every expert touched: the local dense shard plus 1/72 of all routed experts (fp8)
    bound = (p["total"] - p["routed_experts"] - p["embedding"]) / one.settings["tp"] + p[
        "routed_experts"
    ] / 72
    assert one.breakdown["decode_weights_read"] < many.breakdown["decode_weights_read"]
    assert many.breakdown["decode_weights_read"] == pytest.approx(bound, rel=1e-6)


def test_tco_per_chip_hour_equals_the_calculator(kb):
    v = {
        "capex_per_chip": 40000.0,
        "depreciation_years": 5.0,
        "cost_of_capital": 0.08,
        "chip_power": 1500.0,
        "pue": 1.3,
        "power_price": 0.08,
        "utilisation": 0.8,
        "opex_fraction": 0.05,
    }
    ref = tco(
        "40000 USD", "5 year", 0.08, "1500 W", "0.08 USD/kWh", 1.3, 0.8, opex_per_year="2000 USD"
    )
    assert usd_per_chip_hour(v) == pytest.approx(ref.value.to("USD/hour").magnitude, rel=1e-3)


def test_bad_serving_arguments_are_refused(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "gb300-nvl72")
    with pytest.raises(ValueError, match="batch"):
        W.serve(m, s, 8, 0, 2048, 512)
    with pytest.raises(ValueError, match="precision"):
        W.serve(m, s, 8, 1, 2048, 512, "fp3")


def test_cloud_pricing_uses_the_sourced_price_per_chip_hour(kb):
    m = W.model(kb, "llama-3.1-70b")
    s = W.system(kb, "tpu-v5e-pod")
    assert s.cloud_price.mid == pytest.approx(1.2) and "scaling-book" in s.cloud_price.sources
    r = W.serve(m, s, 8, 32, 2048, 128, "int8", pricing="cloud", curve=False)
    assert r.breakdown["usd_per_chip_hour"] == pytest.approx(1.2)
    # p5.48xlarge: 98.32 USD/h for 8 GPUs (prices table)
    assert W.system(kb, "hgx-h100-8").cloud_price.mid == pytest.approx(98.32 / 8)
    with pytest.raises(ValueError, match="no cloud price for gb300"):
        W.serve(m, W.system(kb, "gb300-nvl72"), 8, 32, 2048, 128, "fp8", pricing="cloud")
