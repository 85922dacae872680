"""Training-step costs the MFU does not scale (stepshape): GEMM rows, kernel floors, LoRA."""

import pytest

from trnkb import workload as W
from trnkb.workload.gemmfit import cuda_fit
from trnkb.workload.lora import LoRA
from trnkb.workload.plan import Plan, memory_per_chip
from trnkb.workload.ranges import user_value
from trnkb.workload.stepshape import (
    adapter_bytes_per_token,
    adapter_kernels_per_layer,
    gemm_rows_factor,
    kernel_seconds,
    lora_compute_scale,
    shape_inputs,
)
from trnkb.workload.training import central_values, step_breakdown


def test_gemm_rows_factor_is_one_at_the_reference_and_grows_below_it():
    assert gemm_rows_factor(8192, 296.0) == pytest.approx(1.0)
    # 8,192-token sequence over cp=8: 1,024 rows; (1 + 296/1024) / (1 + 296/8192)
    assert gemm_rows_factor(1024, 296.0) == pytest.approx(1.2890625 / 1.0361328125)
    assert gemm_rows_factor(1024, 0.0) == 1.0


def test_kernel_floors_are_kernels_times_layers_times_microbatches():
    assert kernel_seconds(45, 80, 1, 3.44e-6) == pytest.approx(45 * 80 * 3.44e-6)  # 12.4 ms
    assert kernel_seconds(45, 10, 8, 2e-6) == pytest.approx(45 * 10 * 8 * 2e-6)
    assert kernel_seconds(45, 10, 0.5, 2e-6) == pytest.approx(45 * 10 * 2e-6)  # at least one


def test_llama2_70b_adapters_traffic_and_kernels(kb):
    m = W.model(kb, "llama-2-70b")
    # qkv: d_in 8192, d_out (64 + 2 x 8) x 128 = 10240; o: 8192 -> 8192; (8 d_in + 6 d_out) x 2 B
    qkv = (8 * 8192 + 6 * 10240) * 2
    o = (8 * 8192 + 6 * 8192) * 2
    assert adapter_bytes_per_token(m, ("qkv", "o")) == pytest.approx((qkv + o) * 80)
    assert adapter_kernels_per_layer(m, ("qkv", "o")) == pytest.approx(20.0)


def test_lora_keeps_the_full_steps_non_gemm_work():
    # N = 1, LoRA count 4, MFU 0.5: full step (4 + 2) / 0.5 = 12, its wgrad 2 / 1.0 = 2 -> 10
    assert lora_compute_scale(1.0, 4.0, 0.5, 1.0, 0.0) == pytest.approx(10 / 8)
    # GEMMs no faster than the step's average: nothing more than 4N / MFU
    assert lora_compute_scale(1.0, 4.0, 0.5, 0.4, 0.0) == pytest.approx(1.0)
    # efficiency read at the reference rows: 0.8 x 8192 / (8192 + 8192) = 0.4 -> 1.0
    assert lora_compute_scale(1.0, 4.0, 0.2, 0.8, 8192.0) == pytest.approx(
        ((4 + 2) / 0.2 - 2 / 0.4) / (4 / 0.2))


def test_rocm_mfu_scales_by_amds_gemm_efficiency_over_cudas():
    # MI300X fp8: MAF 1273 of 2614.9 TFLOP/s x TAF/MAF of MI325X 1143/1408.06 (rocm-blogs)
    rocm = 1273 / 2614.9 * 1143 / 1408.06
    got = shape_inputs("AMD", "mi300x", "fp8")["mfu_stack_ratio"]
    assert got.mid == pytest.approx(rocm / cuda_fit("cutlass")["gemm_efficiency"])
    assert 0.7 < got.mid < 0.8
    assert "mfu_stack_ratio" not in shape_inputs("NVIDIA", "b200", "fp8")


def test_fp8_lora_holds_the_frozen_base_at_one_byte(kb):
    m = W.model(kb, "llama-2-70b")
    mem = memory_per_chip(m, Plan(tp=2), "fp8-lora", 8192, 1)
    assert mem["weights"] == pytest.approx(m.params()["total"] / 2 * 1.0)
    assert mem["gradients"] == mem["optimizer"] == 0.0


def _lora_step(kb, plan: str, **over):
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "hgx-b200-8")
    v = {k: i.mid for k, i in central_values(s, "fp8").items()}
    v.update(over)
    lora = LoRA(16, ("qkv", "o"))
    from trnkb.workload.lora import adapter_params, lora_flops_per_token

    return m, v, step_breakdown(
        m, s, Plan.parse(plan, 8), v, seq_len=8192, batch_tokens=8 * 8192,
        recipe="fp8-lora", weight_bytes=1.0, flops_per_token=lora_flops_per_token(m, lora, 8192),
        trainable=float(adapter_params(m, lora)), lora_targets=lora.targets)


def test_lora_step_charges_floors_and_adapter_traffic(kb):
    m, v, b = _lora_step(kb, "tp=1,zero=1")
    # one microbatch of 80 layers: (45 - 4 wgrad GEMMs + 20 adapter kernels) x 3.44 us
    assert b["kernel_floors"] == pytest.approx((45 - 4 + 20) * 80 * v["kernel_overhead"])
    per_token = adapter_bytes_per_token(m, ("qkv", "o"))
    assert b["adapter_kernels"] == pytest.approx(per_token * 8192 / v["hbm_bandwidth"])
    assert b["gemm_rows_factor"] == pytest.approx(1.0)


def test_zero3_lora_gathers_its_frozen_base(kb):
    m, v, z1 = _lora_step(kb, "tp=1,zero=1")
    _, _, z3 = _lora_step(kb, "tp=1,zero=3")
    # one microbatch: forward and backward all-gather the 1-byte base shards over 8 chips;
    # no faster than its (8 - 1) / 8 share over one chip's scale-up bandwidth
    base = m.params()["total"] * 1.0
    floor = 2 * base * 7 / 8 / v["scaleup_bandwidth"]
    assert z3["dp_comm"] - z1["dp_comm"] >= floor
    assert z1["dp_comm"] < 0.01 * floor  # ZeRO-1: only the adapters' gradients move


def test_book_inputs_turn_the_new_costs_off(kb):
    m, v, b = _lora_step(kb, "tp=1,cp=8", kernel_overhead=0.0, gemm_m_half=0.0)
    assert b["kernel_floors"] == 0.0 and b["gemm_rows_factor"] == 1.0
    r = W.train(W.model(kb, "llama-2-70b"), W.system(kb, "hgx-b200-8"), 8, "tp=1,cp=8", 1e9,
                "fp8", assumptions={"kernel_overhead": user_value("kernel_overhead", 0.0, "s")},
                allow_unfit=True, seq_len=8192, batch_tokens=8192)
    assert r.breakdown["kernel_floors"] == 0.0


def test_all_to_all_context_parallelism_moves_qkv_and_o_unhidden(kb):
    from trnkb.workload.stepshape import a2a_cp_bytes

    m = W.model(kb, "llama-2-70b")
    # Q, K, V: (64 + 2 x 8) x 128 x 2 B; O: 64 x 128 x 2 B, per token and layer
    assert a2a_cp_bytes(m) == (80 * 128 * 2, 64 * 128 * 2)
    s = W.system(kb, "gb200-nvl72")
    v = {k: i.mid for k, i in central_values(s, "fp8").items()}
    v["cp_overlap"] = 1.0  # the ring's exchange then hides entirely; the all-to-all cannot
    kw = dict(seq_len=8192, batch_tokens=8 * 8192, recipe="bf16-adam", weight_bytes=2.0)
    plan = Plan.parse("tp=1,cp=8", 64)
    ring = step_breakdown(m, s, plan, v, **kw)
    a2a = step_breakdown(m, s, plan, v, cp_comm="a2a", **kw)
    assert ring["cp_exposed"] == 0.0 < ring["cp_comm"]
    assert a2a["cp_exposed"] == a2a["cp_comm"] > 0.0
    # 1,024 local tokens x 80 layers x 2 directions x 36,864 B, 7/8 of it leaving each chip:
    # no faster than that over one chip's scale-up bandwidth
    assert a2a["cp_comm"] >= 1024 * 80 * 2 * 36864 * 7 / 8 / v["scaleup_bandwidth"]
    with pytest.raises(ValueError, match="cp_comm"):
        W.train(m, s, 64, "tp=1,cp=8", 1e9, "fp8", cp_comm="ulysses")
