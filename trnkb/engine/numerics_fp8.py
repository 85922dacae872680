"""FP8 (E4M3, E5M2) casts by float32 arithmetic: the MXFP8 fast path, no lookup table.

Rounding a magnitude ``a`` (float32) to an FP8 format with ``mbits`` mantissa bits,
round to nearest, ties to even, is one float32 addition::

    E = max(floor(log2 a), emin)          emin: exponent of the smallest normal
    M = 2**(E + 23 - mbits)               the magic number
    t = a + M

``t`` lies in ``[M, 2 M)``, where float32 spacing is ``2**(E - mbits)``: the FP8 spacing
at ``a``, normal or subnormal. The addition rounds the exact sum to nearest even there,
and ``M`` is an even multiple of the spacing, so ``t = M + j * spacing`` with ``j`` the
FP8 mantissa of ``a`` rounded to nearest even, leading bit included (8..16 for E4M3
normals, 0..8 below): the only rounding is the FPU's, on the exact sum. The FP8 code is
then ``2**mbits * (E - emin) + j``; saturation is a minimum with the largest finite code
and the sign bit comes from ``np.signbit``.

Two ways to get ``E`` and the code, both exact:

* exponent path (:func:`quantize_blocks`, MX blocks whose scale ``2**-k`` fits): ``E``
  comes from the element's exponent byte ``F`` and the block's ``S = emin + 127 - k``
  as ``max(F, S)``, so the scale never multiplies the elements (the magic number is
  ``M * 2**-k``, the FPU rounds on the same grid), and the code is the low byte of
  ``t`` plus ``2**mbits * (max(F, S) - S)``: one float32 addition and byte arithmetic;
* scaled path (:func:`cast_codes`, and chunks with blocks below about 2**-112 or from
  2**107 on): ``a`` is scaled first, ``M`` is the bit pattern of ``a * 2**(23 - mbits)``
  with the mantissa cleared, raised to its smallest value, and one uint32 multiplication
  by ``1 + 2**(23 - mbits)`` moves ``j`` next to the exponent field of ``t``, whose low
  byte is then the code (the inputs are pre-scaled so that field starts at 128).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trnkb.engine.numerics_fast import block_abs_max_bits, block_max, block_max_exponent

__all__ = ["CHUNK_ELEMENTS", "FP8", "FP8Cast", "cast_codes", "quantize_blocks"]

# Elements per chunk. Measured on the development machine (1 MiB L2 per core): 64 K
# 5-30% and 256 K 35-45% slower than 128 K (about 25 NumPy calls per chunk, each with a
# fixed cost, against scratch arrays that leave the L2 cache).
CHUNK_ELEMENTS = 1 << 17
_ROW = 1 << 12  # length of the constant rows broadcast against a chunk

_EXP = np.uint32(0x7F800000)
_ABS = np.uint32(0x7FFFFFFF)
_SIGN = np.uint8(0x80)


@dataclass(frozen=True)
class FP8Cast:
    """Constants of the arithmetic cast to one FP8 format.

    ``mbits`` mantissa bits, ``emin`` / ``emax`` exponents of the smallest normal and of
    the largest power of two, ``max_code`` the magnitude code of the largest finite value
    ``max_value``.
    """

    name: str
    mbits: int
    emin: int
    emax: int
    max_code: int
    max_value: float

    @property
    def pre(self) -> np.float32:
        """2**(128 - F0), F0 = 127 + emin + 23 - mbits: the smallest magic exponent -> 128."""
        return np.float32(2.0 ** (128 - (127 + self.emin + 23 - self.mbits)))

    @property
    def up(self) -> np.float32:
        """2**(23 - mbits): from the exponent of ``a`` to that of its magic number."""
        return np.float32(2.0 ** (23 - self.mbits))

    @property
    def times(self) -> np.uint32:
        """1 + 2**(23 - mbits): adds the mantissa field ``j`` to the exponent field."""
        return np.uint32(1 + (1 << (23 - self.mbits)))

    @property
    def shift(self) -> np.uint32:
        return np.uint32(23 - self.mbits)


# OCP MX v1.0 Table 2 (also neuroncore_facts.md C.1): E4M3 bias 7, smallest normal
# 2**-6, largest 448 = code 0x7E; E5M2 bias 15, smallest normal 2**-14, largest 57344
# = code 0x7B.
FP8: dict[str, FP8Cast] = {
    "e4m3": FP8Cast("e4m3", 3, -6, 8, 0x7E, 448.0),
    "e5m2": FP8Cast("e5m2", 2, -14, 15, 0x7B, 57344.0),
}
_FLOOR = np.uint32(128 << 23)  # the smallest magic number after the scaling by ``pre``


class _Buffers:
    """Scratch arrays for one chunk of ``n`` elements (three uint32, the sign) and rows."""

    def __init__(self, f: FP8Cast, n: int) -> None:
        self.u = (np.empty(n, np.uint32), np.empty(n, np.uint32), np.empty(n, np.uint32))
        self.floor = np.full(_ROW, _FLOOR, np.uint32)
        self.top = np.full(_ROW, f.max_code, np.uint8)
        self.sign = np.empty(n, np.bool_)


def _rows(fn: np.ufunc, a: np.ndarray, row: np.ndarray) -> None:
    """``fn(a, row, out=a)`` with ``row`` repeated along ``a`` (1-D, any length).

    A short constant row broadcast over whole rows keeps NumPy's contiguous SIMD loop
    (a scalar operand of ``np.maximum`` / ``np.minimum`` takes a slow loop) without a
    chunk-sized constant array in the cache.
    """
    w = row.size
    q = a.size // w * w
    body = a[:q].reshape(-1, w)
    fn(body, row, out=body)
    if q < a.size:
        fn(a[q:], row[: a.size - q], out=a[q:])


def _round_encode(f: FP8Cast, a: np.ndarray, m: np.ndarray, buf: _Buffers,
                  out: np.ndarray) -> None:
    """FP8 magnitude codes of float32 magnitudes ``a * 2**-pre`` into ``out`` (uint8).

    ``a`` (float32, already multiplied by ``f.pre``; overwritten) must be below
    ``2**(emax + 2) * f.pre``; ``m`` is a float32 scratch array of the same size.
    """
    np.multiply(a, f.up, out=m)
    mi = m.view(np.uint32)
    np.bitwise_and(mi, _EXP, out=mi)
    _rows(np.maximum, mi, buf.floor)
    np.add(a, m, out=a)
    ai = a.view(np.uint32)
    np.multiply(ai, f.times, out=ai)  # wraps modulo 2**32 by design
    np.right_shift(ai, f.shift, out=ai)
    np.copyto(out, ai, casting="unsafe")  # the low byte
    _rows(np.minimum, out, buf.top)


def _add_sign(sign: np.ndarray, out: np.ndarray) -> None:
    """Set bit 7 of ``out`` where ``sign`` (bool, from ``np.signbit``; overwritten) is set."""
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
            np.signbit(flat[lo:hi], out=buf.sign[:k])
            np.abs(flat[lo:hi], out=a[:k])
            np.minimum(a[:k], limit, out=a[:k])  # saturate first: keeps a * up finite
            np.multiply(a[:k], f.pre, out=a[:k])
            _round_encode(f, a[:k], m[:k], buf, codes[lo:hi])
            _add_sign(buf.sign[:k], codes[lo:hi])
    return codes.reshape(x.shape)


def quantize_blocks(x: np.ndarray, block: int, name: str,
                    multiplier: Callable[[np.ndarray], np.ndarray],
                    emax: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantize float32 ``x`` (flat, whole blocks) to FP8 block by block, chunk by chunk.

    Same contract as :func:`trnkb.engine.numerics_fast.quantize_blocks`: the product
    ``x * multiplier(amax_bits)`` per block (exact: a power of two ``2**k``) must stay
    below 2**(emax_elem + 2), which every MX scale rule guarantees for finite blocks.
    Returns element codes (uint8), block maxima (uint32 bit patterns) and multipliers
    (float32).

    ``emax`` promises ``k = emax - floor(log2 amax)`` wherever that lies in
    [-127, 127] (FLOOR: ``emax_elem``; TRN3: ``emax_elem - 1``): ``k`` then follows from
    the exponent field alone, found on one byte per element
    (:func:`~trnkb.engine.numerics_fast.block_max_exponent`), the maxima come back with
    a zero mantissa and ``multiplier`` runs once, on all of them, after the loop.

    With ``emax`` the scaling is never applied to the elements: with
    ``S = emin + 127 - k`` per block, the magic number of an element with exponent field
    ``F`` is ``2**(max(F, S) - 127 + 23 - mbits)`` (the unscaled twin of ``M``: the FPU
    rounds on the same grid) and its code ``2**mbits * (max(F, S) - S) + j``, ``j`` the
    low byte of ``|x| + M``. A chunk holding a finite block whose ``S`` or exponent field
    does not fit a byte and a finite ``M`` (maxima below 2**-112 or from 2**107 on) takes
    the scaled path instead, as RCEIL does.
    """
    f = FP8[name]
    nb = x.size // block
    per = max(1, CHUNK_ELEMENTS // block)
    buf = _Buffers(f, per * block)
    e8 = (np.empty(per * block, np.uint8), np.empty(per * block, np.uint8),
          np.empty(per * block, np.uint8))
    bits = x.view(np.uint32)
    amax = np.empty(nb, np.uint32)
    field = np.empty(nb, np.uint8)  # exponent field that sets each block's k
    scaled = np.zeros(nb, np.bool_)  # blocks that took the scaled path
    mult = np.empty(nb, np.float32)
    codes = np.empty(x.size, np.uint8)
    lim = 254 - (23 - f.mbits)  # the largest exponent field whose M is finite
    shift = (f.emax if emax is None else emax) - f.emin  # S = field - shift
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(0, nb, per):
            j = min(nb, i + per)
            lo, hi = i * block, j * block
            k = hi - lo
            np.signbit(x[lo:hi], out=buf.sign[:k])  # while the chunk is in cache
            out = codes[lo:hi]
            fm: np.ndarray | None
            if emax is not None:
                fm = block_max_exponent(bits[lo:hi], block, e8, field[i:j])
                np.bitwise_and(bits[lo:hi], _ABS, out=buf.u[0][:k])
            else:
                fm = _rceil_field(bits[lo:hi], block, buf, e8, field[i:j])
            if fm is not None and _fits(fm, shift, lim, buf.u[0][:k], block):
                _encode_by_exponent(f, block, fm - np.uint8(shift), buf, e8, k, out)
            else:
                am = block_abs_max_bits(bits[lo:hi], block, buf.u, amax[i:j])
                m = multiplier(am)
                mult[i:j] = m
                scaled[i:j] = True
                s = buf.u[0][:k].view(np.float32)
                np.multiply(s.reshape(j - i, block), (m * f.pre)[:, None],
                            out=s.reshape(j - i, block))
                _round_encode(f, s, buf.u[1][:k].view(np.float32), buf, out)
            _add_sign(buf.sign[:k], out)
    # every other multiplier at once, from a maximum 2**(field - 127): the same k
    if scaled.any():
        fast = ~scaled
        amax[fast] = field[fast].astype(np.uint32) << np.uint32(23)
        mult[fast] = multiplier(amax[fast])
    else:
        np.left_shift(field, np.uint32(23), out=amax, dtype=np.uint32)
        mult = multiplier(amax)
    bad = amax >= _EXP
    if bad.any():
        codes.reshape(nb, block)[bad] = 0
    return codes, amax, mult


def _rceil_field(bits: np.ndarray, block: int, buf: _Buffers, e8: tuple[np.ndarray, ...],
                 out: np.ndarray) -> np.ndarray | None:
    """RCEIL's exponent field per block, ``F_max + [amax > 1.75 * 2**(F_max - 127)]``.

    RCEIL rounds ``amax / max_elem`` up to a power of two; both FP8 formats have
    ``max_elem = 1.75 * 2**emax``, so that power is ``2**(F - 127 - emax)`` with ``F`` as
    returned (into ``out``): adding 0x1FFFFF to |x| carries into the exponent exactly
    when the mantissa exceeds 1.75's, and the float32 quotient never rounds across that
    power of two. Leaves the exponent bytes in ``e8[0]`` and |x| in ``buf.u[0]``. Nothing
    when the chunk holds a NaN or an Inf: the caller takes the scaled path.
    """
    n = bits.size
    np.right_shift(bits, np.uint32(23), out=e8[0][:n], casting="unsafe")
    if int(e8[0][:n].max()) == 255:
        return None
    a, t = buf.u[0][:n], buf.u[1][:n]
    np.bitwise_and(bits, _ABS, out=a)
    np.add(a, np.uint32(0x1FFFFF), out=t)
    np.right_shift(t, np.uint32(23), out=e8[1][:n], casting="unsafe")
    return block_max(n, block, (e8[1], e8[2]), out)


def _fits(field: np.ndarray, shift: int, lim: int, a: np.ndarray, block: int) -> bool:
    """Whether every block fits the exponent path: ``shift < field <= lim``.

    Blocks with a NaN or an Inf (field 255) get zero codes later, and all-zero blocks
    (field 0 and every bit of |x|, ``a``, zero) get code 0 from any ``S``: both fit.
    Field 0 with a subnormal float32 inside does not.
    """
    top, bottom = int(field.max()), int(field.min())
    if bottom > shift and top <= lim:
        return True
    odd = field[(field > 0) & (field < 255)]
    if odd.size and (int(odd.min()) <= shift or int(odd.max()) > lim):
        return False
    zero = field == 0
    return not zero.any() or not a.reshape(-1, block)[zero].any()


def _encode_by_exponent(f: FP8Cast, block: int, low: np.ndarray, buf: _Buffers,
                        e8: tuple[np.ndarray, ...], k: int, out: np.ndarray) -> None:
    """Magnitude codes of one chunk from |x| (``buf.u[0]``, uint32 bits) and the exponent
    fields (``e8[0]``) of its elements, ``low`` (uint8) the field ``S`` per block."""
    rep = np.repeat(low, block)
    fc = np.maximum(e8[0][:k], rep, out=e8[0][:k])  # max(F, S)
    g = np.add(fc, np.uint8(23 - f.mbits), out=e8[1][:k])  # exponent field of M
    mi = buf.u[1][:k]
    np.copyto(mi, g, casting="unsafe")
    mi <<= np.uint32(23)
    a = buf.u[0][:k]
    np.add(a.view(np.float32), mi.view(np.float32), out=a.view(np.float32))
    np.copyto(out, a, casting="unsafe")  # j: the low byte of |x| + M
    d = np.subtract(fc, rep, out=e8[1][:k])
    np.multiply(d, np.uint8(1 << f.mbits), out=d)
    np.add(out, d, out=out)
    _rows(np.minimum, out, buf.top)
