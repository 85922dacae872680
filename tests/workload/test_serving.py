"""Serving: KV capacity, rooflines, the curve over batch, cost."""

import pytest

from trnkb import workload as W
from trnkb.calc.tco import tco
from trnkb.workload.cost import usd_per_chip_hour
from trnkb.workload.ranges import user_value


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
    # one token's norms and residuals (10 x 8192 per layer, on every TP rank) and SwiGLU
    # (3 x 28672 per layer, split over the 8 ranks), 80 layers, bf16, at the central fraction
    elementwise = 2 * (10 * 8192 * 80 + 3 * 28672 * 80 / 8) * v["elementwise_fraction"]
    assert r.breakdown["decode_compute_or_memory"] == pytest.approx(
        (weights + r.breakdown["decode_kv_read"] + elementwise)
        / (v["hbm_bandwidth"] * v["hbm_efficiency"])
    )


def test_throughput_latency_curve_trades_latency_for_throughput(kb):
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "gb300-nvl72")
    curve = W.serve(m, s, 72, 64, 2048, 512, "fp8").extra["curve"]
    tpot = [c["tpot_ms"] for c in curve]
    thr = [c["tokens_per_s_per_chip"] for c in curve]
    assert tpot == sorted(tpot) and thr == sorted(thr) and len(curve) > 5


def test_moe_decode_reads_only_touched_experts(kb):
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "gb300-nvl72")
    # batch 9: one sequence per attention replica (72 chips = tp 8 x 9)
    one = W.serve(m, s, 72, 9, 1024, 16, "fp8", curve=False)
    many = W.serve(m, s, 72, 4096, 1024, 16, "fp8", curve=False)
    p = m.params()
    # every expert touched: the local dense shard plus 1/72 of all routed experts (fp8)
    # (the latent down-projections, 61 x 7168 x 2112, whole on every tensor-parallel rank)
    rep = 61 * 7168 * 2112
    tp = one.settings["tp"]
    bound = (p["total"] - p["routed_experts"] - p["embedding"] - rep) / tp + rep + p[
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
    with pytest.raises(ValueError, match="no cloud price for trainium3"):
        W.serve(m, W.system(kb, "trn3-nl72x2-switched"), 8, 32, 2048, 128, "fp8",
                pricing="cloud")


# Llama 2 70B by hand (d 8192, 80 layers, 64 heads of 128, 8 KV heads, FFN 28672, vocab
# 32000, untied): per layer 150,994,944 attention + 704,643,072 FFN + 16,384 norm weights,
# so 68,452,352,000 in the layers, + 8,192 final norm + 262,144,000 unembedding.
_L2_MATMUL_PARAMS = 68_452_352_000 + 8_192 + 262_144_000
_L2_KV_FP8_PER_TOKEN = 80 * 2 * 8 * 128  # bytes, one byte per element


def test_four_bit_weights_keep_an_fp8_kv_cache(kb):
    """TensorRT-LLM serves its NVFP4 Llama 3.3 70B with ``kv_cache_config: dtype: fp8``."""
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "hgx-b200-8")
    r = W.serve(m, s, 1, 8, 128, 128, "fp4", curve=False)
    assert r.settings["kv_precision"] == "fp8"
    assert r.breakdown["kv_bytes_per_token"] == _L2_KV_FP8_PER_TOKEN
    four = W.serve(m, s, 1, 8, 128, 128, "fp4", kv_precision="fp4", curve=False)
    assert four.breakdown["kv_bytes_per_token"] == _L2_KV_FP8_PER_TOKEN / 2
    assert W.serve(m, s, 1, 8, 128, 128, "bf16", curve=False).settings["kv_precision"] == "bf16"


def test_attention_time_adds_to_compute_bound_matmuls(kb):
    """The scaling book's general step time: max(matmul FLOPs, weights) + KV read.

    Batch 512 at 4,097 tokens of context on one chip of 1 PFLOP/s and 4 TB/s, at full
    efficiency: matmuls 512 x 2 x 68.71e9 FLOP = 70.4 ms (weights 68.7 GB fp8 = 17.2 ms);
    KV 512 x 4,097 x 163,840 B = 343.7 GB = 85.9 ms (its FLOPs, 5.5 ms, hide under it).
    A single roofline over the step would give max(75.9, 103.1) = 103.1 ms instead.
    """
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "hgx-b200-8")
    fixed = {"peak_flops": 1e15, "hbm_bandwidth": 4e12, "compute_efficiency": 1.0,
             "hbm_efficiency": 1.0, "elementwise_fraction": 0.0}
    r = W.serve(m, s, 1, 512, 4096, 2, "fp8", curve=False,
                assumptions={k: user_value(k, x, "") for k, x in fixed.items()})
    matmuls = max(512 * 2 * _L2_MATMUL_PARAMS / 1e15, _L2_MATMUL_PARAMS / 4e12)
    attention_flops = 512 * 2 * 64 * (128 + 128) * 80 * 4097
    attention = max(attention_flops / 1e15, 512 * 4097 * _L2_KV_FP8_PER_TOKEN / 4e12)
    assert r.breakdown["tpot"] == pytest.approx(matmuls + attention, rel=1e-9)
    assert r.breakdown["tpot"] == pytest.approx(0.1563, rel=1e-3)


def test_offline_throughput_charges_prefill_of_the_whole_batch(kb):
    """MLPerf-style offline run, Llama 2 70B fp4 on one GPU, at fixed inputs (1e16 FLOP/s,
    8e12 B/s, every efficiency 1): by hand, batch 512, 256 in, 294 out.

    decode at 256 + 294/2 = 403 tokens: matmuls max(512 x 2P / 1e16, 0.5 P / 8e12) plus
    attention max(512 x 2 x 64 x 256 x 80 x 403 / 1e16, 512 x 403 x 163,840 B (fp8 KV by
    default) / 8e12); prefill of 512 x 256 tokens at 2P + 2 x 64 x 256 x 80 x 128 FLOP each;
    tokens/s = 512 x 294 / (294 x TPOT + prefill).
    """
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "gb200-nvl72")
    fixed = {"peak_flops": 1e16, "hbm_bandwidth": 8e12, "compute_efficiency": 1.0,
             "hbm_efficiency": 1.0, "prefill_mfu": 1.0, "elementwise_fraction": 0.0}
    r = W.serve(m, s, 1, 512, 256, 294, "fp4", curve=False,
                assumptions={k: user_value(k, x, "") for k, x in fixed.items()})
    p = _L2_MATMUL_PARAMS
    tpot = (max(512 * 2 * p / 1e16, 0.5 * p / 8e12)
            + max(512 * 2 * 64 * 256 * 80 * 403 / 1e16, 512 * 403 * _L2_KV_FP8_PER_TOKEN / 8e12))
    prefill = max(512 * 256 * (2 * p + 2 * 64 * 256 * 80 * 128) / 1e16, 0.5 * p / 8e12)
    assert r.breakdown["tpot"] == pytest.approx(tpot, rel=1e-9)
    assert r.breakdown["tokens_per_s_system"] == pytest.approx(512 * 294 / (294 * tpot + prefill),
                                                               rel=1e-9)
    assert r.breakdown["tokens_per_s_system"] == pytest.approx(29_419, rel=1e-3)


def test_elementwise_traffic_by_hand(kb):
    """Norms and residuals 10 d, gated activation 3 f elements per token and layer, bf16.

    Llama 2 70B, one token on one chip: 2 x (10 x 8192 + 3 x 28672) x 80 = 26,869,760 B.
    Mixtral 8x7B, 8 tokens on 8 chips with attention data parallel 8: norms 2 x 10 x 4096 x 32
    per chip for its one token, the 2 active experts' 3 x 14336 each spread over the 8 chips:
    2 x (10 x 4096 x 32 + 8 x 3 x 2 x 14336 x 32 / 8) = 8,126,464 B.
    """
    from trnkb.workload.serving import elementwise_bytes

    assert elementwise_bytes(W.model(kb, "llama-2-70b"), 1, 1, 1) == 26_869_760
    assert elementwise_bytes(W.model(kb, "mixtral-8x7b"), 8, 8, 8) == 8_126_464
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "hgx-b200-8")
    half = W.serve(m, s, 1, 256, 128, 128, "fp8", curve=False)
    none = W.serve(m, s, 1, 256, 128, 128, "fp8", curve=False,
                   assumptions={"elementwise_fraction": user_value("elementwise_fraction", 0.0,
                                                                   "")})
    v = {k: i.mid for k, i in half.inputs.items()}
    extra = 0.5 * 256 * 26_869_760 / (v["hbm_bandwidth"] * v["hbm_efficiency"])
    assert half.breakdown["tpot"] - none.breakdown["tpot"] == pytest.approx(extra, rel=1e-9)


def test_more_attention_replicas_than_sequences_are_refused(kb):
    # Llama 3.1 8B has 32 heads: 100,000 chips = 32 (tp, 2^5 divides both) x 3,125 replicas,
    # 3,125 > batch 64, so 3,061 replicas would be idle
    m, s = W.model(kb, "llama-3.1-8b"), W.system(kb, "gb200-nvl72")
    with pytest.raises(ValueError, match="3125 attention replicas for a batch of 64"):
        W.serve(m, s, 100_000, 64, 2048, 512)
    # 64 x 32 = 2,048 chips: one sequence per replica is accepted, and the replica spans
    # ceil(2048 / 72) = 29 scale-up domains, which the result says
    r = W.serve(m, s, 2048, 64, 2048, 512, curve=False)
    assert r.settings["attention_dp"] == 64
    assert any("spans 29 scale-up domains" in n for n in r.notes)


def test_the_cli_refuses_idle_attention_replicas():
    from typer.testing import CliRunner

    from trnkb.cli import app

    res = CliRunner().invoke(app, ["workload", "serve", "--model", "llama-3-1-8b", "--system",
                                   "gb200-nvl72", "--chips", "100000"])
    assert res.exit_code == 1
    assert "error:" in res.output and "attention replicas" in res.output


def test_closed_form_mla_decode_counts_absorbed_attention() -> None:
    import trnkb
    from trnkb import workload as W

    kb = trnkb.load()
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "gb300-nvl72")
    r = W.serve(m, s, 8, 64, 2048, 512, "fp8", curve=False)
    ctx = 2048 + 512 / 2
    # per chip: 64 tokens x (2 x active + 2 x 128 x (512 + 64 + 512) x 61 x context) / 8,
    # plus the latent down-projections (61 x 7168 x 2112) every tp rank runs whole: 7/8 more
    by_hand = 64 * (2 * m.active_params(False) + 2 * 128 * 1088 * 61 * ctx) / 8 \
        + 64 * 2 * 61 * 7168 * 2112 * (1 - 1 / 8)
    assert r.breakdown["decode_flops"] == pytest.approx(by_hand)


def test_closed_form_charges_each_collective_its_stack_latency(kb):
    """Llama 2 70B at tp=8 decodes with 2 all-reduces per layer (160): adding 100 us to
    ``collective_latency`` (no per-rank term, nothing hidden: serve_overlap 0) adds
    160 x 100 us = 16 ms to a decode step, by hand."""
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "trn2-nl16-2d-torus")
    over = {"serve_overlap": user_value("serve_overlap", 0.0, ""),
            "collective_latency_per_rank": user_value("collective_latency_per_rank", 0.0, "s")}

    def tpot(lat: float) -> float:
        a = over | {"collective_latency": user_value("collective_latency", lat, "s")}
        return W.serve(m, s, 8, 1, 128, 128, "bf16", tp=8, curve=False,
                       assumptions=a).breakdown["tpot"]

    assert tpot(1e-4) - tpot(0.0) == pytest.approx(160 * 1e-4, rel=1e-9)
    # the default is the Neuron nccom-test fit (about 58 us at 2 ranks), not 2 us
    r = W.serve(m, s, 8, 1, 128, 128, "bf16", tp=8, curve=False)
    assert r.inputs["collective_latency"].kind == "fitted"


def test_closed_form_moe_all_to_all_only_under_attention_dp(kb):
    """DeepSeek-V3 (61 layers, 58 MoE): at tp=8 on 8 chips (dp 1) every rank holds every
    token and the second all-reduce sums the experts, so 100 us more per collective adds
    2 x 61 x 100 us = 12.2 ms (no all-to-all, as the simulator's stepcost); at tp=8 x dp=9
    (72 chips) the 2 x 58 expert all-to-alls join: (122 + 116) x 100 us = 23.8 ms, by hand."""
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "gb300-nvl72")
    over = {"serve_overlap": user_value("serve_overlap", 0.0, ""),
            "collective_latency_per_rank": user_value("collective_latency_per_rank", 0.0, "s")}

    def tpot(chips: int, batch: int, lat: float) -> float:
        a = over | {"collective_latency": user_value("collective_latency", lat, "s")}
        return W.serve(m, s, chips, batch, 128, 128, "fp8", tp=8, curve=False,
                       assumptions=a).breakdown["tpot"]

    assert tpot(8, 1, 1e-4) - tpot(8, 1, 0.0) == pytest.approx(122 * 1e-4, rel=1e-9)
    assert tpot(72, 9, 1e-4) - tpot(72, 9, 0.0) == pytest.approx(238 * 1e-4, rel=1e-9)
    # the simulator charges the same collectives at dp 1: its comm has no all-to-all
    from trnkb.workload.stepcost import Layout, StepModel, step_fn

    r = W.serve(m, s, 8, 1, 128, 128, "fp8", tp=8, curve=False, assumptions=over)
    v = {k: i.mid for k, i in r.inputs.items()} | {
        "kernels_per_layer": 0.0, "kernel_overhead": 0.0, "gemm_efficiency": 1.0,
        "gemm_m_half": 0.0, "moe_imbalance": 1.0, "attention_efficiency": 1.0,
        "step_overhead": 0.0}
    _, parts = step_fn(StepModel(m, s, Layout(8), 1.0, 1.0), v)(1.0, 192.0, 0.0, 0.0, True)
    assert parts["comm"] == pytest.approx(r.breakdown["decode_comm"], rel=1e-9)
