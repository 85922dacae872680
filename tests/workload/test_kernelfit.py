"""The MoE/MLA decode layer's kernel chain and the expert all-to-all only under attention DP."""

from __future__ import annotations

import pytest
from workloadhelpers import step_values


def test_kernel_overhead_points_by_hand() -> None:
    from trnkb.workload.kernelfit import fit

    f = fit()
    # Megatron-LM #6064: one serialized graph node 1.34 us (the low end)
    assert f["low"] == pytest.approx(1.34e-6)
    # InferenceX #863: cvt_fp16_to_fp4 2.1 us + the node gap
    assert f["central"] == pytest.approx(3.44e-6)
    # the FP4 projections (8.4 us) less their weight stream: q_a 7168x1536, kv_a 7168x576,
    # o_proj (16384/4)x7168, fp4 = 0.5 B each, at B200's 8 TB/s, mean of the three
    stream = (7168 * 1536 + 7168 * 576 + 16384 // 4 * 7168) / 3 * 0.5 / 8e12
    assert stream == pytest.approx(0.92e-6, rel=0.01)
    assert f["high"] == pytest.approx(8.4e-6 - stream + 1.34e-6, rel=0.01)
    assert f["residual_low"] < 0 < f["residual_high"]


def test_moe_mla_layer_pays_its_kernel_chain_dense_keeps_layer_overhead() -> None:
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.kernelfit import kernel_inputs
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    kb = trnkb.load()
    s = W.system(kb, "hgx-b200-8")
    ds, llama = W.model(kb, "deepseek-v3"), W.model(kb, "llama-2-70b")
    assert kernel_inputs(llama) == {}
    ins = kernel_inputs(ds)
    assert ins["kernels_per_layer"].lo == 14 and ins["kernel_overhead"].kind == "fitted"
    v = {**step_values(s, "fp8"), "kernels_per_layer": 18.0, "kernel_overhead": 3.44e-6}
    sm = StepModel(ds, s, Layout(8, 1, 1), 1.0, 1.0)
    _, parts = step_time(sm, v, 4.0, 4000.0, 0.0, 0.0, parts=True)
    # 1 ms per step + 61 layers x 18 kernels x 3.44 us = 4.777 ms
    assert parts["fixed"] == pytest.approx(1e-3 + 61 * 18 * 3.44e-6)
    sm2 = StepModel(llama, s, Layout(8, 1, 1), 1.0, 1.0)
    _, parts2 = step_time(sm2, step_values(s, "fp8"), 4.0, 4000.0, 0.0, 0.0, parts=True)
    assert parts2["fixed"] == pytest.approx(1e-3 + 80 * 2e-6)  # unchanged for dense
    # the simulator hands a MoE/MLA model the kernel inputs instead of layer_overhead
    r = W.simulate(ds, s, 8, input_len=256, output_len=16, precision="fp8", concurrency=2,
                   ranged=False)
    assert "kernel_overhead" in r.inputs and "layer_overhead" not in r.inputs


def test_expert_all_to_all_only_under_attention_dp() -> None:
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    kb = trnkb.load()
    s = W.system(kb, "hgx-b200-8")
    m = W.model(kb, "deepseek-v3")
    v = step_values(s, "fp8")
    net = s.network
    kw = {"efficiency": 1.0, "step_latency": 0.0, "hop_latency": 0.0, "scaleout_latency": 0.0,
          "scaleup_scale": 1.0, "scaleout_scale": 1.0}
    # tp 8, dp 1: every rank holds every token; 2 all-reduces per layer and nothing else
    # (the second sums the experts' outputs, as vLLM's FusedMoE does under TP or EP)
    _, parts = step_time(StepModel(m, s, Layout(8, 1, 1), 1.0, 1.0), v, 1.0, 100.0, 0.0, 0.0,
                         parts=True)
    ar = net.time("all-reduce", m.d_model * 2.0, 8, 1, **kw) + 1e-5
    assert parts["comm"] == pytest.approx(2 * m.layers * ar, rel=1e-3)
    # tp 1, dp 8 (DEP): no all-reduce, a dispatch and a combine per MoE layer
    _, dep = step_time(StepModel(m, s, Layout(1, 8, 1), 1.0, 1.0), v, 1.0, 100.0, 0.0, 0.0,
                       parts=True)
    a2a = net.time("all-to-all", m.active_experts * m.d_model * 1.0, 8, 1, **kw) + 1e-5
    assert dep["comm"] == pytest.approx(2 * m.moe_layers * a2a, rel=1e-3)
