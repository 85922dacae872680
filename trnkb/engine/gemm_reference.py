"""Numerics of the GEMM reference: the inputs as TensorE sees them, and PSUM accumulation.

Inputs are rounded or quantized as they sit in HBM (BF16; FP8 E4M3 with a per-tensor
scale; OCP MX with blocks of 32 along K), one float32 matmul per chunk of K steps
accumulates in float32 as PSUM does, and the result is rounded to BF16.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trnkb.engine.numerics import (
    ELEMENTS,
    ElementFormat,
    MXTensor,
    decode_element,
    quantize_mx,
    round_to,
)

__all__ = ["FP8_MAX", "MX_BLOCK", "MX_DTYPES", "NUMERIC_CHUNK", "Operand", "gemm_inputs",
           "gemm_numerics", "mx_values"]

MX_BLOCK = 32  # elements per MX scale along K (OCP MX v1.0)
MX_DTYPES = ("mxfp8", "mxfp4")
FP8_MAX = ELEMENTS["e4m3"].max  # OCP E4M3 largest finite value (448)

Operand = NDArray[Any] | MXTensor | None  # an input: values, an MX tensor, or None (random)


def _pad_k(x: NDArray[Any], k_to: int) -> NDArray[Any]:
    """Zero-pad the last axis to ``k_to`` (MX blocks of 32; zeros change no block's amax)."""
    if x.shape[-1] == k_to:
        return x
    out = np.zeros((*x.shape[:-1], k_to), x.dtype)
    out[..., : x.shape[-1]] = x
    return out


@lru_cache(maxsize=16)
def _lut32(element: ElementFormat) -> NDArray[np.float32]:
    """Every code of an element format (2**bits of them) decoded to float32 (exact)."""
    return decode_element(np.arange(2 ** element.bits, dtype=np.uint8),
                          element).astype(np.float32)


def mx_values(q: MXTensor) -> NDArray[np.float32]:
    """The values of an MX tensor in float32: element x 2**(scale - 127), NaN for scale 0xFF.

    Exact in float32 (a power-of-two multiple of an element) unless the scale exceeds
    2**120 or so and the product overflows float32's range, which no real tensor does.
    """
    vals = _lut32(q.element)[q.codes]
    s = q.scales.astype(np.int32)
    f = np.ldexp(np.float32(1.0), s - 127).astype(np.float32)
    f = np.where(s == 255, np.float32(np.nan), f)
    blocks = vals.reshape(*q.scales.shape, q.block)
    out: NDArray[np.float32] = (blocks * f[..., None]).reshape(q.codes.shape)
    return out


def gemm_inputs(m: int, k: int, n: int, dtype: str, weight_dtype: str | None, a: Operand,
                b: Operand, seed: int | None, fast: bool = False, on_chip_quantize: bool = False
                ) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any], float]:
    """The inputs as float64 references and as the values TensorE multiplies.

    Returns ``(a64, b64, aq, bq, scale)``: bf16-rounded, fp8 per-tensor scaled
    (s = amax / 448, applied at PSUM evacuation) or MX-dequantized (blocks of 32 along K,
    K zero-padded to a multiple of 32). ``a`` (m, k) and ``b`` (k, n) may be given as
    :class:`MXTensor` (quantized along K; ``b`` then has shape (n, k)); their scale bytes
    are used as they are. ``fast`` keeps the reference inputs in float32 (no float64 copy).
    ``on_chip_quantize``: A is quantized by Trainium3's ``quantize_mx`` rule (a scale twice
    the OCP one; the Neuron docs state it for MXFP8), not the OCP FLOOR rule.
    """
    rng = np.random.default_rng(seed)
    mx = dtype in MX_DTYPES
    kp = math.ceil(k / MX_BLOCK) * MX_BLOCK
    a_mx, b_mx = isinstance(a, MXTensor), isinstance(b, MXTensor)
    if a_mx or b_mx:
        if not mx:
            raise ValueError("MXTensor inputs need an MX dtype")
    if a is None:
        a = rng.standard_normal((m, k))
    if b is None:
        b = rng.standard_normal((k, n))
    # float64 only for the reference; the engine's own inputs are rounded from float32
    ref_dt = np.float32 if fast else np.float64
    a64: NDArray[Any] = (a.dequantize()[:, :k] if isinstance(a, MXTensor)
                         else np.asarray(a, ref_dt))
    b64: NDArray[Any] = (b.dequantize()[:, :k].T if isinstance(b, MXTensor)
                         else np.asarray(b, ref_dt))
    if a64.shape != (m, k) or b64.shape != (k, n):
        raise ValueError(f"a must be {(m, k)} and b {(k, n)}; got {a64.shape} and {b64.shape}")
    scale = 1.0
    if dtype == "bf16":
        aq, bq = round_to(a64, "bf16"), round_to(b64, "bf16")
    elif dtype == "fp8":
        sa = np.float32(max(np.max(np.abs(a64)), 1e-30) / FP8_MAX)
        sb = np.float32(max(np.max(np.abs(b64)), 1e-30) / FP8_MAX)
        aq, bq = round_to(a64 / sa, "fp8"), round_to(b64 / sb, "fp8")
        scale = float(np.float32(sa * sb))
    else:
        mode = "trn3" if on_chip_quantize and dtype == "mxfp8" else "floor"
        aq = mx_values(a if isinstance(a, MXTensor)
                       else quantize_mx(_pad_k(a64, kp), dtype, scale_mode=mode))
        bt = mx_values(b if isinstance(b, MXTensor)
                       else quantize_mx(_pad_k(np.ascontiguousarray(b64.T), kp),
                                        weight_dtype or dtype))
        aq, bq = aq[:, :k], bt[:, :k].T
    return a64, b64, aq, bq, scale


NUMERIC_CHUNK = 4096  # K rows per float32 matmul of the numeric path


def gemm_numerics(aq: np.ndarray, bq: np.ndarray, k_step: int, scale: float = 1.0) -> np.ndarray:
    """C = round_bf16(scale x sum over K chunks of aq[:, chunk] @ bq[chunk, :]), in float32.

    Products of the rounded inputs accumulate in float32 as in PSUM: one float32 matmul
    per chunk of ``NUMERIC_CHUNK`` rows of K (a whole number of K steps), the chunks
    added in float32 in K order. The order of the float32 additions inside a chunk is
    the BLAS's; the hardware's order inside the PE array is not published, and any
    order stays within the K x 2**-24 accumulation bound the tests use.
    """
    aq = np.asarray(aq, np.float32)
    bq = np.asarray(bq, np.float32)
    k = aq.shape[1]
    chunk = max(k_step, NUMERIC_CHUNK // k_step * k_step)
    acc = aq[:, :chunk] @ bq[:chunk]
    for k0 in range(chunk, k, chunk):
        acc += aq[:, k0:k0 + chunk] @ bq[k0:k0 + chunk]
    if scale != 1.0:
        acc *= np.float32(scale)
    return round_to(acc, "bf16")
