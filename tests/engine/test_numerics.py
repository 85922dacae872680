"""MX and NVFP4 quantization against an independent per-element reference.

The reference below decodes every bit pattern from the format definition (sign,
exponent, mantissa; OCP MX v1.0 element table, see neuroncore_facts.md C.1) and rounds
one value at a time to the nearest representable value, ties to the even mantissa,
saturating at the largest finite value. It shares no code with trnkb.engine.numerics.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

from trnkb.engine.numerics import (
    ELEMENTS,
    error_stats,
    quantize_mx,
    quantize_nvfp4,
    round_to,
)

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
    from trnkb.engine.numerics import decode_element

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
    x = (rng.standard_normal((200, 32)) * np.exp2(rng.integers(-60, 60, (200, 1)))).astype(np.float32)
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
