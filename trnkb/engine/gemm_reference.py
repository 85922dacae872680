"""Numerics of the GEMM reference: the inputs as TensorE sees them, and PSUM accumulation.

Inputs are rounded or quantized as they sit in HBM (BF16; FP8 E4M3 with a per-tensor
scale; OCP MX with blocks of 32 along K), one float32 matmul per chunk of K steps
accumulates in float32 as PSUM does, and the result is rounded to BF16.

The operands are streamed: :class:`GemmOperands` rounds or quantizes one slab of K rows
at a time (every rule here is elementwise or works on blocks of 32 along K, so a slab's
values are those of the whole operand), and the float64 reference is accumulated slab
by slab too. A GEMM holds its inputs, the float32 accumulator and one slab of each
operand; no whole rounded or float64 copy of an operand is made.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

from trnkb.engine.numerics import MXTensor, quantize_mx
from trnkb.engine.numerics_formats import ELEMENTS, ElementFormat, decode_element, round_to

MX_BLOCK = 32  # elements per MX scale along K (OCP MX v1.0)
MX_DTYPES = ("mxfp8", "mxfp4")
FP8_MAX = ELEMENTS["e4m3"].max  # OCP E4M3 largest finite value (448)
NUMERIC_CHUNK = 4096  # K rows per float32 matmul of the numeric path
_AMAX_ELEMENTS = 1 << 20  # elements per pass of the FP8 amax scan (8 MiB in float64)

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
    np.multiply(blocks, f[..., None], out=blocks)  # in place: vals is a fresh gather
    out: NDArray[np.float32] = vals
    return out


def _mx_slab(q: MXTensor, k0: int, k1: int) -> MXTensor:
    """Columns k0:k1 of an MX tensor quantized along its last axis (k0 on a block edge),
    widened to whole blocks."""
    s0, s1 = k0 // q.block, math.ceil(k1 / q.block)
    return dataclasses.replace(q, codes=q.codes[..., s0 * q.block:s1 * q.block],
                               scales=q.scales[..., s0:s1])


@dataclass(frozen=True)
class GemmOperands:
    """A (m, k) and B (k, n) as they sit in HBM, produced one slab of K rows at a time.

    ``a`` is A (m, k) and ``bt`` is B^T (n, k), both with K last: arrays (``bt`` may be a
    transposed view) or :class:`MXTensor` quantized along K. ``ref_dtype`` is the float
    type of the reference inputs (float64, or float32 when the reference is skipped).
    ``a_scale_mode`` is the MX scale rule of A (``floor``, or ``trn3`` when Trainium3
    quantizes it on chip). ``fp8_scales`` are the per-tensor scales s = amax / 448 of
    FP8 A and B.
    """

    m: int
    k: int
    n: int
    dtype: str
    weight_dtype: str | None
    a: NDArray[Any] | MXTensor
    bt: NDArray[Any] | MXTensor
    ref_dtype: DTypeLike = np.float64
    a_scale_mode: str = "floor"
    fp8_scales: tuple[Any, Any] | None = None

    @property
    def scale(self) -> float:
        """The FP8 evacuation scale s_a x s_b applied to C (1 for other dtypes)."""
        if self.fp8_scales is None:
            return 1.0
        sa, sb = self.fp8_scales
        return float(np.float32(sa * sb))

    def slabs(self, chunk: int) -> Iterator[tuple[int, int]]:
        """(k0, k1) of the slabs of ``chunk`` rows of K, in K order."""
        for k0 in range(0, self.k, chunk):
            yield k0, min(self.k, k0 + chunk)

    def exact(self, k0: int, k1: int) -> tuple[NDArray[Any], NDArray[Any]]:
        """A[:, k0:k1] and B[k0:k1] unrounded, in ``ref_dtype`` (MX tensors: dequantized)."""
        a, bt = (self._exact(x, k0, k1) for x in (self.a, self.bt))
        return a, bt.T

    def slab(self, k0: int, k1: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """The float32 values TensorE multiplies for rows k0:k1 of K (k0 on an MX block edge).

        BF16: rounded to nearest even. FP8: x / s rounded to E4M3 (saturating). MX: each
        block of 32 along K quantized with its own scale (the last block zero-padded), or
        the given MX tensor's codes and scales decoded.
        """
        if self.dtype == "fp8":
            assert self.fp8_scales is not None
            a, b = self.exact(k0, k1)
            sa, sb = self.fp8_scales
            return round_to(a / sa, "fp8"), round_to(b / sb, "fp8")
        a = self._values(self.a, k0, k1, self.dtype, self.a_scale_mode)
        bt = self._values(self.bt, k0, k1, self.weight_dtype or self.dtype, "floor")
        return a, bt.T

    def reference(self, chunk: int = NUMERIC_CHUNK) -> NDArray[np.float64]:
        """A @ B of the unrounded inputs in float64, accumulated over slabs of K."""
        out = np.zeros((self.m, self.n))
        for k0, k1 in self.slabs(chunk):
            a, b = self.exact(k0, k1)
            out += np.asarray(a, np.float64) @ np.asarray(b, np.float64)
        return out

    def _exact(self, x: NDArray[Any] | MXTensor, k0: int, k1: int) -> NDArray[Any]:
        if isinstance(x, MXTensor):
            return _mx_slab(x, k0, k1).dequantize()[:, :k1 - k0]
        return np.asarray(x[:, k0:k1], self.ref_dtype)

    def _values(self, x: NDArray[Any] | MXTensor, k0: int, k1: int, fmt: str,
                mode: str) -> NDArray[np.float32]:
        kk = k1 - k0
        if isinstance(x, MXTensor):
            return mx_values(_mx_slab(x, k0, k1))[:, :kk]
        # BF16 rounding and MX quantization read float32: a float input is rounded as it
        # is, which gives what rounding its ref_dtype copy would
        raw = x[:, k0:k1]
        raw = raw if raw.dtype in (np.float32, np.float64) else np.asarray(raw, self.ref_dtype)
        if fmt == "bf16":
            return round_to(raw, "bf16")
        kp = math.ceil(kk / MX_BLOCK) * MX_BLOCK
        return mx_values(quantize_mx(_pad_k(_c_float32(raw), kp), fmt,
                                     scale_mode=mode))[:, :kk]


_TILE = 64  # rows and columns per block of the cache-friendly transposing copy


def _c_float32(x: NDArray[Any]) -> NDArray[np.float32]:
    """``x`` as a C-ordered float32 array (what quantization reads). A transposed view
    (B^T) is copied in 64 x 64 blocks that stay in cache: about 3x faster than NumPy's
    strided copy at 2048^2."""
    if x.flags.c_contiguous:
        return np.asarray(x, np.float32)
    out = np.empty(x.shape, np.float32)
    for i in range(0, x.shape[0], _TILE):
        for j in range(0, x.shape[1], _TILE):
            out[i:i + _TILE, j:j + _TILE] = x[i:i + _TILE, j:j + _TILE]
    return out


def _amax(x: NDArray[Any], dt: DTypeLike) -> Any:
    """max |x| = max(max x, -min x) as a ``dt`` scalar, scanned a few rows at a time (no
    |x| temporary; NaN propagates)."""
    rows = max(1, _AMAX_ELEMENTS // max(1, x.shape[1]))
    out = []
    for i in range(0, x.shape[0], rows):
        c = np.asarray(x[i:i + rows], dt)
        out.append(np.maximum(c.max(), -c.min()))
        del c  # freed before the next rows are converted
    return np.max(out)


def gemm_operands(m: int, k: int, n: int, dtype: str, weight_dtype: str | None, a: Operand,
                  b: Operand, seed: int | None, fast: bool = False,
                  on_chip_quantize: bool = False) -> GemmOperands:
    """The operands of C = A B: given, or standard normal (float64) drawn with ``seed``.

    ``a`` (m, k) and ``b`` (k, n) may be given as :class:`MXTensor` (quantized along K,
    K zero-padded to a multiple of 32; ``b`` then has shape (n, k)); their scale bytes
    are used as they are. FP8 scales s = amax / 448 per tensor (applied at PSUM
    evacuation). ``fast`` keeps the reference inputs in float32 (no float64 slabs).
    ``on_chip_quantize``: A is quantized by Trainium3's ``quantize_mx`` rule (a scale
    twice the OCP one; the Neuron docs state it for MXFP8), not the OCP FLOOR rule.
    """
    rng = np.random.default_rng(seed)
    mx = dtype in MX_DTYPES
    if (isinstance(a, MXTensor) or isinstance(b, MXTensor)) and not mx:
        raise ValueError("MXTensor inputs need an MX dtype")
    a = rng.standard_normal((m, k)) if a is None else a
    b = rng.standard_normal((k, n)) if b is None else b
    a = a if isinstance(a, MXTensor) else np.asarray(a)
    bt = b if isinstance(b, MXTensor) else np.asarray(b).T

    def offered(x: NDArray[Any] | MXTensor) -> tuple[int, ...]:
        """(rows, K) of an operand with K last; an MX tensor may be padded beyond K."""
        s = x.shape
        return (s[0], min(s[1], k)) if isinstance(x, MXTensor) and len(s) == 2 else s

    if offered(a) != (m, k) or offered(bt) != (n, k):
        raise ValueError(f"a must be {(m, k)} and b {(k, n)} (as MX tensors: {(m, k)} and "
                         f"{(n, k)}, K padded to a multiple of 32); got {a.shape} and "
                         f"{b.shape}")
    ref_dt = np.float32 if fast else np.float64
    fp8 = None
    if dtype == "fp8":
        assert not isinstance(a, MXTensor) and not isinstance(bt, MXTensor)
        fp8 = (np.float32(max(_amax(a, ref_dt), 1e-30) / FP8_MAX),
               np.float32(max(_amax(bt.T, ref_dt), 1e-30) / FP8_MAX))
    mode = "trn3" if on_chip_quantize and dtype == "mxfp8" else "floor"
    return GemmOperands(m, k, n, dtype, weight_dtype, a, bt, ref_dt, mode, fp8)


def gemm_numerics(ops: GemmOperands, k_step: int) -> NDArray[np.float32]:
    """C = round_bf16(scale x sum over K chunks of aq[:, chunk] @ bq[chunk, :]), in float32.

    Products of the rounded inputs accumulate in float32 as in PSUM: one float32 matmul
    per chunk of ``NUMERIC_CHUNK`` rows of K (a whole number of K steps), the chunks
    added in float32 in K order. The order of the float32 additions inside a chunk is
    the BLAS's; the hardware's order inside the PE array is not published, and any
    order stays within the K x 2**-24 accumulation bound the tests use. Each chunk's
    operands are rounded when it is multiplied (:meth:`GemmOperands.slab`).
    """
    chunk = max(k_step, NUMERIC_CHUNK // k_step * k_step)
    acc: NDArray[np.float32] | None = None
    for k0, k1 in ops.slabs(chunk):
        aq, bq = ops.slab(k0, k1)
        if acc is None:
            acc = aq @ bq
        else:
            acc += aq @ bq
    assert acc is not None
    if ops.scale != 1.0:
        acc *= np.float32(ops.scale)
    return round_to(acc, "bf16")
