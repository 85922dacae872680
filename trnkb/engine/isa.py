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
    transpose           tensor            max(P, min(MM_INIT, F))
    activation          scalar            max(MIN_II, N / perf) (+ MIN_II with a reduce)
    exponential         vector            max(MIN_II, N x f_vec / (speedup x f_scalar))
    tensor_tensor       vector            max(MIN_II, N) if an input is in PSUM or all
                                          are bf16, else max(MIN_II, 2N)
    tensor_scalar/copy  vector or scalar  max(MIN_II, N / perf)
    tensor_reduce       vector            N/2 for bf16 add/max, else N
    affine_select       gpsimd            150 + N
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

import numpy as np

from trnkb.engine.numerics import round_to
from trnkb.engine.timeline import Tile, Timeline

GPSIMD_START = 150  # GpSimd start cost of iota/affine_select (nki.isa cost notes)
_FLOAT = {"fp32", "bf16", "fp8"}


def _store(dst: Tile, value: np.ndarray) -> None:
    dst.write(round_to(value, dst.dtype) if dst.dtype in _FLOAT else value)


def _logical(t: Tile) -> np.ndarray:
    """A matmul operand as [K, F]: (P, pack, F) -> k = j * P + p."""
    a = t.read()
    if a.ndim == 3:
        p, j, f = a.shape
        return a.transpose(1, 0, 2).reshape(j * p, f)
    return a


def _bf16ish(*tiles: Tile) -> bool:
    return all(t.dtype in ("bf16", "fp8") for t in tiles)


def _vector_perf(tl: Timeline, dst: Tile, src: Tile) -> float:
    """VectorE performance mode for copy/tensor_scalar (ARCH-trn2): 4x, 2x or 1x."""
    if not _bf16ish(dst, src):
        return 1.0
    cap = tl.core.vector_lanes / tl.core.partitions
    mode = 4.0 if (dst.memory == "sbuf" and src.memory == "sbuf") else 2.0
    return min(mode, cap)


def _scalar_perf(tl: Timeline, dst: Tile, src: Tile) -> float:
    """ScalarE bf16 mode (NeuronCore-v4: 256 lanes for BF16/FP8 = 2x)."""
    if not _bf16ish(dst, src):
        return 1.0
    return max(1.0, tl.core.scalar_lanes / tl.core.partitions)


# ---- data movement ------------------------------------------------------------------
def dma(tl: Timeline, dst: Tile, src: Tile, nbytes: float | None = None) -> float:
    """Copy ``src`` to ``dst`` (HBM <-> SBUF). Bytes moved default to the HBM side's size.

    Numerics: a plain copy, reshaped to ``dst``; a 3-D ``dst`` (P, pack, F) takes a
    2-D source [pack * P, F] in contraction order. Rounds to ``dst.dtype``.
    """
    if tl.execute:
        v = src.read()
        if len(dst.shape) == 3 and v.ndim == 2:
            p, j, f = dst.shape
            v = v.reshape(j, p, f).transpose(1, 0, 2)
        _store(dst, v)
    hbm_side = src if src.memory == "hbm" else dst
    n = hbm_side.nbytes if nbytes is None else nbytes
    return tl.transfer(f"dma {src.memory}->{dst.memory}", n, (src,), (dst,))


# ---- tensor engine --------------------------------------------------------------------
def _matmul_cost(tl: Timeline, stationary: Tile, moving: Tile, pack: int, op: str):
    core = tl.core
    kp, m = stationary.shape[0], stationary.shape[-1]
    n = moving.shape[-1]
    if kp > core.pe_rows or m > core.pe_cols:
        raise ValueError(f"{op}: stationary tile {stationary.shape} exceeds the "
                         f"{core.pe_rows}x{core.pe_cols} array (K per pass <= {core.pe_rows} x "
                         f"{pack}, M <= {core.pe_cols})")
    if n > core.moving_free_max:
        raise ValueError(f"{op}: moving free size {n} exceeds {core.moving_free_max} on "
                         f"{core.name}")
    got = stationary.shape[1] if len(stationary.shape) == 3 else 1
    if got != pack or moving.shape[0] != kp:
        raise ValueError(f"{op}: operands {stationary.shape} x {moving.shape} do not match "
                         f"pack {pack} (tiles are (P, pack, F) when pack > 1)")
    return max(min(core.matmul_min_cycles, m), n), 2.0 * kp * pack * m * n


def matmuls(tl: Timeline, items, accumulate: bool = False, dtype: str = "bf16",
            scales: tuple[Tile, Tile] | None = None) -> float:
    """A run of matmuls issued back to back: ``items`` = [(dst, stationary, moving), ...].

    Each item is one TensorE instruction, dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]
    in fp32 PSUM. All items must read the same two SBUF slots (views of one stationary
    tile and one moving tile) and have the same shapes; the timing equals issuing them
    one at a time (:meth:`Timeline.issue_run`).

    ``dtype`` bf16 (K <= 128 per pass), fp8 (double row where the core packs 2) or
    mxfp8/mxfp4 (``scales`` = the two E8M0 scale tiles; tiles hold the dequantized MX
    values, exactly, so summing products in fp32 equals the hardware's scaled
    accumulation up to the fp32 summation order).
    """
    mx = dtype in ("mxfp8", "mxfp4")
    if mx and scales is None:
        raise ValueError("matmul_mx needs the stationary and moving scale tiles")
    dst0, st0, mv0 = items[0]
    for t in (st0, mv0) if mx else ():
        if t.dtype not in ("mxfp8", "mxfp4"):
            raise ValueError(f"matmul_mx: operand dtype {t.dtype!r} is not mxfp8/mxfp4")
    pack = max(tl.core.pack(t.dtype) for t in (st0, mv0)) if mx else tl.core.pack(dtype)
    op = "matmul_mx" if mx else "matmul"
    cycles, flops = _matmul_cost(tl, st0, mv0, pack, op)
    for dst, st, mv in items:
        if dst.slot.memory != "psum":
            raise ValueError(f"{op}: the destination must be a PSUM tile")
        if (st.slot is not st0.slot or mv.slot is not mv0.slot or st.shape != st0.shape
                or mv.shape != mv0.shape):
            raise ValueError(f"{op}: a run must share its operand tiles and shapes")
        if tl.execute:
            prod = _logical(st).T.astype(np.float32) @ _logical(mv).astype(np.float32)
            dst.write(dst.read() + prod if accumulate else prod)
    tl.tensor_flops += flops * len(items)
    shared = (st0, mv0, *scales) if mx else (st0, mv0)
    return tl.issue_run("tensor", op, cycles, shared, [d for d, _, _ in items], accumulate)


def matmul(tl: Timeline, dst: Tile, stationary: Tile, moving: Tile, accumulate: bool = False,
           dtype: str = "bf16") -> float:
    """One matmul: dst[M, N] (+)= stationary[K, M]^T @ moving[K, N] (see :func:`matmuls`)."""
    return matmuls(tl, [(dst, stationary, moving)], accumulate, dtype)


def matmul_mx(tl: Timeline, dst: Tile, stationary: Tile, moving: Tile, stationary_scale: Tile,
              moving_scale: Tile, accumulate: bool = False) -> float:
    """One MX matmul (NeuronCore-v4): MXFP8/MXFP4 operands (P, 4, F) with E8M0 scales."""
    dtype = "mxfp4" if "mxfp4" in (stationary.dtype, moving.dtype) else stationary.dtype
    return matmuls(tl, [(dst, stationary, moving)], accumulate, dtype,
                   (stationary_scale, moving_scale))


def transpose(tl: Timeline, dst: Tile, src: Tile) -> float:
    """dst[F, P] = src[P, F]^T on TensorE (transpose mode: bf16 in -> bf16 PSUM out)."""
    p, f = src.shape
    if dst.shape != (f, p):
        raise ValueError(f"transpose: dst {dst.shape} is not the transpose of {src.shape}")
    if tl.execute:
        _store(dst, src.read().T)
    cycles = max(p, min(tl.core.matmul_min_cycles, f))
    return tl.issue("tensor", "transpose", cycles, (src,), (dst,))


# ---- scalar / vector / gpsimd -------------------------------------------------------------
_FUNCS = {"exp": np.exp, "copy": lambda x: x, "identity": lambda x: x}
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
        _store(dst, y)
        if reduce is not None:
            _store(reduce, y.sum(axis=-1, keepdims=True, dtype=np.float32))
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
        _store(dst, y)
        if reduce is not None:
            _store(reduce, y.sum(axis=-1, keepdims=True, dtype=np.float32))
    writes = (dst,) if reduce is None else (dst, reduce)
    return tl.issue("vector", "exponential", cycles, (src, row_max), writes)


def tensor_tensor(tl: Timeline, dst: Tile, a: Tile, b: Tile, op: str = "add") -> float:
    """VectorE elementwise dst = a op b (fp32 math)."""
    n = dst.free_size
    fast = a.memory == "psum" or b.memory == "psum" or _bf16ish(a, b, dst)
    cycles = max(tl.core.instruction_min_cycles, n if fast else 2 * n)
    if tl.execute:
        _store(dst, _BINOPS[op](a.read(), b.read()))
    return tl.issue("vector", f"tensor_tensor {op}", cycles, (a, b), (dst,))


def tensor_scalar(tl: Timeline, dst: Tile, src: Tile, op: str, scalar, engine: str = "vector",
                  op2: str | None = None, scalar2=None) -> float:
    """dst = (src op scalar) [op2 scalar2]; a scalar is a float or a per-partition [P, 1] tile."""
    perf = (_vector_perf if engine == "vector" else _scalar_perf)(tl, dst, src)
    cycles = max(tl.core.instruction_min_cycles, math.ceil(src.free_size / perf))
    reads = [src]
    if tl.execute:
        def val(s):
            return s.read() if isinstance(s, Tile) else np.float32(s)
        y = _BINOPS[op](src.read(), val(scalar))
        if op2 is not None:
            y = _BINOPS[op2](y, val(scalar2))
        _store(dst, y)
    reads += [s for s in (scalar, scalar2) if isinstance(s, Tile)]
    return tl.issue(engine, f"tensor_scalar {op}", cycles, reads, (dst,))


def tensor_reduce(tl: Timeline, dst: Tile, src: Tile, op: str = "max") -> float:
    """VectorE reduction along the free axis into dst [P, 1]."""
    n = src.free_size
    cycles = n // 2 if (src.dtype == "bf16" and op in ("add", "max")) else n
    if tl.execute:
        f = np.max if op == "max" else np.sum
        _store(dst, f(src.read(), axis=-1, keepdims=True))
    return tl.issue("vector", f"tensor_reduce {op}", cycles, (src,), (dst,))


def copy(tl: Timeline, dst: Tile, src: Tile, engine: str = "vector") -> float:
    """dst = src (with a cast) on VectorE, ScalarE or GpSimd (GpSimd cannot read PSUM)."""
    if engine == "gpsimd" and src.memory == "psum":
        raise ValueError("copy: GpSimd cannot access PSUM; use engine='vector' or 'scalar'")
    perf = {"vector": _vector_perf, "scalar": _scalar_perf}.get(engine, lambda *a: 1.0)(
        tl, dst, src)
    cycles = max(tl.core.instruction_min_cycles, math.ceil(src.free_size / perf))
    if tl.execute:
        _store(dst, src.read())
    return tl.issue(engine, "copy", cycles, (src,), (dst,))


def affine_select(tl: Timeline, dst: Tile, offset: int, fill: float = -np.inf) -> float:
    """GpSimd: dst[p, f] = 0 where f <= p + offset, else ``fill`` (a causal mask bias)."""
    p, f = dst.shape
    if tl.execute:
        keep = np.arange(f)[None, :] <= np.arange(p)[:, None] + offset
        dst.write(np.where(keep, np.float32(0), np.float32(fill)))
    return tl.issue("gpsimd", "affine_select", GPSIMD_START + f, (), (dst,))
