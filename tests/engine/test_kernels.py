"""The NeuronCore model, the scheduler and the kernels: accuracy bounds and timing claims.

Figures: per-core peaks are derived here as 2 x 128 x 128 x pack x 2.4 GHz (the array
and clock of the Trainium2/3 NKI architecture guides, specs/cores.yaml).
"""

from __future__ import annotations

import numpy as np
import pytest

import trnkb
from trnkb.engine import NeuronCore, attention, gemm, reference_attention
from trnkb.engine.numerics import quantize_mx, round_to
from trnkb.engine.timeline import Timeline

U_BF16 = 2.0**-8  # unit roundoff of bfloat16 (8-bit significand)
U_FP32 = 2.0**-24


@pytest.fixture(scope="module")
def kb():
    return trnkb.load()


@pytest.fixture(scope="module")
def trn2(kb):
    return NeuronCore.from_kb(kb, "trainium2")


@pytest.fixture(scope="module")
def trn3(kb):
    return NeuronCore.from_kb(kb, "trainium3")


def test_from_kb_reads_the_sourced_core_parameters(trn2, trn3):
    assert trn2.name == "NeuronCore-v3" and trn3.name == "NeuronCore-v4"
    assert trn2.vector_clock.to("GHz").magnitude == pytest.approx(0.96)
    assert trn3.vector_clock.to("GHz").magnitude == pytest.approx(1.2)
    assert (trn2.mx_pack, trn3.mx_pack) == (0, 4)
    assert trn2.psum_bank_bytes == 2048  # 2 MiB / 128 partitions / 8 banks
    assert trn3.cores_per_chip == 8


def test_peak_is_two_rows_cols_pack_clock(trn2, trn3):
    assert trn2.peak_flops("bf16").to("TFLOPS").magnitude == pytest.approx(2 * 128 * 128 * 2.4e9 / 1e12)
    assert trn2.peak_flops("fp8") == 2 * trn2.peak_flops("bf16")
    assert trn3.peak_flops("mxfp8") == 4 * trn3.peak_flops("bf16")
    assert trn3.chip_peak_flops("mxfp8").to("TFLOPS").magnitude == pytest.approx(8 * 314.5728)


def test_unknown_chip_names_the_chips_that_have_a_core(kb):
    with pytest.raises(KeyError, match="trainium3"):
        NeuronCore.from_kb(kb, "h100")


@pytest.mark.parametrize("dtype", ["mxfp8", "mxfp4"])
def test_mx_on_trainium2_is_refused(trn2, dtype):
    with pytest.raises(ValueError, match="no MX matmul"):
        gemm(trn2, 128, 512, 512, dtype=dtype, execute=False)


def _elem_err(x, xq):
    return np.abs(np.asarray(x, np.float64) - np.asarray(xq, np.float64))


def _gemm_bound(a, b, da, db, out_u):
    """|C - AB| <= |A| dB + dA |B| + dA dB + K u32 |Aq||Bq| + out_u |C| (elementwise)."""
    aq, bq = np.abs(a) + da, np.abs(b) + db
    k = a.shape[1]
    c = np.abs(a @ b)
    return np.abs(a) @ db + da @ np.abs(b) + da @ db + k * U_FP32 * (aq @ bq) + out_u * (c + aq @ bq * 1e-2)


def test_bf16_gemm_matches_float64_within_the_bf16_rounding_bound(trn2):
    # Inputs rounded to bf16 (relative error <= u = 2**-8 each), products exact in fp32,
    # fp32 accumulation (<= K u32 |A||B|), output rounded to bf16 (<= u |C|).
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((256, 512)), rng.standard_normal((512, 1024))
    r = gemm(trn2, 256, 512, 1024, a=a, b=b)
    bound = _gemm_bound(a, b, U_BF16 * np.abs(a), U_BF16 * np.abs(b), U_BF16)
    assert (np.abs(r.output - a @ b) <= bound).all()
    assert r.error["rel_rms"] < 2 * U_BF16


def test_fp8_gemm_matches_float64_within_the_e4m3_bound(trn2):
    # Per-tensor scale s = amax/448; E4M3 relative error <= 2**-4, absolute below the
    # normal range <= half the subnormal spacing 2**-10 times s.
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((128, 512)), rng.standard_normal((512, 512))
    r = gemm(trn2, 128, 512, 512, dtype="fp8", a=a, b=b)
    sa, sb = np.abs(a).max() / 448, np.abs(b).max() / 448
    da = np.maximum(2.0**-4 * np.abs(a), 2.0**-10 * sa)
    db = np.maximum(2.0**-4 * np.abs(b), 2.0**-10 * sb)
    assert (np.abs(r.output - a @ b) <= _gemm_bound(a, b, da, db, U_BF16)).all()


def _mx_bound(x, fmt_u, fmt_max, sub, emax):
    """Per-element MX error bound along the last axis (blocks of 32), from the OCP rules."""
    blocks = x.reshape(*x.shape[:-1], -1, 32)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    scale = 2.0 ** (np.floor(np.log2(amax)) - emax)
    d = np.maximum(fmt_u * np.abs(blocks), sub / 2 * scale)
    d = np.maximum(d, np.abs(blocks) - fmt_max * scale)  # saturation above max x scale
    return d.reshape(x.shape)


@pytest.mark.parametrize("dtype,weights,spec", [
    ("mxfp8", None, ((2.0**-4, 448.0, 2.0**-9, 8), (2.0**-4, 448.0, 2.0**-9, 8))),
    ("mxfp4", None, ((2.0**-2, 6.0, 0.5, 2), (2.0**-2, 6.0, 0.5, 2))),
    ("mxfp8", "mxfp4", ((2.0**-4, 448.0, 2.0**-9, 8), (2.0**-2, 6.0, 0.5, 2))),
])
def test_mx_gemm_matches_float64_within_the_block_bound(trn3, dtype, weights, spec):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((128, 1024)), rng.standard_normal((1024, 512))
    r = gemm(trn3, 128, 1024, 512, dtype=dtype, weight_dtype=weights, a=a, b=b)
    da = _mx_bound(a, *spec[0])
    db = _mx_bound(b.T, *spec[1]).T
    assert (np.abs(r.output - a @ b) <= _gemm_bound(a, b, da, db, U_BF16)).all()


def test_mx_gemm_inputs_are_the_ocp_quantized_values(trn3):
    # The executed product equals the fp32 product of the dequantized MX operands.
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((128, 512)), rng.standard_normal((512, 512))
    r = gemm(trn3, 128, 512, 512, dtype="mxfp8", a=a, b=b)
    aq = quantize_mx(a, "mxfp8").dequantize()
    bq = quantize_mx(b.T, "mxfp8").dequantize().T
    ref = round_to(aq @ bq, "bf16")
    assert np.max(np.abs(r.output - ref) / (np.abs(aq) @ np.abs(bq))) < 2 * U_BF16


@pytest.mark.parametrize("chip,dtype", [("trainium2", "bf16"), ("trainium2", "fp8"),
                                        ("trainium3", "bf16"), ("trainium3", "mxfp8"),
                                        ("trainium3", "mxfp4")])
@pytest.mark.parametrize("shape", [(128, 128, 512), (384, 1024, 1536), (2048, 2048, 1024)])
def test_achieved_flops_never_exceed_the_derived_peak(kb, chip, dtype, shape):
    core = NeuronCore.from_kb(kb, chip)
    k = max(shape[1], 128 * core.pack(dtype))
    r = gemm(core, shape[0], k, shape[2], dtype=dtype, execute=False)
    assert r.achieved <= core.peak_flops(dtype)
    assert 0 < r.utilization <= 1


@pytest.mark.parametrize("chip", ["trainium2", "trainium3"])
def test_4096_cubed_bf16_gemm_reaches_90_percent_of_one_core(kb, chip):
    r = gemm(NeuronCore.from_kb(kb, chip), 4096, 4096, 4096, execute=False)
    assert r.utilization >= 0.90
    assert r.bound_by == "tensor"


def test_trainium3_mxfp8_gemm_is_3_5_to_4_times_faster_than_bf16(trn3):
    bf16 = gemm(trn3, 4096, 4096, 4096, dtype="bf16", execute=False)
    mx = gemm(trn3, 4096, 4096, 4096, dtype="mxfp8", execute=False)
    assert 3.5 <= bf16.seconds / mx.seconds <= 4.0


def test_w4a8_halves_the_weight_bytes_read_from_hbm(trn3):
    m, k, n = 1024, 2048, 2048
    w8 = gemm(trn3, m, k, n, dtype="mxfp8", execute=False)
    w4 = gemm(trn3, m, k, n, dtype="mxfp8", weight_dtype="mxfp4", execute=False)
    # B (k x n) is read once (resident slab): 1 byte vs 0.5 byte per weight.
    assert (w8.bytes["hbm"] - w4.bytes["hbm"]).to("B").magnitude == k * n / 2


def test_cost_only_and_executed_runs_have_the_same_timeline(trn3):
    a = gemm(trn3, 256, 1024, 1024, dtype="mxfp8", execute=True)
    b = gemm(trn3, 256, 1024, 1024, dtype="mxfp8", execute=False)
    assert a.seconds == b.seconds and b.output is None and b.error is None
    assert a.timeline.equals(b.timeline)


def test_timeline_has_engine_op_start_end_and_busy_matches(trn2):
    r = gemm(trn2, 256, 256, 1024, execute=False)
    df = r.timeline
    assert list(df.columns) == ["engine", "op", "start", "end"]
    assert (df["end"] >= df["start"]).all()
    tensor = df[df.engine == "tensor"]
    assert (tensor.end - tensor.start).sum() == pytest.approx(r.busy["tensor"].to("s").magnitude)
    assert df["end"].max() == pytest.approx(r.seconds.to("s").magnitude)


def test_a_tiling_that_does_not_fit_sbuf_names_the_buffer_and_bytes(trn2):
    tl = Timeline(trn2, execute=False)
    with pytest.raises(ValueError, match=r"SBUF overflow: pool 'big' needs 2 x 200000 B"):
        tl.sbuf_pool("big", (128, 100000), "bf16", 2)
    with pytest.raises(ValueError, match="PSUM overflow: pool 'acc' needs 9 bank"):
        tl.psum_pool("acc", (128, 512), "fp32", 9)


def test_matmul_tile_limits_are_enforced(trn2):
    from trnkb.engine import isa

    tl = Timeline(trn2, execute=False)
    st = tl.sbuf_pool("st", (128, 128), "bf16").tile()
    mv = tl.sbuf_pool("mv", (128, 1024), "bf16").tile()
    dst = tl.psum_pool("d", (128, 512), "fp32", 2).tile()
    with pytest.raises(ValueError, match="moving free size 1024 exceeds 512"):
        isa.matmul(tl, dst, st, mv)


def _attention_bound(v, o_ref):
    # P rounded to bf16 (relative u per weight) moves O by <= u max|V|; the output is
    # rounded to bf16 (<= u |O|); fp32 exp/sums add ~1e-6 relative, covered by 1e-4.
    return U_BF16 * np.abs(v).max() + U_BF16 * np.abs(o_ref) + 1e-4 * np.abs(v).max()


@pytest.mark.parametrize("chip", ["trainium2", "trainium3"])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_float64_within_the_bf16_bound(kb, chip, causal):
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, s, 64)) for s in (256, 1024, 1024))
    r = attention(NeuronCore.from_kb(kb, chip), 256, 1024, 64, heads=2, causal=causal,
                  q=q, k=k, v=v)
    # Reference on the bf16-rounded inputs: input rounding is the dtype's, not the kernel's.
    ref = reference_attention(*(round_to(x, "bf16") for x in (q, k, v)), causal=causal)
    assert (np.abs(r.output - ref) <= _attention_bound(v, ref)).all()
    assert r.error["rel_rms"] < 0.01  # against the unrounded float64 inputs


def test_attention_states_the_bounding_engine_and_trainium3_is_faster(trn2, trn3):
    r2 = attention(trn2, 4096, 4096, 128, execute=False)
    r3 = attention(trn3, 4096, 4096, 128, execute=False)
    assert r2.params["exp_engine"] == "scalar" and r3.params["exp_engine"] == "vector"
    for r in (r2, r3):
        assert f"bound by {r.bound_by}" in r.notes[-1]
    assert r3.seconds < r2.seconds
    # Trainium3 moves the exp to VectorE at 4x ScalarE's rate: ScalarE is nearly idle there.
    assert r3.busy["scalar"] < r2.busy["scalar"] / 2
    # The vector work that remains runs at the 1.25x clock (1.2 / 0.96 GHz).
    assert r2.cycles["vector"] / r2.busy["vector"].to("s").magnitude == pytest.approx(0.96e9)
    assert r3.utilization <= 1 and r2.utilization <= 1


def test_compare_attention_names_bounds_and_modelled_differences(kb):
    from trnkb.engine import compare_attention

    trn2, trn3 = NeuronCore.from_kb(kb, "trainium2"), NeuronCore.from_kb(kb, "trainium3")
    r2 = attention(trn2, 512, 2048, 128, execute=False)
    r3 = attention(trn3, 512, 2048, 128, execute=False)
    text = compare_attention(r2, trn2, r3, trn3)
    # VectorE clock 0.96 -> 1.2 GHz (Neuron NKI architecture guides): 1.25x
    assert "1.25x the clock" in text
    assert "from scalar" in text and "to vector" in text
    assert f"({(r2.seconds / r3.seconds).to('').magnitude:.2f}x)" in text
