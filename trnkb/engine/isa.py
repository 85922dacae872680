"""A small NKI-like instruction set. Each instruction computes and costs.

(a) With ``tl.execute`` it computes its result with NumPy in float32 (fp32 PSUM
    accumulation, fp32 engine math) and rounds to the destination dtype through
    ml_dtypes (:func:`trnkb.engine.numerics.round_to`).
(b) It charges cycles to its engine by the published cost formulas (nki.isa "Estimated
    instruction cost", NeuronCore-v2 era; N = elements per partition of the
    instruction's free size, MIN_II = ``core.instruction_min_cycles``):

    ==================  ================  =============================================
    instruction         engine            cycles
    ==================  ================  =============================================
    matmul, matmul_mx   tensor            max(min(MM_INIT, M_stationary), N_moving)
                                          (+ LoadStationary M / ls_speedup when exposed)
    quantize_mx         vector            max(MIN_II, N / quantize_mx_rate)
    transpose           tensor            max(P, min(MM_INIT, F))
    activation          scalar            max(MIN_II, N / perf) (+ MIN_II with a reduce)
    exponential         vector            max(MIN_II, N x f_vec / (speedup x f_scalar))
    tensor_tensor       vector            max(MIN_II, N) if an input is in PSUM or all
                                          are bf16, else max(MIN_II, 2N)
    tensor_scalar/copy  vector or scalar  max(MIN_II, N / perf)
    tensor_reduce       vector            N/2 for bf16 add/max, else N
    affine_select       gpsimd            gpsimd_start_cycles + ceil(N x P / gpsimd_lanes)
    dma                 dma link          bytes / rate; data ready after + fixed latency
    ==================  ================  =============================================

    ``perf`` is the VectorE performance mode of NeuronCore-v3+ (4x for bf16 SBUF->SBUF
    copy/tensor_scalar, 2x when one side is PSUM) capped at lanes/partitions, and the
    ScalarE 2x bf16 mode of NeuronCore-v4 (scalar_lanes/partitions = 2).

Tile layout: ``(partitions, free...)``. Packed matmul operands (FP8 double row, MX quad)
are ``(P, pack, F)`` with contraction index ``k = j * P + p``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trnkb.engine.buffers import Tile, store
from trnkb.engine.tensor_engine import (  # the TensorE part of the ISA, used as isa.NAME
    matmul as matmul,
)
from trnkb.engine.tensor_engine import matmul_block as matmul_block
from trnkb.engine.tensor_engine import matmul_mx as matmul_mx
from trnkb.engine.tensor_engine import matmuls as matmuls
from trnkb.engine.tensor_engine import transpose as transpose
from trnkb.engine.tensor_engine import transposes as transposes
from trnkb.engine.timeline import Timeline

Scalar = Tile | float


def _bf16ish(*tiles: Tile) -> bool:
    return all(t.dtype in ("bf16", "fp8") for t in tiles)


def _vector_perf(tl: Timeline, dst: Tile, src: Tile) -> float:
    """VectorE performance mode for copy/tensor_scalar (ARCH-trn2): 4x for bf16 SBUF->SBUF,
    2x when one side is PSUM (an fp32 accumulator evacuated to bf16 included), else 1x."""
    if src.memory == "psum" and _bf16ish(dst):
        return min(2.0, tl.core.vector_lanes / tl.core.partitions)
    if not _bf16ish(dst, src):
        return 1.0
    cap = tl.core.vector_lanes / tl.core.partitions
    mode = 4.0 if (dst.memory == "sbuf" and src.memory == "sbuf") else 2.0
    return min(mode, cap)


def _unit_perf(tl: Timeline, dst: Tile, src: Tile) -> float:
    """GpSimd: no performance mode."""
    return 1.0


def _scalar_perf(tl: Timeline, dst: Tile, src: Tile) -> float:
    """ScalarE bf16 mode (NeuronCore-v4: 256 lanes for BF16/FP8 = 2x)."""
    if not _bf16ish(dst, src):
        return 1.0
    return max(1.0, tl.core.scalar_lanes / tl.core.partitions)


# ---- data movement ------------------------------------------------------------------
def dma(tl: Timeline, dst: Tile, src: Tile, nbytes: float | None = None) -> float:
    """Copy ``src`` to ``dst`` (HBM <-> SBUF). Bytes moved default to the HBM side's size.

    Charged per :meth:`Timeline.transfer` over the SBUF side's partitions. Numerics: a
    plain copy, reshaped to ``dst``; a 3-D ``dst`` (P, pack, F) takes a 2-D source
    [pack * P, F] in contraction order. Rounds to ``dst.dtype``.
    """
    if tl.execute:
        v = src.read()
        if len(dst.shape) == 3 and v.ndim == 2:
            p, j, f = dst.shape
            if v.shape[0] < j * p:  # a partial last chunk: the rest of the tile is zero
                v = np.concatenate([v, np.zeros((j * p - v.shape[0], f), v.dtype)])
            v = v.reshape(j, p, f).transpose(1, 0, 2)
        store(dst, v)
    hbm_side, chip_side = (src, dst) if src.memory == "hbm" else (dst, src)
    n = hbm_side.nbytes if nbytes is None else nbytes
    return tl.transfer(f"dma {src.memory}->{dst.memory}", n, chip_side.shape[0], (src,), (dst,))


# ---- tensor engine --------------------------------------------------------------------
def quantize_mx(tl: Timeline, dst: Tile, dst_scale: Tile, src: Tile) -> float:
    """VectorE ``quantize_mx`` (NeuronCore-v4): BF16 -> MXFP8 elements + E8M0 scales.

    Cost: max(MIN_II, free size / ``quantize_mx_rate``) VectorE cycles (ISA: 4 input
    elements per partition per cycle). Numerics are not modelled here (the GEMM kernel
    quantizes with :func:`trnkb.engine.numerics.quantize_mx`).
    """
    core = tl.core
    if not core.quantize_mx_rate:
        raise ValueError(f"{core.chip} ({core.name}) has no quantize_mx instruction")
    cycles = max(core.instruction_min_cycles, math.ceil(src.free_size / core.quantize_mx_rate))
    return tl.issue("vector", "quantize_mx", cycles, (src,), (dst, dst_scale))


# ---- scalar / vector / gpsimd -------------------------------------------------------------
_FUNCS: dict[str, Callable[[NDArray[np.float32]], NDArray[Any]]] = {
    "exp": np.exp, "copy": lambda x: x, "identity": lambda x: x}
_BINOPS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "max": np.maximum,
           "divide": np.divide}


def activation(tl: Timeline, dst: Tile, src: Tile, func: str = "exp", scale: float = 1.0,
               bias: Tile | None = None, reduce: Tile | None = None) -> float:
    """ScalarE: dst = func(src * scale + bias); ``reduce`` gets the row sum (fp32, pre-rounding)."""
    n = src.free_size
    mi = tl.core.instruction_min_cycles
    perf = _scalar_perf(tl, dst, src) if func != "exp" else 1.0  # exp: 1 elem/lane/cycle
    cycles = max(mi, math.ceil(n / perf)) + (mi if reduce is not None else 0)
    if tl.execute:
        x = src.read().astype(np.float32) * np.float32(scale)
        if bias is not None:
            x = x + bias.read()
        with np.errstate(over="ignore"):
            y = _FUNCS[func](x).astype(np.float32)
        store(dst, y)
        if reduce is not None:
            store(reduce, y.sum(axis=-1, keepdims=True, dtype=np.float32))
    reads = (src,) if bias is None else (src, bias)
    writes = (dst,) if reduce is None else (dst, reduce)
    return tl.issue("scalar", f"activation {func}", cycles, reads, writes)


def exponential(tl: Timeline, dst: Tile, src: Tile, row_max: Tile, scale: float = 1.0,
                reduce: Tile | None = None) -> float:
    """VectorE exponential (NeuronCore-v4): dst = exp((src - row_max) * scale), row sums.

    Throughput is ``vector_exp_speedup`` times ScalarE activation(exp); in VectorE cycles
    N x f_vector / (speedup x f_scalar).
    """
    core = tl.core
    if core.vector_exp_speedup == 0:
        raise ValueError(f"{core.chip} ({core.name}) has no VectorE exponential; "
                         f"use activation(func='exp') on ScalarE")
    ratio = (core.vector_clock / core.scalar_clock).to("").magnitude
    cycles = max(core.instruction_min_cycles,
                 math.ceil(src.free_size * ratio / core.vector_exp_speedup))
    if tl.execute:
        x = (src.read() - row_max.read()) * np.float32(scale)
        y = np.exp(x.astype(np.float32))
        store(dst, y)
        if reduce is not None:
            store(reduce, y.sum(axis=-1, keepdims=True, dtype=np.float32))
    writes = (dst,) if reduce is None else (dst, reduce)
    return tl.issue("vector", "exponential", cycles, (src, row_max), writes)


def tensor_tensor(tl: Timeline, dst: Tile, a: Tile, b: Tile, op: str = "add") -> float:
    """VectorE elementwise dst = a op b (fp32 math)."""
    n = dst.free_size
    fast = a.memory == "psum" or b.memory == "psum" or _bf16ish(a, b, dst)
    cycles = max(tl.core.instruction_min_cycles, n if fast else 2 * n)
    if tl.execute:
        store(dst, _BINOPS[op](a.read(), b.read()))
    return tl.issue("vector", f"tensor_tensor {op}", cycles, (a, b), (dst,))


def tensor_scalar(tl: Timeline, dst: Tile, src: Tile, op: str, scalar: Scalar,
                  engine: str = "vector", op2: str | None = None,
                  scalar2: Scalar | None = None) -> float:
    """dst = (src op scalar) [op2 scalar2]; a scalar is a float or a per-partition [P, 1] tile."""
    perf = (_vector_perf if engine == "vector" else _scalar_perf)(tl, dst, src)
    cycles = max(tl.core.instruction_min_cycles, math.ceil(src.free_size / perf))
    reads = [src]
    if tl.execute:
        def val(s: Scalar | None) -> Any:
            return s.read() if isinstance(s, Tile) else np.float32(s)
        y = _BINOPS[op](src.read(), val(scalar))
        if op2 is not None:
            y = _BINOPS[op2](y, val(scalar2))
        store(dst, y)
    reads += [s for s in (scalar, scalar2) if isinstance(s, Tile)]
    return tl.issue(engine, f"tensor_scalar {op}", cycles, reads, (dst,))


def tensor_reduce(tl: Timeline, dst: Tile, src: Tile, op: str = "max") -> float:
    """VectorE reduction along the free axis into dst [P, 1]."""
    n = src.free_size
    cycles = n // 2 if (src.dtype == "bf16" and op in ("add", "max")) else n
    if tl.execute:
        f = np.max if op == "max" else np.sum
        store(dst, f(src.read(), axis=-1, keepdims=True))
    return tl.issue("vector", f"tensor_reduce {op}", cycles, (src,), (dst,))


def copy(tl: Timeline, dst: Tile, src: Tile, engine: str = "vector") -> float:
    """dst = src (with a cast) on VectorE, ScalarE or GpSimd (GpSimd cannot read PSUM)."""
    if engine == "gpsimd" and src.memory == "psum":
        raise ValueError("copy: GpSimd cannot access PSUM; use engine='vector' or 'scalar'")
    perf_of: dict[str, Callable[[Timeline, Tile, Tile], float]] = {
        "vector": _vector_perf, "scalar": _scalar_perf}
    perf = perf_of.get(engine, _unit_perf)(tl, dst, src)
    cycles = max(tl.core.instruction_min_cycles, math.ceil(src.free_size / perf))
    if tl.execute:
        store(dst, src.read())
    return tl.issue(engine, "copy", cycles, (src,), (dst,))


def affine_select(tl: Timeline, dst: Tile, offset: int, fill: float = -np.inf) -> float:
    """GpSimd: dst[p, f] = 0 where f <= p + offset, else ``fill`` (a causal mask bias)."""
    p, f = dst.shape
    if tl.execute:
        keep = np.arange(f)[None, :] <= np.arange(p)[:, None] + offset
        dst.write(np.where(keep, np.float32(0), np.float32(fill)))
    # GpSimd moves gpsimd_lanes elements per cycle, one lane per partition (P = 128
    # partitions, 128 lanes: one element per partition per cycle, as the ISA cost gives)
    per = math.ceil(f * tl.core.partitions / tl.core.gpsimd_lanes)
    return tl.issue("gpsimd", "affine_select", tl.core.gpsimd_start_cycles + per, (), (dst,))
