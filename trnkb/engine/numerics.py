"""Number formats of the engine: OCP MX (MXFP8/MXFP6/MXFP4) and NVFP4, bit-exact.

MX (OCP Microscaling Formats v1.0, section 6.3): a block of ``k = 32`` values ``V``
shares one E8M0 scale ``X = 2**e`` (byte ``e + 127``; 255 is NaN) and each element is
``P_i = RNE_elem(V_i / X)``, saturating at the largest element. Three rules for ``e``
(:class:`ScaleMode`, argument ``scale_mode``)::

    floor  e = floor(log2(amax)) - emax_elem            OCP MX v1.0 (torchao FLOOR)
    rceil  e = ceil(log2(fp32(amax / max_elem)))        NVIDIA cvt.rp.satfinite.ue8m0,
                                                        Transformer Engine, torchao RCEIL
    trn3   e = floor(log2(amax)) - (emax_elem - 1)      AWS nisa.quantize_mx (MXFP8 only)

``e`` is clamped to [-127, 127]; an all-zero block gets 2**-127; a block holding a NaN or
an Inf gets the NaN scale 255 and zero codes (the spec has no other way to carry a
non-finite value; torchao differs here, see docs/number-formats.md).

NVFP4 (NVIDIA; torchao ``nvfp4_quantize``, same float32 operation order): E2M1 elements
in blocks of 16 with an E4M3 block scale, and in the two-level form one float32
per-tensor scale::

    s_tensor = amax(|x|) / (448 * 6)                    # NaN if x holds a NaN
    s_block  = E4M3(clip(amax_block / 6 / s_tensor, 2**-6, 448))
    P_i      = RNE_e2m1(clip(x_i * ((1 / s_tensor) / s_block), -6, 6))

The single-level form drops ``s_tensor`` (``x_i * (1 / s_block)``).

ml_dtypes pitfalls handled here: float64 -> float8 casts round twice (we round to
float32 first and scale by powers of two, which is exact); e4m3fn overflows to NaN and
e5m2 to Inf (casts saturate here); the float8_e8m0fnu cast does not round to even (scale
exponents come from float32 exponent bits instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import ml_dtypes
import numpy as np

from trnkb.engine import numerics_fast, numerics_fp8

__all__ = [
    "ELEMENTS",
    "MX_FORMATS",
    "ElementFormat",
    "MXTensor",
    "NVFP4Scaling",
    "NVFP4Tensor",
    "ScaleMode",
    "cast_element",
    "decode_element",
    "error_stats",
    "mx_scale_bytes",
    "nvfp4_tensor_scale",
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


class ScaleMode(StrEnum):
    """How an MX block's E8M0 scale exponent follows from its largest magnitude.

    FLOOR: OCP MX v1.0 section 6.3, ``floor(log2(amax)) - emax_elem`` (largest values of
    a block may saturate). RCEIL: NVIDIA's rule (cuBLAS "1D block quantization", PTX
    ``cvt.rp.satfinite.ue8m0x2.f32``, Transformer Engine, torchao RCEIL): the float32
    quotient ``amax / max_elem`` rounded up to a power of two (never saturates). TRN3: AWS
    ``nisa.quantize_mx`` on Trainium3, ``floor(log2(amax)) - (E_max - 1)`` with E_max 8
    (E4M3) or 15 (E5M2), a scale twice the OCP one; the Neuron docs state it for MXFP8
    only.
    """

    FLOOR = "floor"
    RCEIL = "rceil"
    TRN3 = "trn3"


def _mode(scale_mode: str | ScaleMode, el: ElementFormat) -> ScaleMode:
    try:
        mode = ScaleMode(scale_mode)
    except ValueError:
        known = ", ".join(m.value for m in ScaleMode)
        raise ValueError(f"unknown MX scale mode {scale_mode!r}; known: {known}") from None
    if mode is ScaleMode.TRN3 and el.name not in ("e4m3", "e5m2"):
        raise ValueError(f"scale mode 'trn3' (nisa.quantize_mx) is stated for MXFP8 only, "
                         f"not {el.name}")
    return mode


def mx_scale_bytes(amax: np.ndarray, fmt: str = "mxfp8",
                   scale_mode: str | ScaleMode = ScaleMode.FLOOR) -> np.ndarray:
    """E8M0 scale bytes (uint8) of blocks whose largest magnitude is ``amax`` (float32).

    The byte is ``e + 127`` with ``e`` from :class:`ScaleMode`, clamped to [-127, 127];
    255 (NaN) when ``amax`` is NaN or infinite.
    """
    el = element_format(fmt)
    mode = _mode(scale_mode, el)
    bits = np.ascontiguousarray(amax, dtype=np.float32).view(np.uint32)
    with np.errstate(invalid="ignore", over="ignore"):
        return _scale_bytes(bits, _multiplier(bits, el, mode))


_EXP = np.uint32(0x7F800000)


def _multiplier(amax_bits: np.ndarray, el: ElementFormat, mode: ScaleMode) -> np.ndarray:
    """2**-e (float32) per block from the bit pattern of its amax (garbage if non-finite).

    Works on float32 bit patterns: the multiplier's exponent field is 127 - e.
    """
    if mode is ScaleMode.RCEIL:
        d = (amax_bits.view(np.float32) / np.float32(el.max)).view(np.uint32)
        # round the quotient up to a power of two P: any mantissa bit carries into the
        # exponent; a subnormal quotient <= 2**-127 rounds to 2**-127 (bits 0 here)
        p = (d + np.uint32(0x7FFFFF)) & _EXP
        small = d <= np.uint32(1 << 22)
        if small.any():
            p[small] = 0
        np.subtract(np.uint32(254 << 23), p, out=p)
        return p.view(np.float32)
    emax = el.emax - (mode is ScaleMode.TRN3)
    # e = max(floor(log2 amax) - emax, -127), so 127 - e = min(254 + emax - exp, 254)
    field = amax_bits >> 23
    np.subtract(np.uint32(254 + emax), field, out=field)
    np.minimum(field, np.uint32(254), out=field)
    field <<= np.uint32(23)
    return field.view(np.float32)


def _scale_bytes(amax_bits: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """E8M0 byte e + 127 = 254 - (exponent field of 2**-e); 255 where amax is not finite."""
    field = mult.view(np.uint32) >> 23
    np.subtract(np.uint32(254), field, out=field)
    out = field.astype(np.uint8)
    bad = amax_bits >= _EXP
    if bad.any():
        out[bad] = E8M0_NAN
    return out


@dataclass(frozen=True)
class MXTensor:
    """An MX-quantized array: element codes with one E8M0 scale per block of the last axis.

    Attributes
    ----------
    codes : uint8 array, shape ``(..., n)``; the element bit patterns.
    scales : uint8 array, shape ``(..., n // block)``; E8M0 bytes (value 2**(s-127), 255 = NaN).
    element : the element format.
    block : elements per scale (32).
    scale_mode : the rule that chose the scales (:class:`ScaleMode` value).
    """

    codes: np.ndarray
    scales: np.ndarray
    element: ElementFormat
    block: int = MX_BLOCK
    scale_mode: str = ScaleMode.FLOOR.value

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
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim == 0 or x.shape[-1] % block:
        raise ValueError(f"the last axis ({x.shape[-1] if x.ndim else 'scalar'}) must be a "
                         f"multiple of the block size {block}")
    return x.reshape(*x.shape[:-1], x.shape[-1] // block, block)


def quantize_mx(x: np.ndarray, fmt: str = "mxfp8", block: int = MX_BLOCK,
                scale_mode: str | ScaleMode = ScaleMode.FLOOR) -> MXTensor:
    """Quantize along the last axis to an MX format.

    Parameters
    ----------
    x : array, last axis a multiple of ``block``; rounded to float32 first.
    fmt : ``mxfp8`` (= ``mxfp8_e4m3``), ``mxfp8_e5m2``, ``mxfp6_e2m3``, ``mxfp6_e3m2``,
        ``mxfp4`` or an element name (``e2m1``...).
    block : elements per shared scale (32 in the spec).
    scale_mode : ``"floor"`` (OCP MX v1.0, default), ``"rceil"`` (NVIDIA) or ``"trn3"``
        (AWS nisa.quantize_mx, MXFP8 only); see :class:`ScaleMode`.
    """
    el = element_format(fmt)
    mode = _mode(scale_mode, el)
    b = _blocks(x, block)
    flat, name = b.reshape(-1), el.name

    def multiplier(bits: np.ndarray) -> np.ndarray:
        return _multiplier(bits, el, mode)

    if name in numerics_fp8.FP8:  # FLOOR and TRN3: k = emax - floor(log2 amax)
        emax = None if mode is ScaleMode.RCEIL else el.emax - (mode is ScaleMode.TRN3)
        codes, amax, mult = numerics_fp8.quantize_blocks(flat, block, name, multiplier, emax)
    else:
        codes, amax, mult = numerics_fast.quantize_blocks(flat, block, name, multiplier)
    scales = _scale_bytes(amax, mult)
    shape = b.shape[:-2] + (b.shape[-2] * block,)
    return MXTensor(codes.reshape(shape), scales.reshape(b.shape[:-1]), el, block, mode.value)


class NVFP4Scaling(StrEnum):
    """NVFP4 scale levels: E4M3 block scales only, or also a float32 per-tensor scale."""

    SINGLE_LEVEL = "single_level"
    TWO_LEVEL = "two_level"


@dataclass(frozen=True)
class NVFP4Tensor:
    """NVFP4: E2M1 codes, one E4M3 scale per 16 elements, optionally a float32 tensor scale.

    ``tensor_scale`` is None for single-level scaling.
    """

    codes: np.ndarray
    scales: np.ndarray  # E4M3 bit patterns (uint8)
    tensor_scale: np.float32 | None
    block: int = NVFP4_BLOCK

    @property
    def scaling(self) -> str:
        """``single_level`` or ``two_level`` (:class:`NVFP4Scaling` value)."""
        single = self.tensor_scale is None
        return (NVFP4Scaling.SINGLE_LEVEL if single else NVFP4Scaling.TWO_LEVEL).value

    @property
    def nbytes(self) -> int:
        """Packed bytes: half a byte per element, one per block scale, four for a tensor scale."""
        return self.codes.size // 2 + self.scales.size + (0 if self.tensor_scale is None else 4)

    def dequantize(self) -> np.ndarray:
        """Values as float64 of torchao's float32 product ``element * (s_tensor * s_block)``."""
        vals = decode_element(self.codes, ELEMENTS["e2m1"]).astype(np.float32)
        blocks = vals.reshape(*self.scales.shape, self.block)
        sb = decode_element(self.scales, ELEMENTS["e4m3"]).astype(np.float32)[..., None]
        total = sb if self.tensor_scale is None else np.float32(self.tensor_scale) * sb
        with np.errstate(invalid="ignore", over="ignore"):
            return (blocks * total).astype(np.float64).reshape(self.codes.shape)


def nvfp4_tensor_scale(x: np.ndarray) -> np.float32:
    """Per-tensor NVFP4 scale ``amax(|x|) / (448 * 6)`` in float32 (torchao's rule).

    NaN when ``x`` holds a NaN (the amax propagates it), Inf when it holds an Inf.
    """
    x = np.asarray(x, dtype=np.float32)
    amax = np.max(np.abs(x)) if x.size else np.float32(0)
    return np.float32(amax) / np.float32(ELEMENTS["e4m3"].max * ELEMENTS["e2m1"].max)


def quantize_nvfp4(x: np.ndarray, tensor_scale: float | None = None,
                   block: int = NVFP4_BLOCK,
                   scaling: str | NVFP4Scaling = NVFP4Scaling.TWO_LEVEL) -> NVFP4Tensor:
    """Quantize along the last axis to NVFP4, in torchao's float32 operation order.

    ``scaling="two_level"`` (default) uses ``tensor_scale``, by default
    :func:`nvfp4_tensor_scale` (an all-zero input uses 1, as Transformer Engine does;
    torchao would divide 0 by 0). ``scaling="single_level"`` uses E4M3 block scales only
    and takes no ``tensor_scale``. Data are multiplied by the float32 reciprocal of the
    scale (not divided by it), which decides how midpoints round.
    """
    mode = NVFP4Scaling(scaling)
    e4m3 = ELEMENTS["e4m3"]
    b = _blocks(x, block)
    flat = b.reshape(-1)
    amax = numerics_fast.block_amax_bits(flat, block).view(np.float32)
    if mode is NVFP4Scaling.SINGLE_LEVEL:
        if tensor_scale is not None:
            raise ValueError("single-level NVFP4 takes no tensor_scale")
        ts = None
    elif tensor_scale is None:  # nvfp4_tensor_scale(x), from the block maxima
        top = np.max(amax) if amax.size else np.float32(0)
        ts = np.float32(top) / np.float32(e4m3.max * ELEMENTS["e2m1"].max)
        ts = np.float32(1) if ts == 0 else ts
    else:
        ts = np.float32(tensor_scale)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        block_scale = amax / np.float32(ELEMENTS["e2m1"].max)
        if ts is not None:
            block_scale = block_scale / ts
        sb = cast_element(np.clip(block_scale, np.float32(e4m3.min_normal),
                                  np.float32(e4m3.max)), e4m3)
        sbf = decode_element(sb, e4m3).astype(np.float32)
        one = np.float32(1)
        recip = one / sbf if ts is None else (one / ts) / sbf
    codes = numerics_fast.cast_scaled_blocks(flat, block, "e2m1", recip)
    nan = np.isnan(recip)
    if nan.any():
        codes.reshape(-1, block)[nan] = 0
    shape = b.shape[:-2] + (b.shape[-2] * block,)
    return NVFP4Tensor(codes.reshape(shape), sb.reshape(b.shape[:-1]), ts, block)


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
