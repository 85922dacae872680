"""Element formats of the engine (FP8, FP6, FP4) and element-wise casts, bit-exact.

The five OCP MX element formats (OCP Microscaling Formats v1.0, Table 2) as
:class:`ElementFormat` records, casts of float32 values to their codes (round to
nearest, ties to even, saturating at the largest finite value), decoding, rounding to
the engine's dtypes and error statistics. The block-scaled formats built on them live
in :mod:`trnkb.engine.numerics` (MX) and :mod:`trnkb.engine.numerics_nvfp4` (NVFP4).

ml_dtypes pitfalls handled here: float64 -> float8 casts round twice (we round to
float32 first and scale by powers of two, which is exact); e4m3fn overflows to NaN and
e5m2 to Inf (casts saturate here); the float8_e8m0fnu cast does not round to even (scale
exponents come from float32 exponent bits instead).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from trnkb.engine import numerics_fast


@dataclass(frozen=True)
class ElementFormat:
    """A small floating-point element format (sign, ``ebits`` exponent, ``mbits`` mantissa).

    ``emax`` is the exponent of the largest power of two the format holds (OCP MX
    ``emax_elem``); ``max`` its largest finite value.
    """

    name: str
    dtype: type
    ebits: int
    mbits: int
    bias: int
    emax: int
    max: float

    @property
    def bits(self) -> int:
        return 1 + self.ebits + self.mbits

    @property
    def min_normal(self) -> float:
        return 2.0 ** (1 - self.bias)

    @property
    def min_subnormal(self) -> float:
        return 2.0 ** (1 - self.bias - self.mbits)

    @property
    def unit_roundoff(self) -> float:
        """Largest relative rounding error of a normal value, 2**-(mbits+1)."""
        return 2.0 ** -(self.mbits + 1)


# Source: torchao mx_formats/constants.py and OCP MX v1.0 (see neuroncore_facts.md C.1).
ELEMENTS: dict[str, ElementFormat] = {
    f.name: f
    for f in (
        ElementFormat("e4m3", ml_dtypes.float8_e4m3fn, 4, 3, 7, 8, 448.0),
        ElementFormat("e5m2", ml_dtypes.float8_e5m2, 5, 2, 15, 15, 57344.0),
        ElementFormat("e2m3", ml_dtypes.float6_e2m3fn, 2, 3, 1, 2, 7.5),
        ElementFormat("e3m2", ml_dtypes.float6_e3m2fn, 3, 2, 3, 4, 28.0),
        ElementFormat("e2m1", ml_dtypes.float4_e2m1fn, 2, 1, 1, 2, 6.0),
    )
}

MX_FORMATS: dict[str, str] = {
    "mxfp8": "e4m3",
    "mxfp8_e4m3": "e4m3",
    "mxfp8_e5m2": "e5m2",
    "mxfp6_e2m3": "e2m3",
    "mxfp6_e3m2": "e3m2",
    "mxfp4": "e2m1",
}


def element_format(name: str) -> ElementFormat:
    """An element format by element name (``e4m3``) or MX name (``mxfp4``)."""
    key = MX_FORMATS.get(name, name)
    if key not in ELEMENTS:
        known = ", ".join([*MX_FORMATS, *ELEMENTS])
        raise ValueError(f"unknown number format {name!r}; known: {known}")
    return ELEMENTS[key]


def _lut(fmt: ElementFormat) -> np.ndarray:
    codes = np.arange(2**fmt.bits, dtype=np.uint8)
    return codes.view(fmt.dtype).astype(np.float64)


_LUTS = {name: _lut(f) for name, f in ELEMENTS.items()}


def cast_element(x: np.ndarray, fmt: ElementFormat) -> np.ndarray:
    """Round float32 values to ``fmt`` (RNE, saturating); return the bit patterns (uint8)."""
    return numerics_fast.cast_codes(np.asarray(x, dtype=np.float32), fmt.name)


def decode_element(codes: np.ndarray, fmt: ElementFormat) -> np.ndarray:
    """Values (float64) of element bit patterns."""
    return _LUTS[fmt.name][np.asarray(codes, dtype=np.uint8)]


def round_to(x: np.ndarray, dtype: str) -> np.ndarray:
    """Round to an engine dtype (``fp32``, ``bf16``, ``fp8``) and back to float32.

    ``fp8`` is OCP E4M3 with saturation at +-448 (hardware casts saturate; ml_dtypes
    would give NaN). Rounding is to nearest, ties to even; float64 input is rounded to
    float32 first (one extra rounding, relevant only at exact float32 ties).
    """
    x = np.asarray(x, dtype=np.float32)
    if dtype == "fp32":
        return x
    out: np.ndarray
    if dtype == "bf16":
        out = x.astype(ml_dtypes.bfloat16).astype(np.float32)
        return out
    if dtype == "fp8":
        out = np.clip(x, -448.0, 448.0).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
        return out
    raise ValueError(f"unknown dtype {dtype!r}; expected fp32, bf16 or fp8")


def as_blocks(x: np.ndarray, block: int) -> np.ndarray:
    """``x`` as float32, shape ``(..., n // block, block)``; ``n`` must be whole blocks."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim == 0 or x.shape[-1] % block:
        raise ValueError(f"the last axis ({x.shape[-1] if x.ndim else 'scalar'}) must be a "
                         f"multiple of the block size {block}")
    return x.reshape(*x.shape[:-1], x.shape[-1] // block, block)


def error_stats(reference: np.ndarray, approx: np.ndarray) -> dict[str, float]:
    """Error of ``approx`` against ``reference`` (both as float64).

    Returns ``rel_rms = sqrt(mean((a - r)^2)) / sqrt(mean(r^2))``,
    ``max_abs = max(abs(a - r))`` and ``max_rel = max(abs(a - r)) / max(abs(r))``.
    """
    r = np.asarray(reference, dtype=np.float64)
    a = np.asarray(approx, dtype=np.float64)
    d = a - r
    scale = float(np.sqrt(np.mean(r * r))) if r.size else 0.0
    rms = float(np.sqrt(np.mean(d * d))) if d.size else 0.0
    rmax = float(np.max(np.abs(r))) if r.size else 0.0
    max_abs = float(np.max(np.abs(d))) if d.size else 0.0
    return {
        "rel_rms": rms / scale if scale else rms,
        "max_abs": max_abs,
        "max_rel": max_abs / rmax if rmax else max_abs,
    }
