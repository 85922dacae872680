"""NVFP4 (NVIDIA): E2M1 elements in blocks of 16 with E4M3 block scales, bit-exact.

Same float32 operation order as torchao ``nvfp4_quantize``; in the two-level form one
float32 per-tensor scale as well::

    s_tensor = amax(|x|) / (448 * 6)                    # NaN if x holds a NaN
    s_block  = E4M3(clip(amax_block / 6 / s_tensor, 2**-6, 448))
    P_i      = RNE_e2m1(clip(x_i * ((1 / s_tensor) / s_block), -6, 6))

The single-level form drops ``s_tensor`` (``x_i * (1 / s_block)``). Every name here is
also importable from :mod:`trnkb.engine.numerics`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from trnkb.engine import numerics_fast
from trnkb.engine.numerics_formats import ELEMENTS, as_blocks, cast_element, decode_element

NVFP4_BLOCK = 16


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
    b = as_blocks(x, block)
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
