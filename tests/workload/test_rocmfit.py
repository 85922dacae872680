"""rocmfit: aiter's tuned decode-GEMM times as a floor plus a streaming rate, per AMD arch."""

import pytest

from trnkb.workload.rocmfit import POINTS, fit, rocm_decode_inputs


def _by_hand(gfx: str) -> tuple[float, float]:
    """Least squares on relative time of t = a + x c (x = N K bytes), by the 2 x 2 normal
    equations solved with Cramer's rule: returns (a seconds, 1 / c bytes per second)."""
    rows = [(n * k, us * 1e-6) for g, n, k, us, _ in POINTS if g == gfx]
    s11 = sum(1 / y**2 for _, y in rows)
    s12 = sum(x / y**2 for x, y in rows)
    s22 = sum(x * x / y**2 for x, y in rows)
    b1 = sum(1 / y for _, y in rows)
    b2 = sum(x / y for x, y in rows)
    det = s11 * s22 - s12 * s12
    a = (b1 * s22 - s12 * b2) / det
    c = (s11 * b2 - s12 * b1) / det
    return a, 1 / c


@pytest.mark.parametrize("gfx", ["gfx942", "gfx950"])
def test_fit_is_the_least_squares_line(gfx: str) -> None:
    a, rate = _by_hand(gfx)
    f = fit(gfx)
    assert f["kernel_overhead"] == pytest.approx(a, rel=1e-6)
    assert f["rate"] == pytest.approx(rate, rel=1e-6)
    # a floor of a few microseconds and a rate below the HBM's (5.3 / 8 TB/s)
    assert 2e-6 < a < 6e-6 and rate < {"gfx942": 5.3e12, "gfx950": 8e12}[gfx]


def test_hbm_efficiency_is_the_rate_over_the_chips_bandwidth() -> None:
    _, rate = _by_hand("gfx942")
    ins = rocm_decode_inputs("mi300x", 5.3e12)
    assert ins["hbm_efficiency"].mid == pytest.approx(rate / 5.3e12, rel=1e-6)
    assert ins["hbm_efficiency"].kind == "fitted" and "kernel_overhead" not in ins
    assert rocm_decode_inputs("h100", 3.35e12) == {}


def test_the_simulator_takes_them_on_amd_only() -> None:
    import trnkb
    from trnkb import workload as W

    kb = trnkb.load()
    m = W.model(kb, "deepseek-v3")
    kw = {"input_len": 64, "output_len": 4, "precision": "fp8", "tp": 8, "concurrency": 1,
          "requests": 2, "ranged": False}
    amd = W.simulate(m, W.system(kb, "mi355x-8"), 8, **kw)
    assert amd.inputs["kernel_overhead"].mid == pytest.approx(_by_hand("gfx950")[0], rel=1e-6)
    assert "rocmfit" in amd.inputs["hbm_efficiency"].basis
    nv = W.simulate(m, W.system(kb, "hgx-h200-8"), 8, **kw)
    assert "rocmfit" not in nv.inputs["hbm_efficiency"].basis


@pytest.mark.parametrize("key", [("gfx942", "fp8", None), ("gfx950", "fp8", 512),
                                 ("gfx950", "fp4", 256), ("gfx950", "fp4", None)])
def test_moe_fit_is_the_least_squares_rate(key: tuple[str, str, int | None]) -> None:
    """1 / rate = a + b / M, least squares on relative error: minimise sum (r a + r b / M -
    1)^2 over the rows (M = tokens x 9 / experts, r = FLOPs / time), solved by hand."""
    from trnkb.workload.rocmfit import MOE_POINTS, moe_fit

    gfx, fmt, inter = key
    rows = [(t * k / e, t * k * 6 * 7168 * i / (us * 1e-6))
            for g, f, i, e, k, t, us in MOE_POINTS
            if g == gfx and f == fmt and inter in (None, i)]
    s11 = sum(r * r for _, r in rows)
    s12 = sum(r * r / m for m, r in rows)
    s22 = sum(r * r / m / m for m, r in rows)
    b1 = sum(r for _, r in rows)
    b2 = sum(r / m for m, r in rows)
    det = s11 * s22 - s12 * s12
    a = (b1 * s22 - s12 * b2) / det
    b = (s11 * b2 - s12 * b1) / det
    f = moe_fit(gfx, fmt, inter)
    assert f["rate"] == pytest.approx(1 / a, rel=1e-6)
    assert f["m_half"] == pytest.approx(b / a, rel=1e-6)
    # the form holds on one slice's rows; mixing slices (fp4 256 and 512) it does not
    assert f["rms_residual"] < (0.05 if inter or gfx == "gfx942" else 0.2)


def test_routed_experts_take_their_own_fit_by_hand() -> None:
    """Mixtral on 4 chips (2 experts each), 256 tokens per group over dp 2: with
    expert_gemm_efficiency 0.2 and expert_gemm_m_half 40 (dense GEMMs at 0.5 and 100), the
    busiest chip's expert time is 2 x params x 32 layers x (384 rows + touched x 40) / (peak
    x 0.2), or the touched experts' weight stream, whichever is longer."""
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    kb = trnkb.load()
    m, s = W.model(kb, "mixtral-8x7b"), W.system(kb, "gb300-nvl72")
    v = {**{k: i.mid for k, i in s.inputs("fp8").items()}, "hbm_efficiency": 0.8,
         "gemm_efficiency": 0.5, "gemm_m_half": 100.0, "moe_imbalance": 1.5,
         "attention_efficiency": 0.5, "elementwise_fraction": 0.0, "collective_efficiency": 1.0,
         "scaleout_latency": 0.0, "collective_latency": 0.0, "collective_latency_per_rank": 0.0,
         "serve_overlap": 0.0, "step_overhead": 0.0, "layer_overhead": 0.0,
         "expert_gemm_efficiency": 0.2, "expert_gemm_m_half": 40.0}
    sm = StepModel(m, s, Layout(2, 2, 1), 1.0, 1.0)
    per_expert_params = 3 * 4096 * 14336
    rows = 512 * 2 / 8 * 2 * 1.5
    touched = 2 * (1 - (1 - 2 / 8) ** 512)
    flops_t = 2 * per_expert_params * 32 / (v["peak_flops"] * 0.2) * (rows + touched * 40.0)
    mem_t = touched * per_expert_params * 32 / (v["hbm_bandwidth"] * 0.8)
    _, parts = step_time(sm, v, 256.0, 0.0, 0.0, 0.0, parts=True)
    assert parts["experts"] == pytest.approx(max(flops_t, mem_t))
    assert flops_t > mem_t  # the fit's efficiency is what this case tests


def test_amd_moe_takes_the_fused_moe_fit_of_its_slice() -> None:
    """DeepSeek-V3 at tp 8 on MI355X: experts sliced to 2048 / 8 = 256 per rank, so the
    inter-256 rows' fit, over the peak of the format (FP8, FP4)."""
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.rocmfit import moe_fit

    kb = trnkb.load()
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "mi355x-8")
    for fmt in ("fp8", "fp4"):
        r = W.simulate(m, s, 8, input_len=64, output_len=4, precision=fmt, tp=8,
                       concurrency=1, requests=2, ranged=False)
        e = r.inputs["expert_gemm_efficiency"].mid
        assert e == pytest.approx(moe_fit("gfx950", fmt, 256)["rate"] / s.peak_input(fmt).mid)
    h200 = W.simulate(m, W.system(kb, "hgx-h200-8"), 8, input_len=64, output_len=4,
                      precision="fp8", tp=8, concurrency=1, requests=2, ranged=False)
    assert "expert_gemm_efficiency" not in h200.inputs  # no CUDA fused-MoE table read


def test_untuned_gfx942_layer_extra_by_hand() -> None:
    """The v0.5.9 MI30x image builds aiter v0.1.11.post1 (no gfx942 DeepSeek-V3 rows): per
    step 61 x (123 - 15.7) + 61 x (30 - 11.4) + 61 x (34 - 11.1) + 3 x (122 - 23.5) + 3 x (39 -
    10.9) = 9,456.6 us over 61 layers = 155.03 us per layer; the step model adds it per layer."""
    from trnkb.workload.rocmfit import untuned_gfx942, untuned_layer_extra

    assert untuned_gfx942("sglang (lmsysorg/sglang:v0.5.9-rocm700-mi30x)")
    assert not untuned_gfx942("sglang (lmsysorg/sglang:v0.5.9-rocm700-mi35x)")  # gfx950
    assert not untuned_gfx942("sglang (lmsysorg/sglang:v0.5.12-rocm700-mi30x)")  # not known
    extra = untuned_layer_extra()
    assert extra.mid == pytest.approx(9456.6e-6 / 61, rel=1e-6)

    import trnkb
    from trnkb import workload as W
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    kb = trnkb.load()
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "mi300x-8")
    r = W.simulate(m, s, 8, input_len=64, output_len=4, precision="fp8", tp=8,
                   concurrency=1, requests=2, ranged=False)
    v = {k: i.mid for k, i in r.inputs.items()}
    sm = StepModel(m, s, Layout(8), 1.0, 1.0)
    base = step_time(sm, v, 4.0, 4000.0, 0.0, 0.0)
    assert step_time(sm, v | {"layer_extra": extra.mid}, 4.0, 4000.0, 0.0, 0.0) - base \
        == pytest.approx(61 * extra.mid, rel=1e-9)
