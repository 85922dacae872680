"""MX and NVFP4 quantization against an independent per-element reference.

The reference below decodes every bit pattern from the format definition (sign,
exponent, mantissa; OCP MX v1.0 element table, see neuroncore_facts.md C.1) and rounds
one value at a time to the nearest representable value, ties to the even mantissa,
saturating at the largest finite value. It shares no code with trnkb.engine.numerics.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

from trnkb.engine.numerics import mx_scale_bytes, quantize_mx
from trnkb.engine.numerics_formats import ELEMENTS, error_stats, round_to
from trnkb.engine.numerics_nvfp4 import nvfp4_tensor_scale, quantize_nvfp4

# (exponent bits, mantissa bits, bias, emax_elem); OCP MX v1.0 element formats.
SPEC = {
    "e4m3": (4, 3, 7, 8),
    "e5m2": (5, 2, 15, 15),
    "e2m3": (2, 3, 1, 2),
    "e3m2": (3, 2, 3, 4),
    "e2m1": (2, 1, 1, 2),
}


@cache
def grid(name: str) -> list[tuple[Fraction, int]]:
    """All finite non-negative (value, code) pairs, decoded from the bit layout."""
    eb, mb, bias, _ = SPEC[name]
    out = []
    for code in range(2 ** (eb + mb)):
        e, m = code >> mb, code & (2**mb - 1)
        if name == "e4m3" and e == 15 and m == 7:
            continue  # the only NaN of E4M3 (no Inf)
        if name == "e5m2" and e == 31:
            continue  # IEEE-style Inf / NaN
        if e == 0:
            v = Fraction(m, 2**mb) * Fraction(2) ** (1 - bias)
        else:
            v = (1 + Fraction(m, 2**mb)) * Fraction(2) ** (e - bias)
        out.append((v, code))
    return sorted(out)


def ref_round(x: Fraction, name: str) -> Fraction:
    """Nearest representable value, ties to even mantissa, saturating."""
    g = grid(name)
    sign = -1 if x < 0 else 1
    a = abs(x)
    if a >= g[-1][0]:
        return sign * g[-1][0]
    best = min(g, key=lambda vc: (abs(vc[0] - a), vc[1] & 1))
    return sign * best[0]


def floor_log2(x: Fraction) -> int:
    n = x.numerator.bit_length() - x.denominator.bit_length()
    return n if Fraction(2) ** n <= x else n - 1


@pytest.mark.parametrize("name", SPEC)
def test_every_code_point_decodes_to_the_value_the_bit_layout_defines(name):
    from trnkb.engine.numerics_formats import decode_element

    el = ELEMENTS[name]
    for v, code in grid(name):
        assert decode_element(np.array([code]), el)[0] == float(v)
        neg = code | (1 << (el.bits - 1))
        assert decode_element(np.array([neg]), el)[0] == -float(v)
    assert float(grid(name)[-1][0]) == el.max
    assert SPEC[name][3] == floor_log2(grid(name)[-1][0])  # emax_elem


def _block_with_scale(vals: list[float], k: int, name: str) -> np.ndarray:
    """A 32-block whose amax is 2**(emax + k), so the OCP shared exponent is exactly k."""
    emax = SPEC[name][3]
    block = [2.0 ** (emax + k)] + [v * 2.0**k for v in vals]
    block += [0.0] * (32 - len(block))
    return np.array(block, dtype=np.float32)


@pytest.mark.parametrize("name", SPEC)
@pytest.mark.parametrize("k", [-20, -1, 0, 3, 40])
def test_mx_keeps_every_code_point_and_rounds_every_midpoint_to_even(name, k):
    g = [float(v) for v, _ in grid(name)]
    points = g + [-v for v in g]
    mids = [(a + b) / 2 for a, b in zip(g, g[1:], strict=False)]  # exact in float32
    below = [float(np.nextafter(np.float32(m), np.float32(0))) for m in mids]
    above = [float(np.nextafter(np.float32(m), np.float32(np.inf))) for m in mids]
    tests = points + mids + [-m for m in mids] + below + above
    top = 2.0 ** (SPEC[name][3] + 1) * 0.999  # still below the next power of two
    tests += [g[-1] * 1.01, top, -top]  # saturate to the largest element
    for i in range(0, len(tests), 31):
        chunk = tests[i:i + 31]
        x = _block_with_scale(chunk, k, name)
        q = quantize_mx(x, name)
        assert q.scales[0] == k + 127
        got = q.dequantize()[1:1 + len(chunk)]
        want = [float(ref_round(Fraction(v), name)) * 2.0**k for v in chunk]
        assert got.tolist() == want


@pytest.mark.parametrize("name", SPEC)
def test_mx_shared_exponent_is_floor_log2_amax_minus_emax(name):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((200, 32))
         * np.exp2(rng.integers(-60, 60, (200, 1)))).astype(np.float32)
    q = quantize_mx(x, name)
    for row, s in zip(x, q.scales[:, 0], strict=True):
        amax = Fraction(float(np.max(np.abs(row))))
        assert int(s) - 127 == max(floor_log2(amax) - SPEC[name][3], -127)


@pytest.mark.parametrize("name", SPEC)
def test_mx_random_values_match_the_per_element_reference(name):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((16, 32)) * np.exp2(rng.integers(-8, 8, (16, 1)))).astype(np.float32)
    x[3, :5] = [1e-30, -1e-30, 0.0, 7e-38, -3e-39]  # values far below the block's range
    q = quantize_mx(x, name)
    got = q.dequantize()
    for r in range(x.shape[0]):
        amax = Fraction(float(np.max(np.abs(x[r]))))
        k = max(floor_log2(amax) - SPEC[name][3], -127)
        for c in range(32):
            want = ref_round(Fraction(float(x[r, c])) / Fraction(2) ** k, name) * Fraction(2) ** k
            assert got[r, c] == float(want), (r, c, x[r, c])


def test_mx_zero_block_gets_the_smallest_scale_and_zeros():
    q = quantize_mx(np.zeros((2, 32), np.float32), "mxfp4")
    assert q.scales.tolist() == [[0], [0]]  # 2**-127, as AWS quantize_mx and torchao do
    assert not q.dequantize().any()


def test_mx_block_with_inf_or_nan_gets_the_nan_scale():
    x = np.ones((3, 32), np.float32)
    x[0, 5], x[1, 0] = np.inf, np.nan
    q = quantize_mx(x, "mxfp8")
    assert q.scales[:, 0].tolist() == [255, 255, 127 - 8]
    d = q.dequantize()
    assert np.isnan(d[:2]).all() and (d[2] == 1).all()


def test_mx_tiny_block_clamps_the_scale_at_two_to_minus_127():
    x = np.full(32, 2.0**-140, np.float32)  # floor(log2) - 8 = -148 < -127
    assert quantize_mx(x, "mxfp8").scales[0] == 0


def test_mx_packed_size_is_bits_per_element_plus_one_byte_per_block():
    x = np.ones((4, 64), np.float32)
    assert quantize_mx(x, "mxfp4").nbytes == 4 * 64 // 2 + 4 * 2
    assert quantize_mx(x, "mxfp8").nbytes == 4 * 64 + 4 * 2
    assert quantize_mx(x, "mxfp6_e3m2").nbytes == 4 * 64 * 6 // 8 + 4 * 2


def test_mx_rejects_a_last_axis_that_is_not_whole_blocks():
    with pytest.raises(ValueError, match="multiple of the block size 32"):
        quantize_mx(np.ones(40), "mxfp8")


@pytest.mark.parametrize("sb", [2.0**-6, 0.75, 1.0, 3.5, 448.0])
def test_nvfp4_keeps_every_code_point_and_rounds_midpoints_to_even(sb):
    g = [float(v) for v, _ in grid("e2m1")]
    mids = [(a + b) / 2 for a, b in zip(g, g[1:], strict=False)]
    vals = g + [-v for v in g] + mids + [-m for m in mids]
    vals += [0.0] * (-len(vals) % 16)
    x = np.array(vals, np.float32).reshape(-1, 16)
    x[:, 0] = 6.0  # block amax 6 * sb -> block scale exactly sb (representable in E4M3)
    x = x * np.float32(sb)
    q = quantize_nvfp4(x, tensor_scale=1.0)
    assert (q.scales == np.array(float(sb), np.float32).astype(ELEMENTS["e4m3"].dtype)
            .view(np.uint8)).all()
    want = np.array([[float(ref_round(Fraction(float(v)) / Fraction(sb), "e2m1")) * sb
                      for v in row] for row in x])
    assert (q.dequantize() == want).all()


def test_nvfp4_saturates_when_the_block_scale_is_clipped_at_448():
    x = np.array([6000.0, -3000.0, 448.0 * 4.9] + [0.0] * 13, np.float32)  # 6000/6 > 448
    q = quantize_nvfp4(x, tensor_scale=1.0)
    assert q.dequantize()[:3].tolist() == [6 * 448.0, -6 * 448.0, 4 * 448.0]


def test_nvfp4_default_tensor_scale_is_amax_over_448_times_6():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    q = quantize_nvfp4(x)
    assert q.tensor_scale == np.float32(np.max(np.abs(x))) / np.float32(2688)
    assert q.nbytes == 8 * 64 // 2 + 8 * 4 + 4


# Relative RMS error on N(0, 1): the fact base (neuroncore_facts.md C.4, "computed here")
# reports 0.1150 (MXFP4), 0.0950 (NVFP4) and 0.0294 (MXFP8 E4M3) for 2**20 samples.
@pytest.mark.parametrize("fmt,expected", [("mxfp4", 0.1150), ("nvfp4", 0.0950), ("mxfp8", 0.0294)])
def test_gaussian_rel_rms_matches_the_independent_estimate(fmt, expected):
    x = np.random.default_rng(4).standard_normal((64, 4096)).astype(np.float32)
    q = quantize_nvfp4(x) if fmt == "nvfp4" else quantize_mx(x, fmt)
    assert error_stats(x, q.dequantize())["rel_rms"] == pytest.approx(expected, rel=0.03)


def test_error_stats_on_known_values():
    s = error_stats(np.array([3.0, 4.0]), np.array([3.0, 4.5]))
    assert s["max_abs"] == 0.5
    assert s["max_rel"] == 0.5 / 4
    assert s["rel_rms"] == pytest.approx(math.sqrt(0.125) / math.sqrt(12.5))


def test_round_to_fp8_saturates_instead_of_nan():
    assert round_to(np.array([1000.0, -500.0]), "fp8").tolist() == [448.0, -448.0]
    assert round_to(np.array([1.0 + 2.0**-9]), "bf16")[0] == 1.0  # tie to even
    with pytest.raises(ValueError, match="unknown dtype"):
        round_to(np.ones(1), "fp16")


# ---------------------------------------------------------------------------------------
# Scale modes, bit-exact against a scalar reference written from the rules:
#   floor (OCP MX v1.0 6.3): e = floor(log2 amax) - emax_elem
#   rceil (NVIDIA cuBLAS 1D block quantization / cvt.rp.satfinite.ue8m0x2.f32):
#         e = ceil(log2(fp32(amax / max_elem)))
#   trn3  (AWS nki.isa.quantize_mx docs): e = floor(log2 amax) - (emax_elem - 1)
# e clamped to [-127, 127], 2**-127 for an all-zero block, NaN scale (255) for a block
# holding a NaN or an Inf; elements RNE(V / 2**e) saturating at the largest element.
# Every value is handled one at a time with Python integers and Fractions.
# ---------------------------------------------------------------------------------------

MAXES = {name: grid(name)[-1][0] for name in SPEC}
MODES = ("floor", "rceil", "trn3")


def ceil_log2(x: Fraction) -> int:
    k = floor_log2(x)
    return k if Fraction(2) ** k == x else k + 1


def f32_round(q: Fraction) -> Fraction:
    """q > 0 rounded to float32, to nearest, ties to even (subnormals included)."""
    quantum = Fraction(2) ** (max(floor_log2(q), -126) - 23)
    n, r = divmod(q, quantum)
    n = int(n) + (r > quantum / 2 or (r == quantum / 2 and int(n) % 2 == 1))
    return n * quantum


def ref_code(v: float, k: int, name: str) -> int:
    """Element code of v / 2**k: nearest grid value, ties to the even code, saturating."""
    g = grid(name)
    sign = (1 << (ELEMENTS[name].bits - 1)) if math.copysign(1.0, v) < 0 else 0
    a = abs(Fraction(v)) / Fraction(2) ** k
    values = [gv for gv, _ in g]
    i = bisect.bisect_left(values, a)
    if i == len(values):
        return sign | g[-1][1]
    if values[i] == a or i == 0:
        return sign | g[i][1]
    lo, hi = g[i - 1], g[i]
    if a - lo[0] != hi[0] - a:
        return sign | (lo if a - lo[0] < hi[0] - a else hi)[1]
    return sign | (lo if lo[1] % 2 == 0 else hi)[1]


def ref_scale(block: list[float], name: str, mode: str) -> int | None:
    """Unbiased scale exponent of a block, or None for the NaN scale."""
    if any(math.isnan(v) or math.isinf(v) for v in block):
        return None
    amax = max(abs(Fraction(v)) for v in block)
    emax = SPEC[name][3]
    if amax == 0:
        k = -127
    elif mode == "rceil":
        d = f32_round(amax / MAXES[name])  # may underflow to 0
        k = ceil_log2(d) if d else -127
    else:
        k = floor_log2(amax) - emax + (mode == "trn3")
    return min(max(k, -127), 127)


def ref_mx(x: np.ndarray, name: str, mode: str) -> tuple[list[int], list[int]]:
    """(scale bytes, element codes) of float32 rows of 32, per the rules above."""
    scales, codes = [], []
    for row in x.astype(np.float32).reshape(-1, 32):
        block = [float(v) for v in row]
        k = ref_scale(block, name, mode)
        scales.append(255 if k is None else k + 127)
        codes += [0] * 32 if k is None else [ref_code(v, k, name) for v in block]
    return scales, codes


def f32(v: float) -> float:
    return float(np.float32(v))


def edge_blocks() -> np.ndarray:
    """Blocks whose amax sits on the boundaries the three rules draw."""
    rng = np.random.default_rng(11)
    blocks = []
    for k in (-140, -126, -20, -1, 0, 1, 7, 60, 120):
        for top in (2.0**k, 448 * 2.0**k, 6 * 2.0**k, 7.5 * 2.0**k, 28 * 2.0**k,
                    57344 * 2.0 ** (k - 10), 1.5 * 2.0**k, 1.75 * 2.0**k):
            if not 2.0**-149 <= top < 3.0e38:
                continue
            t = np.float32(top)
            for amax in (t, np.nextafter(t, np.float32(0)), np.nextafter(t, np.float32(np.inf))):
                body = rng.standard_normal(31).astype(np.float32) * amax / np.float32(4)
                body[:4] = [amax / 2, -amax / 3, amax * np.float32(0.75), 0]  # midpoints
                blocks.append(np.concatenate([[amax], np.clip(body, -amax, amax)]))
    tiny = np.array([2.0**-149, -2.0**-149, 2.0**-130, 2.0**-127, -1.5 * 2.0**-127] + [0.0] * 27)
    blocks += [np.zeros(32), -np.zeros(32), tiny, tiny * 2.0**20,
               np.full(32, np.finfo(np.float32).max), np.full(32, -2.0**-126)]
    return np.array(blocks, dtype=np.float32)


def special_blocks() -> np.ndarray:
    b = np.tile(np.linspace(-3, 3, 32, dtype=np.float32), (6, 1))
    b[0, 3], b[1, 7], b[2, 0], b[3, :] = np.nan, np.inf, -np.inf, -0.0
    b[4, 5], b[4, 6] = np.inf, np.nan
    b[5, ::2] = -0.0
    return b


def datasets() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    normal = rng.standard_normal((48, 32)) * np.exp2(rng.integers(-30, 30, (48, 1)))
    student = rng.standard_t(2, (48, 32))
    lognormal = rng.lognormal(0, 3, (48, 32)) * rng.choice([-1, 1], (48, 32))
    return {"normal": normal.astype(np.float32), "student_t2": student.astype(np.float32),
            "lognormal": lognormal.astype(np.float32), "edge": edge_blocks(),
            "special": special_blocks()}


CASES = [(name, mode) for name in SPEC for mode in MODES
         if mode != "trn3" or name in ("e4m3", "e5m2")]


@pytest.mark.parametrize("name,mode", CASES)
@pytest.mark.parametrize("data", ["normal", "student_t2", "lognormal", "edge", "special"])
def test_mx_scale_modes_are_bit_exact_against_the_scalar_reference(name, mode, data):
    x = datasets()[data]
    q = quantize_mx(x, name, scale_mode=mode)
    want_scales, want_codes = ref_mx(x, name, mode)
    assert q.scales.reshape(-1).tolist() == want_scales
    assert q.codes.reshape(-1).tolist() == want_codes
    assert q.scale_mode == mode


def test_rceil_rounds_the_float32_quotient_up_and_floor_rounds_amax_down():
    # amax = 448 * 2**3 exactly: both rules give 2**3; one ulp above, RCEIL moves up a
    # power of two (the quotient is no longer a power of two), FLOOR does not
    amax = np.array([448 * 8, np.nextafter(np.float32(448 * 8), np.float32(1e9)), 500 * 8],
                    np.float32)
    assert mx_scale_bytes(amax, "mxfp8", "rceil").tolist() == [130, 131, 131]
    assert mx_scale_bytes(amax, "mxfp8", "floor").tolist() == [130, 130, 130]
    assert mx_scale_bytes(amax, "mxfp8", "trn3").tolist() == [131, 131, 131]


def test_rceil_never_saturates_and_floor_does_on_the_same_block():
    x = np.full(32, 500.0, np.float32)  # 500 > 448: FLOOR clamps it, RCEIL scales it in
    assert quantize_mx(x, "mxfp8").dequantize()[0] == 448.0
    # RCEIL: 500 / 448 rounds up to 2, 250 rounds to 256 (E4M3 step 16 there): 512
    assert quantize_mx(x, "mxfp8", scale_mode="rceil").dequantize()[0] == 512.0


def test_scale_mode_errors_name_the_choices():
    with pytest.raises(ValueError, match="floor, rceil, trn3"):
        quantize_mx(np.ones(32), "mxfp8", scale_mode="even")
    with pytest.raises(ValueError, match="MXFP8 only"):
        quantize_mx(np.ones(32), "mxfp4", scale_mode="trn3")


# ------------------------------- NVFP4 -------------------------------------------------


def ref_nvfp4_block(vals: list[float], ts: float | None) -> tuple[int, list[int]]:
    """torchao nvfp4_quantize on one block, one float32 scalar operation at a time."""
    f = np.float32
    amax = max(abs(f(v)) for v in vals)
    bs = f(amax) / f(6)
    if ts is not None:
        bs = bs / f(ts)
    bs = min(max(bs, f(2.0**-6)), f(448)) if not np.isnan(bs) else bs
    s8 = f(float(ref_round(Fraction(float(bs)), "e4m3"))) if not np.isnan(bs) else f(np.nan)
    recip = f(1) / s8 if ts is None else (f(1) / f(ts)) / s8
    code = 0x7F if np.isnan(s8) else next(c for v, c in grid("e4m3") if v == Fraction(float(s8)))
    if np.isnan(recip):
        return code, [0] * len(vals)
    return code, [ref_code(float(f(v) * recip), 0, "e2m1") for v in vals]


@pytest.mark.parametrize("scaling", ["single_level", "two_level"])
def test_nvfp4_matches_the_scalar_reference_in_both_scalings(scaling):
    rng = np.random.default_rng(5)
    x = (rng.standard_t(3, (24, 16)) * np.exp2(rng.integers(-12, 12, (24, 1)))).astype(np.float32)
    x[3] = 0.0
    q = quantize_nvfp4(x, scaling=scaling)
    ts = (None if scaling == "single_level"
          else float(np.float32(np.max(np.abs(x))) / np.float32(2688)))
    assert q.scaling == scaling
    for r in range(x.shape[0]):
        code, codes = ref_nvfp4_block([float(v) for v in x[r]], ts)
        assert q.scales[r] == code
        assert q.codes[r].tolist() == codes


def test_nvfp4_multiplies_by_the_rounded_reciprocal_so_a_midpoint_rounds_up():
    # block amax 22.5 -> block scale 3.75 (exact in E4M3); 4.6875 / 3.75 = 1.25 is the
    # midpoint of 1 and 1.5 (ties to even: 1), but 4.6875 * fp32(1 / 3.75) = 1.2500001
    # rounds to 1.5, as torchao does; found by searching every E4M3 scale and midpoint
    x = np.array([22.5, 4.6875] + [0.0] * 14, np.float32)
    for q in (quantize_nvfp4(x, scaling="single_level"), quantize_nvfp4(x, tensor_scale=1.0)):
        assert q.dequantize()[:2].tolist() == [22.5, 1.5 * 3.75]


def test_nvfp4_nan_gives_a_nan_tensor_scale_and_a_nan_tensor():
    x = np.ones((2, 32), np.float32)
    x[1, 5] = np.nan
    assert np.isnan(nvfp4_tensor_scale(x))
    q = quantize_nvfp4(x)
    assert np.isnan(q.tensor_scale) and np.isnan(q.dequantize()).all()
    single = quantize_nvfp4(x, scaling="single_level")  # only the NaN's block is lost
    d = single.dequantize()
    assert np.isnan(d[1, :16]).all() and np.isfinite(d[0]).all()
    assert (d[1, 16:] == d[0, :16]).all()


def test_nvfp4_levels_are_named_and_single_level_takes_no_tensor_scale():
    x = np.ones(16, np.float32)
    assert quantize_nvfp4(x).scaling == "two_level"
    single = quantize_nvfp4(x, scaling="single_level")
    assert single.tensor_scale is None and single.nbytes == 8 + 1
    with pytest.raises(ValueError, match="no tensor_scale"):
        quantize_nvfp4(x, tensor_scale=2.0, scaling="single_level")


# ------------------------- optional cross-check against torchao -------------------------
# torchao 0.18 (pytorch/ao torchao/prototype/mx_formats/mx_tensor.py::to_mx) follows the
# same rules except in four documented cases (docs/number-formats.md), where trnkb follows
# the OCP spec / the hardware rule. Each differing block must be one of them, and
# torchao's output must be what that deviation predicts.


def torchao_mx(x: np.ndarray, name: str, mode: str) -> tuple[list[int], list[int]]:
    torch = pytest.importorskip("torch", reason="torch not installed: no torchao cross-check")
    pytest.importorskip("torchao", reason="torchao not installed: no torchao cross-check")
    from torchao.prototype.mx_formats import constants
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.kernels import unpack_uint4
    from torchao.prototype.mx_formats.mx_tensor import to_mx

    dtype = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
             "e2m3": constants.DTYPE_FP6_E2M3, "e3m2": constants.DTYPE_FP6_E3M2,
             "e2m1": torch.float4_e2m1fn_x2}[name]
    scale, data = to_mx(torch.from_numpy(x.copy()), dtype, 32, ScaleCalculationMode(mode))
    codes = data.view(torch.uint8)
    if name == "e2m1":
        codes = unpack_uint4(codes.contiguous())
    return scale.view(torch.uint8).reshape(-1).tolist(), codes.reshape(-1).tolist()


def torchao_deviation(block: list[float], name: str, mode: str, ours: int,
                      theirs: tuple[int, list[int]]) -> str | None:
    """Which documented deviation explains torchao's block, or None if none does."""
    scale, codes = theirs
    emax = SPEC[name][3]
    nan = any(math.isnan(v) for v in block)
    inf = any(math.isinf(v) for v in block)
    if nan:
        return "nan block: element codes unspecified" if scale == 255 else None
    if inf:
        want = 254 if mode == "rceil" else 255 - emax
        return "inf: finite scale instead of NaN" if scale == want else None
    if ours == 0 and scale == 0:
        k = -126 if mode == "floor" else 0  # FLOOR divides by 2**-126, RCEIL multiplies by 1
        if codes == [ref_code(v, k, name) for v in block]:
            return "scale 2**-127: elements scaled by 2**126 or 1"
    if mode == "rceil" and scale == ours - 1:
        if codes == [ref_code(v, ours - 128, name) for v in block]:
            return "fp32 log2 misses the round-up"
    return None


@pytest.mark.parametrize("name", SPEC)
@pytest.mark.parametrize("mode", ["floor", "rceil"])
def test_mx_matches_torchao_except_the_documented_deviations(name, mode):
    seen: dict[str, int] = {}
    for data, x in datasets().items():
        ours = quantize_mx(x, name, scale_mode=mode)
        t_scales, t_codes = torchao_mx(x, name, mode)
        for i, row in enumerate(x.reshape(-1, 32)):
            mine = (int(ours.scales.reshape(-1)[i]), ours.codes.reshape(-1, 32)[i].tolist())
            theirs = (t_scales[i], t_codes[32 * i: 32 * i + 32])
            if mine == theirs:
                seen["identical"] = seen.get("identical", 0) + 1
                continue
            why = torchao_deviation([float(v) for v in row], name, mode, mine[0], theirs)
            assert why is not None, (data, i, row.tolist(), mine, theirs)
            assert data in ("edge", "special"), (data, why)  # never on ordinary data
            seen[why] = seen.get(why, 0) + 1
    assert seen["identical"] > 0


@pytest.mark.parametrize("scaling", ["single_level", "two_level"])
def test_nvfp4_matches_torchao_bit_for_bit(scaling):
    torch = pytest.importorskip("torch", reason="torch not installed: no torchao cross-check")
    pytest.importorskip("torchao", reason="torchao not installed: no torchao cross-check")
    from torchao.prototype.mx_formats.kernels import unpack_uint4
    from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize, per_tensor_amax_to_scale

    rng = np.random.default_rng(9)
    x = (rng.standard_t(2, (64, 64)) * np.exp2(rng.integers(-20, 20, (64, 1)))).astype(np.float32)
    x[0, :16] = [22.5, 4.6875] + [0.0] * 14  # the reciprocal-order midpoint
    x[1] = 0.0
    t = torch.from_numpy(x.copy())
    pts = None if scaling == "single_level" else per_tensor_amax_to_scale(torch.max(torch.abs(t)))
    t_scales, t_data = nvfp4_quantize(t, 16, pts)
    q = quantize_nvfp4(x, scaling=scaling)
    assert q.scales.tolist() == t_scales.view(torch.uint8).tolist()
    assert q.codes.tolist() == unpack_uint4(t_data.contiguous()).tolist()
    if pts is not None:
        assert q.tensor_scale == np.float32(pts.item())


@pytest.mark.parametrize("name", SPEC)
def test_element_cast_of_random_bit_patterns_matches_the_reference(name):
    # uniform float32 bit patterns near the format's range, plus each grid midpoint with
    # one low bit set or cleared (the sticky bit is what a lookup key must keep)
    from trnkb.engine.numerics_formats import cast_element

    rng = np.random.default_rng(3)
    exp = rng.integers(127 - 20, 127 + 20, 3000, dtype=np.uint32)
    bits = (rng.integers(0, 2, 3000, dtype=np.uint32) << 31) | (exp << 23) | \
        rng.integers(0, 1 << 23, 3000, dtype=np.uint32)
    g = [float(v) for v, _ in grid(name)]
    mids = np.array([(a + b) / 2 for a, b in zip(g, g[1:], strict=False)], np.float32)
    near = np.concatenate([mids.view(np.uint32) + d for d in (0, 1, 2**12, 2**16 - 1, 2**16)])
    x = np.concatenate([bits.view(np.float32), near.view(np.float32), -near.view(np.float32)])
    got = cast_element(x, ELEMENTS[name])
    assert got.tolist() == [ref_code(float(v), 0, name) for v in x]


def test_the_code_in_docs_number_formats_runs():
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "number-formats.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 2
    for code in blocks:
        exec(compile(code, str(doc), "exec"), {})  # each block asserts its own results


@pytest.mark.parametrize("block", [2, 8, 16, 48, 64])
def test_mx_other_block_sizes_and_empty_input(block):
    rng = np.random.default_rng(8)
    x = rng.standard_t(3, (4, 2 * block)).astype(np.float32)
    q = quantize_mx(x, "mxfp4", block=block, scale_mode="rceil")
    for r, row in enumerate(x.reshape(-1, block)):
        k = ref_scale([float(v) for v in row], "e2m1", "rceil")
        assert q.scales.reshape(-1)[r] == k + 127
        expected = [ref_code(float(v), k, "e2m1") for v in row]
        assert q.codes.reshape(-1, block)[r].tolist() == expected
    assert quantize_mx(np.zeros((0, block)), "mxfp8", block=block).dequantize().shape == (0, block)
    assert quantize_nvfp4(np.zeros((0, 16))).dequantize().shape == (0, 16)


@pytest.mark.parametrize(("name", "min_subnormal", "unit_roundoff"), [
    # OCP Microscaling Formats (MX) v1.0, Table 2 (min subnormal) and u = 2**-(mbits+1):
    # E4M3 2**-9, E5M2 2**-16, E2M3 2**-3, E3M2 2**-4, E2M1 2**-1
    ("e4m3", 2.0**-9, 2.0**-4), ("e5m2", 2.0**-16, 2.0**-3), ("e2m3", 2.0**-3, 2.0**-4),
    ("e3m2", 2.0**-4, 2.0**-3), ("e2m1", 2.0**-1, 2.0**-2),
])
def test_format_constants_match_the_ocp_spec(name, min_subnormal, unit_roundoff):
    from trnkb.engine.numerics_formats import ELEMENTS

    f = ELEMENTS[name]
    assert f.min_subnormal == min_subnormal
    assert f.unit_roundoff == unit_roundoff
