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

NVFP4 (NVIDIA): E2M1 elements in blocks of 16 with an E4M3 block scale and optionally a
float32 tensor scale, in :mod:`trnkb.engine.numerics_nvfp4`. Element formats and casts
are in :mod:`trnkb.engine.numerics_formats`; every public name of both is importable
from here too. Speed: MXFP8 runs the compiled kernel of
:mod:`trnkb.engine.numerics_fp8` (numba, imported on first use), the other formats the
lookup tables of :mod:`trnkb.engine.numerics_fast`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from trnkb.engine import numerics_fast, numerics_fp8

# re-exported: the formats' names are importable from here (``numerics.NAME``)
from trnkb.engine.numerics_formats import ELEMENTS as ELEMENTS
from trnkb.engine.numerics_formats import MX_FORMATS as MX_FORMATS
from trnkb.engine.numerics_formats import ElementFormat as ElementFormat
from trnkb.engine.numerics_formats import as_blocks as as_blocks
from trnkb.engine.numerics_formats import cast_element as cast_element
from trnkb.engine.numerics_formats import decode_element as decode_element
from trnkb.engine.numerics_formats import element_format as element_format
from trnkb.engine.numerics_formats import error_stats as error_stats
from trnkb.engine.numerics_formats import round_to as round_to
from trnkb.engine.numerics_nvfp4 import NVFP4_BLOCK as NVFP4_BLOCK
from trnkb.engine.numerics_nvfp4 import NVFP4Scaling as NVFP4Scaling
from trnkb.engine.numerics_nvfp4 import NVFP4Tensor as NVFP4Tensor
from trnkb.engine.numerics_nvfp4 import nvfp4_tensor_scale as nvfp4_tensor_scale
from trnkb.engine.numerics_nvfp4 import quantize_nvfp4 as quantize_nvfp4

E8M0_BIAS = 127
E8M0_NAN = 255
MX_BLOCK = 32


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
    b = as_blocks(x, block)
    flat, name = b.reshape(-1), el.name

    def multiplier(bits: np.ndarray) -> np.ndarray:
        return _multiplier(bits, el, mode)

    if name in numerics_fp8.FP8:  # the compiled kernel computes the scale bytes itself
        emax = el.emax - (mode is ScaleMode.TRN3)
        codes, scales = numerics_fp8.quantize_blocks(flat, block, name,
                                                     mode is ScaleMode.RCEIL, emax)
    else:
        codes, amax, mult = numerics_fast.quantize_blocks(flat, block, name, multiplier)
        scales = _scale_bytes(amax, mult)
    shape = b.shape[:-2] + (b.shape[-2] * block,)
    return MXTensor(codes.reshape(shape), scales.reshape(b.shape[:-1]), el, block, mode.value)
