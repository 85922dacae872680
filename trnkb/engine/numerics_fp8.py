"""FP8 (E4M3, E5M2) casts by float32 arithmetic: the MXFP8 fast path, no lookup table.

Rounding a magnitude ``a`` (float32, ``0 <= a < 2**(emax + 2)``) to an FP8 format with
``mbits`` mantissa bits, round to nearest, ties to even, takes two float32 additions::

    E = max(floor(log2 a), emin)          emin: exponent of the smallest normal
    M = 2**(E + 23 - mbits)               bits of a * 2**(23 - mbits), mantissa cleared,
                                          raised to at least those of 2**(emin + 23 - mbits)
    r = (a + M) - M

``a + M`` lies in ``[M, 2 M)``, where float32 spacing is ``2**(E - mbits)``: the FP8
spacing at ``a``, normal or subnormal. The float32 addition rounds to nearest even
there (``M`` is an even multiple of the spacing, so the parity of the sum is that of
the rounded FP8 mantissa), and ``r`` is exact (Sterbenz). No double rounding happens:
the only rounding is the one the FPU does on the exact sum.

Encoding: ``r * 2**-(127 - bias)`` is exact and lands FP8 subnormals on float32
subnormals and FP8 normals on float32 normals with the FP8 exponent field, so its bit
pattern shifted right by ``23 - mbits`` is the FP8 magnitude code. Saturation is a
minimum with the largest finite code; the sign bit comes from ``np.signbit``.

Every step is one contiguous NumPy pass (about 12 in all against the table path's
4-pass key plus a gather that costs as much as 8 passes); :func:`quantize_blocks`
runs them on 64 K-element chunks of the input, next to the block maxima.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trnkb.engine.numerics_fast import CHUNK_ELEMENTS, block_abs_max_bits

__all__ = ["FP8", "FP8Cast", "cast_codes", "quantize_blocks"]

_EXP = np.uint32(0x7F800000)
_SIGN = np.uint8(0x80)


@dataclass(frozen=True)
class FP8Cast:
    """Constants of the arithmetic cast to one FP8 format.

    ``mbits`` mantissa bits, ``bias`` exponent bias, ``emin`` exponent of the smallest
    normal, ``max_code`` the magnitude code of the largest finite value.
    """

    name: str
    mbits: int
    bias: int
    emin: int
    max_code: int
    max_value: float

    @property
    def up(self) -> np.float32:
        """2**(23 - mbits): moves the exponent of ``a`` to that of the magic number."""
        return np.float32(2.0 ** (23 - self.mbits))

    @property
    def floor_bits(self) -> np.uint32:
        """Bit pattern of the smallest magic number, 2**(emin + 23 - mbits)."""
        return np.uint32((127 + self.emin + 23 - self.mbits) << 23)

    @property
    def down(self) -> np.float32:
        """2**-(127 - bias): maps the FP8 grid onto float32 bit positions."""
        return np.float32(2.0 ** -(127 - self.bias))

    @property
    def shift(self) -> np.uint32:
        return np.uint32(23 - self.mbits)


# OCP MX v1.0 Table 2 (also neuroncore_facts.md C.1): E4M3 bias 7, smallest normal
# 2**-6, largest 448 = code 0x7E; E5M2 bias 15, smallest normal 2**-14, largest 57344
# = code 0x7B.
FP8: dict[str, FP8Cast] = {
    "e4m3": FP8Cast("e4m3", 3, 7, -6, 0x7E, 448.0),
    "e5m2": FP8Cast("e5m2", 2, 15, -14, 0x7B, 57344.0),
}


class _Buffers:
    """Scratch arrays for one chunk of ``n`` elements (three uint32, constants, sign)."""

    def __init__(self, f: FP8Cast, n: int) -> None:
        self.u = (np.empty(n, np.uint32), np.empty(n, np.uint32), np.empty(n, np.uint32))
        self.floor = np.full(n, f.floor_bits, np.uint32)
        self.top = np.full(n, f.max_code, np.uint8)
        self.sign = np.empty(n, np.bool_)


def _round_encode(f: FP8Cast, a: np.ndarray, m: np.ndarray, floor: np.ndarray,
                  top: np.ndarray, out: np.ndarray) -> None:
    """FP8 magnitude codes of float32 magnitudes ``a`` into ``out`` (uint8).

    ``a`` (float32, overwritten) must be below 2**(emax + 2); ``m`` is a float32
    scratch array and ``floor`` / ``top`` the constant arrays of :class:`_Buffers`.
    """
    np.multiply(a, f.up, out=m)
    mi = m.view(np.uint32)
    np.bitwise_and(mi, _EXP, out=mi)
    np.maximum(mi, floor, out=mi)  # an array operand: NumPy's scalar maximum is slow
    np.add(a, m, out=a)
    np.subtract(a, m, out=a)
    np.multiply(a, f.down, out=a)
    ai = a.view(np.uint32)
    np.right_shift(ai, f.shift, out=ai)
    np.copyto(out, ai, casting="unsafe")
    np.minimum(out, top, out=out)


def _add_sign(x: np.ndarray, sign: np.ndarray, out: np.ndarray) -> None:
    np.signbit(x, out=sign)
    s = sign.view(np.uint8)
    np.multiply(s, _SIGN, out=s)
    np.bitwise_or(out, s, out=out)


def cast_codes(x: np.ndarray, name: str) -> np.ndarray:
    """FP8 codes (uint8) of float32 ``x`` (any shape), RNE, saturating; NaN unspecified."""
    f = FP8[name]
    x = np.ascontiguousarray(x, dtype=np.float32)
    flat = x.reshape(-1)
    n = min(flat.size, CHUNK_ELEMENTS)
    buf = _Buffers(f, n)
    codes = np.empty(flat.size, np.uint8)
    a = buf.u[0].view(np.float32)
    m = buf.u[1].view(np.float32)
    limit = np.float32(f.max_value)
    with np.errstate(invalid="ignore"):
        for lo in range(0, flat.size, CHUNK_ELEMENTS):
            hi = min(flat.size, lo + CHUNK_ELEMENTS)
            k = hi - lo
            np.abs(flat[lo:hi], out=a[:k])
            np.minimum(a[:k], limit, out=a[:k])  # saturate first: keeps a * up finite
            _round_encode(f, a[:k], m[:k], buf.floor[:k], buf.top[:k], codes[lo:hi])
            _add_sign(flat[lo:hi], buf.sign[:k], codes[lo:hi])
    return codes.reshape(x.shape)


def quantize_blocks(x: np.ndarray, block: int, name: str,
                    multiplier: Callable[[np.ndarray], np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantize float32 ``x`` (flat, whole blocks) to FP8 block by block, chunk by chunk.

    Same contract as :func:`trnkb.engine.numerics_fast.quantize_blocks`: the product
    ``x * multiplier(amax_bits)`` per block (exact: a power of two) must stay below
    2**(emax + 2), which every MX scale rule guarantees for finite blocks. Returns
    element codes (uint8), block maxima (uint32 bit patterns) and multipliers (float32).
    """
    f = FP8[name]
    nb = x.size // block
    per = max(1, CHUNK_ELEMENTS // block)
    buf = _Buffers(f, per * block)
    a, b, _ = buf.u
    fa, fb = a.view(np.float32), b.view(np.float32)
    bits = x.view(np.uint32)
    amax = np.empty(nb, np.uint32)
    mult = np.empty(nb, np.float32)
    codes = np.empty(x.size, np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(0, nb, per):
            j = min(nb, i + per)
            lo, hi = i * block, j * block
            k = hi - lo
            m = multiplier(block_abs_max_bits(bits[lo:hi], block, buf.u, amax[i:j]))
            mult[i:j] = m
            s = fa[:k]  # |x|, left in the first buffer by block_abs_max_bits
            np.multiply(s.reshape(j - i, block), m[:, None], out=s.reshape(j - i, block))
            _round_encode(f, s, fb[:k], buf.floor[:k], buf.top[:k], codes[lo:hi])
            _add_sign(x[lo:hi], buf.sign[:k], codes[lo:hi])
    bad = amax >= _EXP
    if bad.any():
        codes.reshape(nb, block)[bad] = 0
    return codes, amax, mult
