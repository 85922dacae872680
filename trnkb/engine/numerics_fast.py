"""Vectorised casts to small float formats: lookup tables on float32 bit patterns.

Rounding a float32 to a format with at most 3 mantissa bits (round to nearest, ties to
even, saturating) depends only on its sign, exponent, top 6 mantissa bits and whether any
lower bit is set (the sticky bit): the round bit is mantissa bit 19 or higher.
:func:`lut_key` folds the 16 low bits into bit 16 and keeps bits 16..31: a 16-bit key. A
64 KiB table per format, filled once from ``ml_dtypes`` casts of one representative value
per key, then maps keys to element codes with one gather. No Python loop runs per element;
:func:`quantize_blocks` walks the input in chunks of ~64 KiB so every temporary stays in the
CPU cache.

Block maxima use a shift tree on the flat chunk (max of element i and i+16, then +8,
then +4: contiguous SIMD passes), then three short strided passes over the 4 partial
maxima left per block, instead of one short reduction per block.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import ml_dtypes
import numpy as np

KEY_BITS = 16
_SHIFT = 32 - KEY_BITS
_LOW = np.uint32((1 << _SHIFT) - 1)
_ABS = np.uint32(0x7FFFFFFF)
CHUNK_ELEMENTS = 1 << 16

_DTYPES = {
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "e2m3": ml_dtypes.float6_e2m3fn,
    "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m1": ml_dtypes.float4_e2m1fn,
}
_MAX = {"e4m3": 448.0, "e5m2": 57344.0, "e2m3": 7.5, "e3m2": 28.0, "e2m1": 6.0}
_BITS = {"e4m3": 8, "e5m2": 8, "e2m3": 6, "e3m2": 6, "e2m1": 4}


@cache
def cast_table(name: str) -> np.ndarray:
    """Element code (uint8) for every 16-bit key of a float32, RNE and saturating.

    Keys of NaN map to whatever ml_dtypes gives; callers never look them up for data
    (a block with a NaN or an Inf gets the NaN scale and zero codes).
    """
    rep = (np.arange(1 << KEY_BITS, dtype=np.uint32) << np.uint32(_SHIFT)).view(np.float32)
    with np.errstate(invalid="ignore"):
        clipped = np.clip(rep, -_MAX[name], _MAX[name])
        codes = clipped.astype(_DTYPES[name]).view(np.uint8)
    return codes & np.uint8((1 << _BITS[name]) - 1)


def lut_key(bits: np.ndarray, out: np.ndarray) -> np.ndarray:
    """16-bit table key of float32 bit patterns (uint32), written into ``out`` (uint32)."""
    np.bitwise_and(bits, _LOW, out=out)
    out += _LOW  # bit 16 set iff any of bits 0..15 was
    out |= bits
    out >>= _SHIFT
    return out


def cast_codes(x: np.ndarray, name: str) -> np.ndarray:
    """Element codes (uint8) of float32 values ``x`` (any shape), RNE, saturating."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    key = lut_key(x.view(np.uint32), np.empty(x.shape, np.uint32))
    return cast_table(name).take(key)


def block_abs_max_bits(bits: np.ndarray, block: int, tmp: tuple[np.ndarray, ...],
                       out: np.ndarray | None = None) -> np.ndarray:
    """Bit pattern of max ``|x|`` per block of ``block`` float32 values (flat uint32 input).

    ``tmp`` holds two uint32 scratch buffers of at least ``bits.size`` elements (both
    overwritten). NaN bit patterns exceed +Inf's (0x7F800000), so a block holding a NaN
    reports a NaN.
    """
    np.bitwise_and(bits, _ABS, out=tmp[0][: bits.size])
    return block_max(bits.size, block, tmp, out)


def block_max(n: int, block: int, tmp: tuple[np.ndarray, ...],
              out: np.ndarray | None) -> np.ndarray:
    """Maximum per block of the first ``n`` values of ``tmp[0]`` (``tmp[1]``: scratch)."""
    a, b = tmp[0], tmp[1]
    if block & (block - 1):
        return a[:n].reshape(-1, block).max(axis=1, out=out)
    src, dst, used, step = a, b, 0, block // 2
    while step >= 4:  # contiguous passes while they halve a lot of work
        np.maximum(src[: n - used - step], src[step: n - used], out=dst[: n - used - step])
        src, dst, used, step = dst, src, used + step, step // 2
    if out is None:
        out = np.empty(n // block, a.dtype)
    np.maximum(src[: n - used: block], src[1: n - used: block], out=out)
    for k in range(2, 2 * step):  # the last few partial maxima: short strided passes
        np.maximum(out, src[k: n - used: block], out=out)
    return out


def block_amax_bits(x: np.ndarray, block: int) -> np.ndarray:
    """Bit pattern (uint32) of max ``|x|`` per block of float32 ``x`` (flat, whole blocks)."""
    nb = x.size // block
    per = max(1, CHUNK_ELEMENTS // block)
    tmp = (np.empty(per * block, np.uint32), np.empty(per * block, np.uint32))
    bits = x.view(np.uint32)
    amax = np.empty(nb, np.uint32)
    for i in range(0, nb, per):
        j = min(nb, i + per)
        amax[i:j] = block_abs_max_bits(bits[i * block: j * block], block, tmp)
    return amax


def cast_scaled_blocks(x: np.ndarray, block: int, name: str, mult: np.ndarray) -> np.ndarray:
    """Element codes (uint8) of ``x * mult`` per block (float32 product, then RNE cast)."""
    lut = cast_table(name)
    nb = x.size // block
    per = max(1, CHUNK_ELEMENTS // block)
    scaled = np.empty(per * block, np.float32)
    key = np.empty(per * block, np.uint32)
    codes = np.empty(x.size, np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(0, nb, per):
            j = min(nb, i + per)
            lo, hi = i * block, j * block
            sc = scaled[: hi - lo]
            np.multiply(x[lo:hi].reshape(j - i, block), mult[i:j, None],
                        out=sc.reshape(j - i, block))
            np.take(lut, lut_key(sc.view(np.uint32), key[: hi - lo]), out=codes[lo:hi])
    return codes


def quantize_blocks(x: np.ndarray, block: int, name: str,
                    multiplier: Callable[[np.ndarray], np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantize float32 ``x`` (flat, whole blocks) block by block, one chunk at a time.

    ``multiplier(amax_bits)`` maps the bit patterns of the blocks' max ``|x|`` (uint32) to
    the float32 power of two each block is multiplied by (exact) before the cast. Blocks
    whose max is NaN or Inf get zero codes.

    Returns element codes (uint8, like ``x``), block maxima (uint32 bit patterns) and the
    multipliers (float32), one per block.
    """
    lut = cast_table(name)
    nb = x.size // block
    per = max(1, CHUNK_ELEMENTS // block)
    a, b = np.empty(per * block, np.uint32), np.empty(per * block, np.uint32)
    bits = x.view(np.uint32)
    amax = np.empty(nb, np.uint32)
    mult = np.empty(nb, np.float32)
    codes = np.empty(x.size, np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(0, nb, per):
            j = min(nb, i + per)
            lo, hi = i * block, j * block
            m = multiplier(block_abs_max_bits(bits[lo:hi], block, (a, b), amax[i:j]))
            mult[i:j] = m
            sc = a[: hi - lo].view(np.float32)  # the chunk is still in cache
            np.multiply(x[lo:hi].reshape(j - i, block), m[:, None], out=sc.reshape(j - i, block))
            np.take(lut, lut_key(sc.view(np.uint32), b[: hi - lo]), out=codes[lo:hi])
    bad = amax >= 0x7F800000
    if bad.any():
        codes.reshape(nb, block)[bad] = 0
    return codes, amax, mult
