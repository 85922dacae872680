"""The compiled MXFP8 kernel (trnkb.engine.numerics_fp8) against ml_dtypes and np.frexp.

Expected codes come from ml_dtypes' float32 -> float8 casts (correctly rounded, ties to
even) of values clipped to the largest finite element; expected scales from np.frexp
on float64 (no bit arithmetic). Neither shares code with the kernel's integer rounding.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from trnkb.engine import numerics_fast, numerics_fp8
from trnkb.engine.numerics import quantize_mx

DTYPE = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
MAX = {"e4m3": 448.0, "e5m2": 57344.0}  # OCP MX v1.0 Table 2
EMAX = {"e4m3": 8, "e5m2": 15}
FMT = {"e4m3": "mxfp8_e4m3", "e5m2": "mxfp8_e5m2"}


def ml_codes(v: np.ndarray, name: str) -> np.ndarray:
    """FP8 codes of float32 ``v``, saturating, from ml_dtypes."""
    m = np.float32(MAX[name])
    return np.clip(v.astype(np.float32), -m, m).astype(DTYPE[name]).view(np.uint8)


def boundary_patterns(name: str) -> np.ndarray:
    """Float32 values on and next to every rounding boundary of the format's range.

    Every exponent from well below the smallest subnormal to above the largest value,
    every pattern of the top 11 mantissa bits (so every FP8 value, midpoint and the
    sticky positions below), each with the low 12 bits 0, 1, 0x7FF, 0x800 and 0xFFF
    (exact ties, one ulp above, just below the next pattern).
    """
    emin = -6 if name == "e4m3" else -14
    fields = np.arange(127 + emin - 6, 127 + EMAX[name] + 4, dtype=np.uint32)
    top = np.arange(1 << 11, dtype=np.uint32) << np.uint32(12)
    low = np.array([0, 1, 0x7FF, 0x800, 0xFFF], np.uint32)
    bits = (fields[:, None, None] << np.uint32(23)) | top[None, :, None] | low[None, None, :]
    bits = bits.reshape(-1)
    return np.concatenate([bits, bits | np.uint32(1 << 31)]).view(np.float32)


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
def test_fp8_cast_matches_ml_dtypes_on_every_rounding_boundary(name):
    x = boundary_patterns(name)
    extra = np.array([0.0, -0.0, 2.0**-149, -(2.0**-149), 2.0**-127, 1e30, -1e30,
                      np.inf, -np.inf, MAX[name], np.nextafter(MAX[name], np.inf)],
                     np.float32)
    x = np.concatenate([x, extra])
    got = numerics_fp8.cast_codes(x, name)
    want = ml_codes(x, name)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(float(x[i]), int(got[i]), int(want[i])) for i in bad[:5]]


def expected_mx(x: np.ndarray, name: str, mode: str,
                block: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """(scale bytes, codes) per the scale rules, computed with np.frexp and ml_dtypes."""
    blocks = x.astype(np.float32).reshape(-1, block)
    finite = np.isfinite(blocks).all(axis=1)
    amax = np.where(finite, np.abs(blocks).max(axis=1), 0).astype(np.float64)
    if mode == "rceil":  # e = ceil(log2(fp32(amax / max_elem)))
        d = (amax.astype(np.float32) / np.float32(MAX[name])).astype(np.float64)
        m, ex = np.frexp(d)
        e = np.where(d == 0, -127, np.where(m == 0.5, ex - 1, ex))  # 0: underflowed
    else:  # e = floor(log2(amax)) - emax (+1 for TRN3)
        _, ex = np.frexp(amax)
        e = ex - 1 - EMAX[name] + (mode == "trn3")
    e = np.where(amax == 0, -127, np.clip(e, -127, 127))
    scale = np.where(finite, e + 127, 255).astype(np.uint8)
    mult = np.ldexp(np.float32(1), -e).astype(np.float32)  # exact powers of two
    with np.errstate(invalid="ignore", over="ignore"):
        codes = ml_codes(blocks * mult[:, None], name)
    codes[~finite] = 0
    return scale, codes.reshape(-1)


def mixed_data(seed: int, rows: int) -> np.ndarray:
    """Rows of 32 with every feature the fast path must get right, at many magnitudes."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, 32)) * np.exp2(rng.integers(-90, 90, (rows, 1)))
    x[::7, 3] = 0.0
    x[::11, 5] = -0.0
    for col, k in zip(range(9, 17), (-12, -14, -15, -17, -24, -28, -30, -33), strict=True):
        x[::2, col] *= 2.0**k  # into the FP8 subnormal range of the block, and below it
    x[::13, 1] = -x[::13, 0] * 1.75  # saturates under FLOOR
    grid = np.exp2(np.floor(np.log2(np.abs(x[::3, 0])) - 3))
    x[::3, 2] = np.sign(x[::3, 0]) * grid * 9.5  # an exact E4M3 midpoint of its block
    x = x.astype(np.float32)
    x[::17, 4] = x[::17, 0] * np.float32(1.75)  # amax on RCEIL's 1.75 boundary
    return x


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("mode", ["floor", "rceil", "trn3"])
def test_mxfp8_fast_path_matches_frexp_and_ml_dtypes(name, mode):
    per = 4096  # blocks per region: each region holds one kind of special block
    x = mixed_data(1, 5 * per)
    x[5], x[6] = 0.0, -0.0  # all-zero blocks
    x[per + 3] = 2.0**110  # a block near the top of the float32 range
    x[2 * per + 4] = np.linspace(-1, 1, 32) * 2.0**-120  # S < 1: the normalising loop
    x[3 * per + 5, 6] = np.nan  # a NaN block and an Inf block
    x[3 * per + 7, 0] = -np.inf
    x[4 * per + 8] = np.linspace(-1, 1, 32) * 2.0**-135  # float32 subnormals
    q = quantize_mx(x, FMT[name], scale_mode=mode)
    scale, codes = expected_mx(x, name, mode)
    assert np.array_equal(q.scales.reshape(-1), scale)
    bad = np.flatnonzero(q.codes.reshape(-1) != codes)
    assert bad.size == 0, [(float(x.reshape(-1)[i]), int(q.codes.reshape(-1)[i]),
                            int(codes[i])) for i in bad[:5]]


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
@pytest.mark.parametrize("mode", ["floor", "rceil"])
def test_mxfp8_fast_path_equals_the_table_path(name, mode):
    # the lookup-table path (numerics_fast, ml_dtypes tables) on the same blocks
    from trnkb.engine import numerics

    el = numerics.ELEMENTS[name]
    m = numerics.ScaleMode(mode)
    x = mixed_data(2, 3000)
    flat = x.reshape(-1)
    codes, amax, mult = numerics_fast.quantize_blocks(
        flat, 32, name, lambda b: numerics._multiplier(b, el, m))
    q = quantize_mx(x, FMT[name], scale_mode=mode)
    assert np.array_equal(q.codes.reshape(-1), codes)
    assert np.array_equal(q.scales.reshape(-1), numerics._scale_bytes(amax, mult))


@pytest.mark.parametrize("block", [2, 8, 16, 48, 64])
@pytest.mark.parametrize("mode", ["floor", "rceil"])
def test_mxfp8_other_block_sizes(block, mode):
    x = mixed_data(4, 96).reshape(-1, 3 * 64)[:, : (3 * 64 // block) * block]
    q = quantize_mx(x, "mxfp8", block=block, scale_mode=mode)
    scale, codes = expected_mx(x, "e4m3", mode, block)
    assert np.array_equal(q.scales.reshape(-1), scale)
    assert np.array_equal(q.codes.reshape(-1), codes)
