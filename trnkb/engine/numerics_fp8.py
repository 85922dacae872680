"""MXFP8 (E4M3, E5M2) quantisation by one compiled kernel (numba), integer arithmetic only.

Per block of ``block`` float32 values (bit patterns ``u``, sign cleared):

* block maximum: the largest ``u`` (non-negative floats order as their bits); from
  0x7F800000 on the block holds a NaN or an Inf and gets scale byte 255 and zero codes;
* scale byte ``b = e + 127`` (:class:`trnkb.engine.numerics.ScaleMode`): FLOOR and TRN3
  ``max(F_amax - emax, 0)`` (``F_amax`` the exponent field of the maximum; ``emax`` the
  element's, one less for TRN3); RCEIL the exponent field of the float32 quotient
  ``amax / max_elem`` rounded up to a power of two (0 when the quotient is at most
  2**-127);
* element codes: with ``S = emin + b`` (the exponent field, in input units, of the
  format's smallest normal after scaling by ``2**-e``), an element with exponent field
  ``F`` and 24-bit significand ``sig`` is rounded to a multiple of ``2**s``,
  ``s = 23 - mbits + max(S - F, 0)`` (the FP8 spacing at its magnitude, normal or
  subnormal), to nearest, ties to even, by integer addition and shift: ``r``. Its code
  is ``2**mbits * (max(F, S) - S) + r`` (``r`` includes the leading bit, so a carry
  moves into the next binade), saturated at the largest finite code, with the sign bit.

A float32 subnormal is ``sig = m`` at ``F = 1`` (no leading bit), exact when ``S >= 1``
(it then lands in the FP8 subnormal range); blocks with ``S < 1`` (FLOOR maxima below
2**-112 for E4M3, 2**-97 for E5M2) normalise subnormals first, in a scalar loop. The
element loop of the other blocks has no branch (minimum, maximum, selects) so LLVM
vectorises it. The kernel is :mod:`trnkb.engine.numerics_fp8_kernel`, imported (with
numba) on the first call only, so ``import trnkb`` stays light; numba caches the compiled
code on disk beside it, or in its user cache directory (``~/.cache/numba``,
``NUMBA_CACHE_DIR``) when the package directory is read-only, and compiles it in every
process when neither is writable.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

MODE_FLOOR = 0  # FLOOR and TRN3: b = max(F_amax - emax, 0)
MODE_RCEIL = 1  # b from the float32 quotient amax / max_elem rounded up
MODE_FIXED = 2  # b = 127 (scale 1) and no NaN/Inf test: a plain saturating cast


@dataclass(frozen=True)
class FP8Cast:
    """One FP8 format: ``mbits`` mantissa bits, ``emin`` / ``emax`` exponents of the
    smallest normal and of the largest power of two, ``max_code`` the magnitude code of
    the largest finite value ``max_value``."""

    name: str
    mbits: int
    emin: int
    emax: int
    max_code: int
    max_value: float


# OCP MX v1.0 Table 2 (also neuroncore_facts.md C.1): E4M3 bias 7, smallest normal
# 2**-6, largest 448 = code 0x7E; E5M2 bias 15, smallest normal 2**-14, largest 57344
# = code 0x7B.
FP8: dict[str, FP8Cast] = {
    "e4m3": FP8Cast("e4m3", 3, -6, 8, 0x7E, 448.0),
    "e5m2": FP8Cast("e5m2", 2, -14, 15, 0x7B, 57344.0),
}


@functools.cache
def _kernel() -> Any:
    """The compiled block kernel (:mod:`trnkb.engine.numerics_fp8_kernel`; imports numba)."""
    from trnkb.engine.numerics_fp8_kernel import kernel

    return kernel


def _run(x: np.ndarray, block: int, name: str, mode: int, emax: int
         ) -> tuple[np.ndarray, np.ndarray]:
    f = FP8[name]
    flat = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
    nb = flat.size // block if block else 0
    codes = np.empty(flat.size, np.uint8)
    scales = np.empty(nb, np.uint8)
    if nb:
        _kernel()(flat.view(np.uint32), nb, block, mode, emax, f.emin, f.mbits,
                  f.max_code, f.max_value, codes, scales)
    return codes, scales


def cast_codes(x: np.ndarray, name: str) -> np.ndarray:
    """FP8 codes (uint8) of float32 ``x`` (any shape), RNE, saturating; NaN unspecified."""
    x = np.asarray(x, dtype=np.float32)
    codes, _ = _run(x, x.size, name, MODE_FIXED, 0)
    return codes.reshape(x.shape)


def quantize_blocks(x: np.ndarray, block: int, name: str, rceil: bool,
                    emax: int) -> tuple[np.ndarray, np.ndarray]:
    """Element codes (uint8) and E8M0 scale bytes (uint8) of float32 ``x`` (flat, whole
    blocks of ``block``). ``rceil`` selects RCEIL, else FLOOR with the given ``emax``
    (the element's, or one less for TRN3)."""
    return _run(x, block, name, MODE_RCEIL if rceil else MODE_FLOOR, emax)
