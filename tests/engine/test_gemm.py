"""GEMM: any shape, numerics within the dtype's error bound, and the issue's timing targets.

Error bounds (elementwise, against float64 on the unrounded inputs):
|C - AB| <= |A| dB + dA |B| + dA dB + K u32 (|A| + dA)(|B| + dB) + u_out |C'|, where dA,
dB are the input rounding errors of the format (BF16: u = 2**-8 relative; FP8 E4M3:
2**-4 relative, 2**-10 x scale absolute below the normal range; MX: the OCP block rule),
K u32 bounds fp32 accumulation (u32 = 2**-24) and u_out = 2**-8 the BF16 output rounding
of |C'| <= |AB| + the input terms.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from trnkb.calc.flops import peak_flops
from trnkb.engine import gemm, isa
from trnkb.engine.numerics import quantize_mx
from trnkb.engine.timeline import Timeline
from trnkb.units import Q_

U_BF16 = 2.0**-8
U_FP32 = 2.0**-24


def _bound_from(k, ab, inputs, prod):
    """The elementwise bound from AB, the input terms |A| dB + dA |B| + dA dB and
    (|A| + dA)(|B| + dB)."""
    acc = k * U_FP32 * prod
    return inputs + acc + U_BF16 * (np.abs(ab) + inputs + acc)


def _bound(a, b, da, db):
    aq, bq = np.abs(a) + da, np.abs(b) + db
    return _bound_from(a.shape[1], a @ b, np.abs(a) @ db + da @ np.abs(b) + da @ db, aq @ bq)


def _mx_delta(x, u, fmt_max, sub, emax):
    """OCP MX per-element error along the last axis (blocks of 32, K zero-padded)."""
    k = x.shape[-1]
    kp = -(-k // 32) * 32
    xp = np.zeros((*x.shape[:-1], kp))
    xp[..., :k] = x
    blocks = xp.reshape(*x.shape[:-1], -1, 32)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    scale = 2.0 ** (np.floor(np.log2(np.where(amax > 0, amax, 1.0))) - emax)
    d = np.maximum(u * np.abs(blocks), sub / 2 * scale)
    d = np.maximum(d, np.abs(blocks) - fmt_max * scale)
    return d.reshape(xp.shape)[..., :k]


# element format: (u relative, largest finite, smallest subnormal, emax) (OCP MX v1.0)
MX_SPEC = {"mxfp8": (2.0**-4, 448.0, 2.0**-9, 8), "mxfp4": (2.0**-2, 6.0, 0.5, 2)}

SHAPES = [(100, 200, 300), (256, 384, 640), (1, 4096, 4096), (64, 20000, 64)]


@pytest.mark.parametrize("shape", SHAPES)
def test_any_shape_bf16_gemm_is_within_the_bf16_bound(trn3, shape):
    # (64, 20000, 64): a long K that is not a whole number of K steps or numeric chunks
    m, k, n = shape
    rng = np.random.default_rng(sum(shape))
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    r = gemm(trn3, m, k, n, a=a, b=b)
    assert r.output.shape == (m, n)
    bound = _bound(a, b, U_BF16 * np.abs(a), U_BF16 * np.abs(b))
    assert (np.abs(r.output - a @ b) <= bound).all()


def _uniform(rng, *shapes):
    """float32 arrays uniform on [-1, 1): drawn 5x faster than normal ones, and with
    float32's full mantissa (BF16 and MX rounding have bits to drop)."""
    out = []
    for shape in shapes:
        x = rng.random(shape, dtype=np.float32)
        x *= 2
        x -= 1
        out.append(x)
    return out


def _upper_matmul(x, y):
    """An upper bound on x @ y for non-negative x, y, from one float32 matmul.

    Casting to float32 lowers an element by at most u32 relative, and a float32 sum of k
    non-negative products is at least (1 - g) times the exact one, g = k u32 / (1 - k u32)
    (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 3.1), so
    fl(x32 @ y32) / ((1 - u32)**2 (1 - g)) >= x @ y.
    """
    k = x.shape[1]
    g = k * U_FP32 / (1 - k * U_FP32)
    out = x.astype(np.float32, copy=False) @ y.astype(np.float32, copy=False)
    return out.astype(np.float64) / ((1 - U_FP32) ** 2 * (1 - g))


def _slab_products(a, b, rows=8192):
    """AB in float64, an upper bound on P = |A| |B|, and mean_ij sum_k (a_ik b_kj)**2.

    Summed over slabs of ``rows`` of K, so no float64 copy of a whole operand is made.
    AB's float64 sums are exact to k 2**-53 P (the bound adds it). P_ij <= |a_i| |b_j|
    (Cauchy-Schwarz; 4/3 of P for uniform data, at no matmul's cost), the float64 norms
    raised by k 2**-52 for their own rounding.
    """
    m, k = a.shape
    ab = np.zeros((m, b.shape[1]))
    rows_a, cols_b = np.zeros(m), np.zeros(b.shape[1])
    sq = 0.0
    for k0 in range(0, k, rows):
        a64, b64 = a[:, k0:k0 + rows].astype(np.float64), b[k0:k0 + rows].astype(np.float64)
        ab += a64 @ b64
        a64 *= a64
        b64 *= b64
        rows_a += a64.sum(axis=1)
        cols_b += b64.sum(axis=0)
        sq += float(a64.sum(axis=0) @ b64.sum(axis=1))
    p = np.sqrt(np.outer(rows_a, cols_b)) * (1 + k * 2.0**-52)
    return ab, p, sq / ab.size


@pytest.mark.parametrize("shape", [(4097, 4096, 4096), (1024, 262144, 1024)])
def test_section_2_big_shapes_execute_within_the_bf16_bound(trn3, shape):
    # issue 11 section 2 at full size: an M edge of one row over 4096^2, and a long K of
    # 64 numeric chunks (1 GiB operands: float32 inputs, the reference by slabs of K)
    m, k, n = shape
    a, b = _uniform(np.random.default_rng(k), (m, k), (k, n))
    out = gemm(trn3, m, k, n, a=a, b=b, reference=False).output
    assert out.shape == (m, n)
    ab, p, sq = _slab_products(a, b)
    err = np.abs(out - ab)
    # the module's bound with dA = u|A|, dB = u|B| (BF16 rounding of float32 inputs is
    # at most u relative): the input terms are (2u + u**2) P, (|A| + dA)(|B| + dB) is
    # (1 + u)**2 P
    bound = _bound_from(k, ab, (2 * U_BF16 + U_BF16**2) * p, (1 + U_BF16) ** 2 * p)
    assert (err <= bound + k * 2.0**-53 * p).all()
    # at long K that worst case is loose (K u32 = 1.6% of P at K = 2**18: a C of zeros
    # would meet it), so the RMS is checked too. Assumption: rounding errors of different
    # products are independent with mean zero (RNE on continuous data), so the input
    # terms' RMS is at most (2u + u**2) sqrt(mean sum_k (a b)**2); BF16 output rounding
    # adds at most u RMS(AB + that), fp32 accumulation about sqrt(K) u32 RMS(P). One
    # dropped 4096-row chunk of the 64 would leave an RMS of sqrt(4096 / 9) = 21 (products
    # of two uniform [-1, 1) values have variance 1/9), four times the allowance of ~5.
    rms = float(np.sqrt(np.mean(err * err)))
    inputs = (2 * U_BF16 + U_BF16**2) * np.sqrt(sq)
    ab_rms = float(np.sqrt(np.mean(ab * ab)))
    p_rms = float(np.sqrt(np.mean(p * p)))
    allowed = inputs + U_BF16 * (ab_rms + inputs) + np.sqrt(k) * U_FP32 * p_rms
    assert rms <= allowed


def test_mxfp8_4097x4096x4096_executes_within_the_block_bound(trn3):
    # the M-edge shape in MXFP8: A and B quantized in blocks of 32 along K
    m, k, n = 4097, 4096, 4096
    a, b = _uniform(np.random.default_rng(11), (m, k), (k, n))
    out = gemm(trn3, m, k, n, dtype="mxfp8", a=a, b=b, reference=False).output
    da = _mx_delta(a, *MX_SPEC["mxfp8"])
    db = _mx_delta(b.T, *MX_SPEC["mxfp8"]).T
    ab = a.astype(np.float64) @ b.astype(np.float64)
    # the module's bound: input terms |A| dB + dA (|B| + dB), and (|A| + dA)(|B| + dB) =
    # P + those terms (the non-negative products bounded from float32 matmuls)
    p = _upper_matmul(np.abs(a), np.abs(b))
    inputs = _upper_matmul(np.abs(a), db) + _upper_matmul(da, np.abs(b) + db)
    bound = _bound_from(k, ab, inputs, p + inputs) + k * 2.0**-53 * (p + inputs)
    assert (np.abs(out - ab) <= bound).all()


@pytest.mark.parametrize("dtype", ["bf16", "fp8", "mxfp8"])
def test_executing_holds_no_whole_copy_of_an_operand(trn3, dtype):
    # the operands are rounded or quantized a slab of K at a time: numpy's allocations
    # (traced by tracemalloc) stay below half of one float32 operand, which any whole
    # copy (float64, float32, even BF16) would reach; the float64 reference included
    m, k, n = 64, 131072, 64
    a, b = _uniform(np.random.default_rng(4), (m, k), (k, n))
    gemm(trn3, 64, 512, 64, dtype=dtype, a=a[:, :512], b=b[:512])  # one-time caches: not traced
    tracemalloc.start()
    try:
        gemm(trn3, m, k, n, dtype=dtype, a=a, b=b)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < a.nbytes / 2


@pytest.mark.parametrize("shape", [(100, 200, 300), (1, 1000, 700)])
def test_any_shape_fp8_gemm_is_within_the_e4m3_bound(trn2, shape):
    m, k, n = shape
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    r = gemm(trn2, m, k, n, dtype="fp8", a=a, b=b)
    sa, sb = np.abs(a).max() / 448, np.abs(b).max() / 448  # OCP E4M3 max 448
    da = np.maximum(2.0**-4 * np.abs(a), 2.0**-10 * sa)
    db = np.maximum(2.0**-4 * np.abs(b), 2.0**-10 * sb)
    assert (np.abs(r.output - a @ b) <= _bound(a, b, da, db)).all()


@pytest.mark.parametrize("dtype,weights", [("mxfp8", None), ("mxfp4", None), ("mxfp8", "mxfp4")])
@pytest.mark.parametrize("shape", [(100, 200, 300), (256, 1000, 130)])
def test_any_shape_mx_gemm_is_within_the_block_bound(trn3, dtype, weights, shape):
    m, k, n = shape
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    r = gemm(trn3, m, k, n, dtype=dtype, weight_dtype=weights, a=a, b=b)
    da = _mx_delta(a, *MX_SPEC[dtype])
    db = _mx_delta(b.T, *MX_SPEC[weights or dtype]).T
    assert (np.abs(r.output - a @ b) <= _bound(a, b, da, db)).all()


def test_activations_quantized_on_chip_follow_the_trainium3_rule_and_its_bound(trn3):
    # nki.isa.quantize_mx: scale 2**(floor(log2 amax) - (E_max - 1)), E_max 8 for E4M3
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((200, 300)), rng.standard_normal((300, 100))
    r = gemm(trn3, 200, 300, 100, dtype="mxfp8", a=a, b=b, quantize_activations=True)
    da = _mx_delta(a, 2.0**-4, 448.0, 2.0**-9, 7)
    db = _mx_delta(b.T, 2.0**-4, 448.0, 2.0**-9, 8).T
    assert (np.abs(r.output - a @ b) <= _bound(a, b, da, db)).all()
    floor = gemm(trn3, 200, 300, 100, dtype="mxfp8", a=a, b=b).output
    assert not np.array_equal(r.output, floor)


def test_mx_scales_carry_the_data_wrong_scales_give_a_wrong_product(trn3):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((128, 256)), rng.standard_normal((256, 64))
    qa, qb = quantize_mx(a, "mxfp8"), quantize_mx(b.T, "mxfp8")
    good = gemm(trn3, 128, 256, 64, dtype="mxfp8", a=qa, b=qb).output
    bad_scales = qa.scales.copy()
    bad_scales[:, 0] += 3  # the first block of every row now 8x larger
    qa_bad = type(qa)(qa.codes, bad_scales, qa.element, qa.block)
    bad = gemm(trn3, 128, 256, 64, dtype="mxfp8", a=qa_bad, b=qb).output
    # expected: the float64 product of the decoded elements with the altered scales
    ref = qa_bad.dequantize() @ qb.dequantize().T
    assert not np.allclose(good, bad)
    assert np.max(np.abs(bad - ref) / (np.abs(qa_bad.dequantize()) @ np.abs(qb.dequantize().T))) \
        < 2 * U_BF16


def test_isa_matmul_mx_applies_its_scale_tiles(trn3):
    tl = Timeline(trn3, execute=True)
    st = tl.sbuf_pool("st", (128, 4, 8), "mxfp8").tile()
    mv = tl.sbuf_pool("mv", (128, 4, 16), "mxfp8").tile()
    ss = tl.sbuf_pool("ss", (16, 8), "e8m0").tile()
    ms = tl.sbuf_pool("ms", (16, 16), "e8m0").tile()
    dst = tl.psum_pool("d", (8, 16), "fp32").tile()
    st.write(np.ones((128, 4, 8)))
    mv.write(np.ones((128, 4, 16)))
    ss.write(np.full((16, 8), 127.0))  # 2**0
    ms.write(np.full((16, 16), 128.0))  # 2**1
    isa.matmul_mx(tl, dst, st, mv, ss, ms)
    assert np.all(dst.read() == 512 * 2.0)  # K = 512 products of 1 x 2
    ms.write(np.full((16, 16), 130.0))  # 2**3: the product must follow the scale bytes
    isa.matmul_mx(tl, dst, st, mv, ss, ms)
    assert np.all(dst.read() == 512 * 8.0)


def test_huge_shapes_simulate_in_cost_only_mode(trn3):
    for shape in [(4097, 4096, 4096), (1024, 262144, 1024)]:
        r = gemm(trn3, *shape, execute=False)
        assert r.seconds.to("s").magnitude > 2.0 * np.prod(shape) / 78.6432e12  # >= peak time


def test_gemv_puts_the_one_row_operand_on_the_moving_side(trn3):
    # NKI performance guide: the short operand moves; a 1-row A as stationary would cost
    # max(min(64, 1), 512) = 512 cycles per 128x512 tile instead of 4 x 64 with B stationary
    r = gemm(trn3, 1, 4096, 4096, execute=False)
    assert any(n.startswith("C^T = B^T A^T") for n in r.notes)


def _util_ok(core, dtype, shape):
    r = gemm(core, *shape, dtype=dtype, execute=False)
    calc = peak_flops(1, 128, 128, Q_(2.4, "GHz"), core.pack(dtype)).value
    return r.achieved <= calc and 0 < r.utilization <= 1


@pytest.mark.parametrize("chip,dtype", [("trainium2", "bf16"), ("trainium2", "fp8"),
                                        ("trainium3", "bf16"), ("trainium3", "mxfp8"),
                                        ("trainium3", "mxfp4")])
def test_utilization_never_exceeds_the_calculators_peak(request, chip, dtype):
    core = request.getfixturevalue("trn2" if chip == "trainium2" else "trn3")
    for shape in [(128, 128, 512), (384, 1024, 1536), (2048, 2048, 1024), (1, 8192, 512),
                  (3000, 513, 129)]:
        assert _util_ok(core, dtype, shape)


# ---- the Done-when figures (issue 11): the schedule alone, without the fixed
# costs outside it (launch, start/end, per output block; issue 20) -----------------------
def test_8192x128x128_is_within_2x_of_its_busiest_engine_or_queue(trn2, trn3):
    for core in (trn2, trn3):
        r = gemm(core, 8192, 128, 128, execute=False, fixed_costs=False)
        busiest = max(v.to("s").magnitude for v in r.busy.values())
        assert r.seconds.to("s").magnitude <= 2 * busiest


def test_1024_cubed_bf16_reaches_85_percent_of_one_trainium3_core(trn3):
    assert gemm(trn3, 1024, 1024, 1024, execute=False, fixed_costs=False).utilization >= 0.85


@pytest.mark.parametrize("n", [2048, 4096])
def test_mxfp8_over_bf16_is_between_3_5_and_4(trn3, n):
    # the MX array does 4 multiply pairs per PE per cycle (ARCH-trn3): 4x at most
    bf16 = gemm(trn3, n, n, n, execute=False, fixed_costs=False)
    mx = gemm(trn3, n, n, n, dtype="mxfp8", execute=False, fixed_costs=False)
    assert 3.5 <= (bf16.seconds / mx.seconds).to("").magnitude <= 4.0


def test_near_peak_comes_from_overlap_busy_tensor_time_is_the_formula(trn3):
    # 4096^3 BF16: (4096/128) x (4096/512) x (4096/128) matmuls of 512 cycles at 2.4 GHz
    r = gemm(trn3, 4096, 4096, 4096, execute=False)
    assert r.busy["tensor"].to("s").magnitude >= 32 * 8 * 32 * 512 / 2.4e9 * (1 - 1e-9)
    assert r.bound_by == "tensor" and r.utilization >= 0.9


def test_quantizing_bf16_activations_is_charged_on_vectore(trn3):
    # quantize_mx: 4 input elements per partition per cycle on VectorE (nki.isa)
    pre = gemm(trn3, 512, 2048, 512, dtype="mxfp8", execute=False)
    q = gemm(trn3, 512, 2048, 512, dtype="mxfp8", execute=False, quantize_activations=True)
    t = q.timeline
    quant = t[t.op == "quantize_mx"]
    assert set(quant.engine) == {"vector"} and "quantize_mx" not in set(pre.timeline.op)
    # A (512 x 2048) is quantized at least once: 512 x 2048 / 128 partitions / 4 cycles
    assert (quant.end - quant.start).sum() >= 512 * 2048 / 128 / 4 / 1.2e9 * (1 - 1e-9)
    assert q.bytes["hbm"] > pre.bytes["hbm"]  # BF16 activations are twice the bytes


def test_cost_only_and_executed_runs_have_the_same_time(trn3):
    a = gemm(trn3, 256, 1024, 1024, dtype="mxfp8", execute=True)
    b = gemm(trn3, 256, 1024, 1024, dtype="mxfp8", execute=False)
    assert a.seconds == b.seconds and b.output is None and b.error is None


def test_w4a8_halves_the_weight_bytes_read_from_hbm(trn3):
    m, k, n = 1024, 2048, 2048
    w8 = gemm(trn3, m, k, n, dtype="mxfp8", execute=False)
    w4 = gemm(trn3, m, k, n, dtype="mxfp8", weight_dtype="mxfp4", execute=False)
    assert w4.bytes["hbm"] < w8.bytes["hbm"]
