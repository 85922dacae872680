"""Number formats of the engine: OCP MX (MXFP8/MXFP6/MXFP4) and NVFP4, bit-exact.

MX (OCP Microscaling Formats v1.0, section 6.3, as implemented by torchao ``to_mx``
with the FLOOR scale and by microxcaling ``_quantize_mx``): a block of ``k = 32``
values ``V`` shares one E8M0 scale ``X``::

    shared_exp = floor(log2(max_i |V_i|)) - emax_elem      # clamped below at -127
    X          = 2 ** shared_exp                           # E8M0 byte = shared_exp + 127
    P_i        = RNE_elem(clip(V_i / X, -max_elem, max_elem))

An all-zero block gets the smallest scale 2**-127; a block holding Inf or NaN gets the
NaN scale 0xFF (and dequantizes to NaN). Element casts round to nearest, ties to even,
and saturate (never overflow to Inf/NaN).

NVFP4 (NVIDIA; torchao ``nvfp4_quantize``): E2M1 elements in blocks of 16, each block
with an E4M3 scale, plus one float32 per-tensor scale::

    s_tensor = amax(|x|) / (448 * 6)
    s_block  = E4M3(clip(amax_block / 6 / s_tensor, 2**-6, 448))
    P_i      = RNE_e2m1(clip(x_i / (s_tensor * s_block), -6, 6))

ml_dtypes pitfalls handled here: float64 -> float8 casts round twice (we round to
float32 first and scale by powers of two, which is exact); e4m3fn overflows to NaN and
e5m2 to Inf (we clip first); the float8_e8m0fnu cast does not round to even (we compute
the scale exponent from the float32 exponent bits instead).
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

__all__ = [
    "ELEMENTS",
    "MX_FORMATS",
    "ElementFormat",
    "MXTensor",
    "NVFP4Tensor",
    "cast_element",
    "decode_element",
    "error_stats",
    "quantize_mx",
    "quantize_nvfp4",
    "round_to",
]

E8M0_BIAS = 127
E8M0_NAN = 255
MX_BLOCK = 32
NVFP4_BLOCK = 16


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
    x = np.asarray(x, dtype=np.float32)
    return np.clip(x, -fmt.max, fmt.max).astype(fmt.dtype).view(np.uint8) & (2**fmt.bits - 1)


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
    if dtype == "bf16":
        return x.astype(ml_dtypes.bfloat16).astype(np.float32)
    if dtype == "fp8":
        return np.clip(x, -448.0, 448.0).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    raise ValueError(f"unknown dtype {dtype!r}; expected fp32, bf16 or fp8")


@dataclass(frozen=True)
class MXTensor:
    """An MX-quantized array: element codes with one E8M0 scale per block of the last axis.

    Attributes
    ----------
    codes : uint8 array, shape ``(..., n)``; the element bit patterns.
    scales : uint8 array, shape ``(..., n // block)``; E8M0 bytes (value 2**(s-127), 255 = NaN).
    element : the element format.
    block : elements per scale (32).
    """

    codes: np.ndarray
    scales: np.ndarray
    element: ElementFormat
    block: int = MX_BLOCK

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape

    @property
    def nbytes(self) -> int:
        """Packed storage in bytes: ``bits/8`` per element plus one byte per scale."""
        return self.codes.size * self.element.bits // 8 + self.scales.size

    def scale_values(self) -> np.ndarray:
        """Scales as float64 (NaN for 0xFF)."""
        s = self.scales.astype(np.int64)
        out = np.ldexp(1.0, s - E8M0_BIAS)
        return np.where(s == E8M0_NAN, np.nan, out)

    def dequantize(self) -> np.ndarray:
        """Values as float64 (exact: element x power of two)."""
        vals = decode_element(self.codes, self.element)
        blocks = vals.reshape(*self.scales.shape, self.block)
        s = self.scales.astype(np.int64)[..., None]
        out = np.ldexp(blocks, s - E8M0_BIAS)
        out = np.where(s == E8M0_NAN, np.nan, out)
        return out.reshape(self.codes.shape)


def _blocks(x: np.ndarray, block: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 0 or x.shape[-1] % block:
        raise ValueError(f"the last axis ({x.shape[-1] if x.ndim else 'scalar'}) must be a "
                         f"multiple of the block size {block}")
    return x.reshape(*x.shape[:-1], x.shape[-1] // block, block)


def quantize_mx(x: np.ndarray, fmt: str = "mxfp8", block: int = MX_BLOCK) -> MXTensor:
    """Quantize along the last axis to an MX format (OCP MX v1.0 section 6.3, FLOOR scale).

    Parameters
    ----------
    x : array, last axis a multiple of ``block``; rounded to float32 first.
    fmt : ``mxfp8`` (= ``mxfp8_e4m3``), ``mxfp8_e5m2``, ``mxfp6_e2m3``, ``mxfp6_e3m2``,
        ``mxfp4`` or an element name (``e2m1``...).
    block : elements per shared scale (32 in the spec).
    """
    el = element_format(fmt)
    b = _blocks(x, block)
    with np.errstate(invalid="ignore"):
        amax = np.max(np.abs(b), axis=-1)
    _, e = np.frexp(amax)  # amax = m * 2**e, 0.5 <= m < 1, so floor(log2 amax) = e - 1
    shared = e.astype(np.int64) - 1 - el.emax
    shared = np.where(amax == 0, -E8M0_BIAS, np.maximum(shared, -E8M0_BIAS))
    nan = ~np.isfinite(amax) | (shared > E8M0_BIAS)
    shared = np.where(nan, 0, shared)
    scaled = np.ldexp(b, -shared[..., None].astype(np.int32))  # power of two: exact
    codes = cast_element(np.where(nan[..., None], 0.0, scaled), el)
    scales = np.where(nan, E8M0_NAN, shared + E8M0_BIAS).astype(np.uint8)
    return MXTensor(codes.reshape(np.shape(x)), scales, el, block)


@dataclass(frozen=True)
class NVFP4Tensor:
    """NVFP4: E2M1 codes, one E4M3 scale per 16 elements, one float32 per-tensor scale."""

    codes: np.ndarray
    scales: np.ndarray  # E4M3 bit patterns (uint8)
    tensor_scale: np.float32
    block: int = NVFP4_BLOCK

    @property
    def nbytes(self) -> int:
        """Packed bytes: half a byte per element, one per block scale, four for the tensor scale."""
        return self.codes.size // 2 + self.scales.size + 4

    def dequantize(self) -> np.ndarray:
        vals = decode_element(self.codes, ELEMENTS["e2m1"])
        blocks = vals.reshape(*self.scales.shape, self.block)
        sb = decode_element(self.scales, ELEMENTS["e4m3"])[..., None]
        total = np.float32(self.tensor_scale) * sb.astype(np.float32)  # float32, as quantized
        return (blocks * total.astype(np.float64)).reshape(self.codes.shape)


def quantize_nvfp4(x: np.ndarray, tensor_scale: float | None = None,
                   block: int = NVFP4_BLOCK) -> NVFP4Tensor:
    """Quantize along the last axis to NVFP4 (two-level scaling, torchao's algorithm).

    ``tensor_scale`` defaults to ``amax(|x|) / (448 * 6)`` (float32); an all-zero input
    uses 1. All arithmetic is float32, in torchao's order.
    """
    e4m3, e2m1 = ELEMENTS["e4m3"], ELEMENTS["e2m1"]
    b = _blocks(x, block)
    if tensor_scale is None:
        amax = np.float32(np.max(np.abs(b))) if b.size else np.float32(0)
        tensor_scale = amax / np.float32(e4m3.max * e2m1.max) if amax > 0 else np.float32(1)
    ts = np.float32(tensor_scale)
    block_scale = np.max(np.abs(b), axis=-1) / np.float32(e2m1.max)
    sb = cast_element(np.clip(block_scale / ts, np.float32(e4m3.min_normal), e4m3.max), e4m3)
    total = ts * decode_element(sb, e4m3).astype(np.float32)
    scaled = b / total[..., None]
    codes = cast_element(scaled, e2m1)
    return NVFP4Tensor(codes.reshape(np.shape(x)), sb, ts, block)


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
