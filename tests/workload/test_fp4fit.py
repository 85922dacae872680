"""4-bit GEMM efficiency relative to 8-bit (issue 19): the fit by hand from the vLLM tables,
and training and the serving step charging it only at a 4-bit compute format."""

from __future__ import annotations

import math

import pytest

from trnkb import workload as W
from trnkb.workload.ranges import user_value

# vLLM PR 20646 ("Before", NVFP4) and PR 19566 (FP8), B200, M 16384 N 6144 K 4096, TFLOP/s;
# B200 dense peaks 9 (FP4) and 4.5 (FP8) PFLOP/s: each ratio is fp4 / 9000 / (fp8 / 4500)
_RATIOS = (3038.844961 / (2 * 2225.828721),  # 0.68264, with quantization, per-tensor
           3038.844961 / (2 * 2248.795494),  # 0.67566, with quantization, per-channel
           3904.329097 / (2 * 2544.683145),  # 0.76715, without, per-tensor
           3904.329097 / (2 * 2447.031661))  # 0.79777, without, per-channel
_F = 0.730805  # (0.68264 + 0.67566 + 0.76715 + 0.79777) / 4


def test_fit_by_hand() -> None:
    from trnkb.workload.fp4fit import factor_input, fit

    assert sum(_RATIOS) / 4 == pytest.approx(_F, rel=1e-5)
    f = fit()
    assert f["central"] == pytest.approx(_F, rel=1e-5)
    assert (f["low"], f["high"]) == pytest.approx((0.67566, 0.79777), rel=1e-4)
    # deviations -6.59%, -7.55%, +4.97%, +9.16% of the mean
    rms = math.sqrt(sum((r / _F - 1) ** 2 for r in _RATIOS) / 4)
    assert rms == pytest.approx(0.0723, abs=2e-4)
    assert f["rms_residual"] == pytest.approx(rms, rel=1e-4)
    assert f["max_residual"] == pytest.approx(0.0916, abs=2e-4)
    i = factor_input()
    assert i.kind == "fitted" and "20646" in i.basis and "19566" in i.basis


def test_amd_fit_by_hand() -> None:
    """aiter's gfx950 tables: MXFP4 per-1x32 against FP8 block-scale, same shapes, M >= 4096."""
    import statistics

    from trnkb.workload.fp4fit import AMD_POINTS, amd_fit, factor_input

    # two rows as the CSVs at ROCm/aiter e4048607 record them (tflops column)
    assert (16384, 7168, 16384, 5468.86, 2286.68) in AMD_POINTS
    assert (4096, 4608, 7168, 2063.05, 1562.38) in AMD_POINTS
    assert 5468.86 / 10000 / (2286.68 / 5000) == pytest.approx(1.1958, abs=1e-4)
    assert 2063.05 / 10000 / (1562.38 / 5000) == pytest.approx(0.6602, abs=1e-4)
    assert len(AMD_POINTS) == 61 and all(m >= 4096 for m, *_ in AMD_POINTS)
    ratios = [f4 / 2 / f8 for *_, f4, f8 in AMD_POINTS]
    f = amd_fit()
    assert f["central"] == pytest.approx(statistics.median(ratios))
    q = statistics.quantiles(ratios, n=4, method="inclusive")
    assert (f["low"], f["high"]) == pytest.approx((q[0], q[2]))
    assert f["low"] < 1 < f["central"]  # aiter's MXFP4 is not behind its FP8, unlike CUTLASS
    i = factor_input("AMD")
    assert (i.lo, i.mid, i.hi) == pytest.approx((q[0], statistics.median(ratios), q[2]))
    # a vendor with no operator data: NVIDIA's low end and central, AMD's central the high
    o = factor_input("AWS")
    assert (o.lo, o.mid, o.hi) == pytest.approx((0.67566, _F, f["central"]), rel=1e-4)


_KW = dict(seq_len=8192, batch_tokens=1024 * 8192, allow_unfit=True, include_attention=False)


def test_training_charges_fp4_gemms_at_the_fitted_fraction(kb) -> None:
    """Llama 2 70B on 64 GB300, MFU 0.5, no attention: 6 N per token at 15 PFLOP/s (NVFP4) x
    0.5 x 0.7308; fp8 at 5 PFLOP/s x 0.5 with no factor."""
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "gb300-nvl72")
    n = 68_714_504_192  # parameters without the input embedding (test_mixed_precision.py)
    mfu = {"mfu": user_value("mfu", 0.5, ""),  # kernel floors off: the FLOPs' arithmetic
           "kernel_overhead": user_value("kernel_overhead", 0.0, "s")}
    r = W.train(m, s, 64, "tp=8,zero=1", 1e10, "fp4", assumptions=mfu, **_KW)
    assert r.inputs["fp4_gemm_efficiency"].mid == pytest.approx(_F, rel=1e-5)
    want = 1024 * 8192 * 6 * n / (64 * 15e15 * 0.5 * _F)
    assert r.breakdown["compute"] == pytest.approx(want, rel=1e-5)
    r8 = W.train(m, s, 64, "tp=8,zero=1", 1e10, "fp8", assumptions=mfu, **_KW)
    assert "fp4_gemm_efficiency" not in r8.inputs
    assert r8.breakdown["compute"] == pytest.approx(1024 * 8192 * 6 * n / (64 * 5e15 * 0.5),
                                                    rel=1e-5)
    # the factor is an ordinary input: set to 1, fp4 GEMMs run at the bare fp4 peak
    one = W.train(m, s, 64, "tp=8,zero=1", 1e10, "fp4",
                  assumptions={**mfu, "fp4_gemm_efficiency": 1.0}, **_KW)
    assert one.breakdown["compute"] == pytest.approx(want * _F, rel=1e-5)
    # its range widens the result's: the slow end at 0.6757
    assert r["step_time"].hi >= r["step_time"].mid


def test_serving_step_scales_dense_gemms_not_a_fused_moe_fit(kb) -> None:
    from trnkb.workload.siminputs import sim_inputs
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    s = W.system(kb, "hgx-b200-8")
    llama = W.model(kb, "llama-2-70b")
    sm = StepModel(llama, s, Layout(8, 1, 1), 0.5, 1.0)
    ins, _ = sim_inputs(llama, s, "fp4", "fp8", "owner", None)
    v = {**{k: i.mid for k, i in ins.items()}, "gemm_efficiency": 0.5, "gemm_m_half": 100.0,
         "fp4_gemm_efficiency": 1.0}
    _, base = step_time(sm, v, 0.0, 0.0, 8192.0, 0.0, parts=True)
    _, slow = step_time(sm, {**v, "fp4_gemm_efficiency": 0.5}, 0.0, 0.0, 8192.0, 0.0,
                        parts=True)
    # 8,192 prefill rows: compute-bound, so the dense GEMMs take twice as long; by hand:
    # 2 x dense params / 8 x (8192 + 100) rows / (9 PFLOP/s x 0.5 x 0.5)
    p = llama.params()
    dense = p["total"] - p["routed_experts"] - p["embedding"]
    assert slow["dense"] == pytest.approx(2 * dense / 8 * 8292 / (9e15 * 0.25), rel=1e-6)
    assert slow["dense"] == pytest.approx(2 * base["dense"], rel=1e-9)
    assert slow["attention"] == base["attention"]
    # routed experts with their own fit (rocmfit, measured at fp4) keep it
    ds = W.model(kb, "deepseek-v3")
    smd = StepModel(ds, s, Layout(8, 1, 1), 0.5, 1.0)
    vd = {**v, "expert_gemm_efficiency": 0.2, "expert_gemm_m_half": 50.0}
    _, a = step_time(smd, vd, 0.0, 0.0, 8192.0, 0.0, parts=True)
    _, b = step_time(smd, {**vd, "fp4_gemm_efficiency": 0.5}, 0.0, 0.0, 8192.0, 0.0,
                     parts=True)
    assert b["experts"] == a["experts"] and b["dense"] > a["dense"]


def test_sim_inputs_add_the_factor_only_at_a_4bit_format(kb) -> None:
    from trnkb.workload.siminputs import sim_inputs

    m = W.model(kb, "llama-2-70b")
    from trnkb.workload.fp4fit import amd_fit

    for sys_id, want in (("hgx-b200-8", _F), ("mi355x-8", amd_fit()["central"])):
        s = W.system(kb, sys_id)
        ins4, _ = sim_inputs(m, s, "fp4", "fp8", "owner", None)
        assert ins4["fp4_gemm_efficiency"].mid == pytest.approx(want, rel=1e-5)
        ins8, _ = sim_inputs(m, s, "fp8", "fp8", "owner", None)
        assert "fp4_gemm_efficiency" not in ins8
