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
    affine_select       gpsimd            gpsimd_start_cycles + N
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

from trnkb.engine.numerics import E8M0_BIAS, E8M0_NAN, MX_BLOCK, round_to
from trnkb.engine.timeline import Tile, Timeline, mark_read, mark_write, read_ready, write_ready

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
    """VectorE performance mode for copy/tensor_scalar (ARCH-trn2): 4x for bf16 SBUF->SBUF,
    2x when one side is PSUM (an fp32 accumulator evacuated to bf16 included), else 1x."""
    if src.memory == "psum" and _bf16ish(dst):
        return min(2.0, tl.core.vector_lanes / tl.core.partitions)
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
        _store(dst, v)
    hbm_side, chip_side = (src, dst) if src.memory == "hbm" else (dst, src)
    n = hbm_side.nbytes if nbytes is None else nbytes
    return tl.transfer(f"dma {src.memory}->{dst.memory}", n, chip_side.shape[0], (src,), (dst,))


# ---- tensor engine --------------------------------------------------------------------
def _matmul_cost(tl: Timeline, stationary: Tile, moving: Tile, pack: int, op: str,
                 fp32: bool = False):
    """(MultiplyMoving cycles, LoadStationary cycles, FLOPs) of one matmul.

    MM = max(min(MM_INIT, M_stationary), N_moving) (nki.isa cost; x ``fp32_matmul_factor``
    for fp32 inputs); LS = ceil(M_stationary / ls_speedup) (Fast LoadStationary, ARCH-v2).
    """
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
    mm = max(min(core.matmul_min_cycles, m), n) * (core.fp32_matmul_factor if fp32 else 1)
    ls = math.ceil(m / core.ls_speedup)
    return mm, ls, 2.0 * kp * pack * m * n


def _apply_scales(vals: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """MX operand [K, F] times its E8M0 scales [K / 32, F] (value 2**(s - 127), 255 = NaN)."""
    s = np.asarray(scales).astype(np.int64)
    f = np.where(s == E8M0_NAN, np.nan, np.ldexp(1.0, s - E8M0_BIAS)).astype(np.float32)
    return vals * np.repeat(f, MX_BLOCK, axis=0)[: vals.shape[0]]


def _acc_ready(s) -> float:
    """When TensorE may accumulate into ``s``: right after its own last write (PSUM
    accumulation needs no drain), or when another engine's write has landed."""
    r = read_ready(s)
    return s.wend if s.weng == "tensor" and s.wend < r and s.parent is None else r


def matmuls(tl: Timeline, items, accumulate: bool = False, dtype: str = "bf16",
            scales: tuple[Tile, Tile] | None = None, chain: bool = False) -> float:
    """A run of matmuls issued back to back: ``items`` = [(dst, stationary, moving), ...].

    Each item is one TensorE instruction pair, LoadStationary + MultiplyMoving:
    dst[M, N] (+)= stationary[K, M]^T @ moving[K, N] in fp32 PSUM. All items have the
    shapes of the first. Timing per item: the LS of a new stationary starts when its
    data is ready, the previous LS is done and the current MM has started (background
    LS, ARCH-v2), so it is hidden behind a busy stream and exposed after idle time; the
    MM starts when TensorE, its LS and its operands are ready; results reach PSUM
    ``tensor_pipeline_cycles`` later (other engines wait for that, accumulation into
    the same bank does not). Equal back-to-back items are recorded as one run.

    ``chain``: the items accumulate into one destination (a K loop): the first item
    uses ``accumulate``, the others add to it.

    ``dtype`` bf16 (K <= 128 per pass), fp8 (double row where the core packs 2), fp32
    (``fp32_matmul_factor`` slower) or mxfp8/mxfp4: ``scales`` = the two E8M0 scale
    tiles ([K / 32, M] and [K / 32, N], uint8 bytes); the operand tiles hold the element
    values and the scales are applied here, so wrong scale bytes give a wrong result.
    """
    mx = dtype in ("mxfp8", "mxfp4")
    if mx and scales is None:
        raise ValueError("matmul_mx needs the stationary and moving scale tiles")
    dst0, st0, mv0 = items[0]
    for t in (st0, mv0) if mx else ():
        if t.dtype not in ("mxfp8", "mxfp4"):
            raise ValueError(f"matmul_mx: operand dtype {t.dtype!r} is not mxfp8/mxfp4")
    fp32 = dtype == "fp32"
    pack = (max(tl.core.pack(t.dtype) for t in (st0, mv0)) if mx
            else 1 if fp32 else tl.core.pack(dtype))
    op = "matmul_mx" if mx else "matmul"
    mm_c, ls_c, flops = _matmul_cost(tl, st0, mv0, pack, op, fp32)
    if dst0.slot.memory != "psum" and (dst0.slot.parent is None
                                       or dst0.slot.parent.memory != "psum"):
        raise ValueError(f"{op}: the destination must be a PSUM tile")
    if tl.execute:
        for n_, (dst, st, mv) in enumerate(items):
            a, b = _logical(st).astype(np.float32), _logical(mv).astype(np.float32)
            if mx:
                a, b = _apply_scales(a, scales[0].read()), _apply_scales(b, scales[1].read())
            prod = a.T @ b
            add = accumulate or (chain and n_ > 0)
            dst.write(dst.read() + prod if add else prod)
    hz = tl.clock_hz["tensor"]
    mm, ls = mm_c / hz, ls_c / hz
    lat = tl.tensor_latency
    extra = scales if mx else ()
    # readiness of every operand, computed once per distinct region
    cache: dict = {}
    ready = []
    for dst, st, mv in items:
        s, m_, d = st.slot, mv.slot, dst.slot
        rs = cache.get(id(s))
        if rs is None:
            rs = cache[id(s)] = read_ready(s)
        rm = cache.get(id(m_))
        if rm is None:
            rm = cache[id(m_)] = read_ready(m_)
        rd = write_ready(d, _acc_ready(d) if accumulate else 0.0, "tensor")
        ready.append((s, rs, rm, rd))
    for x in extra:
        r = read_ready(x.slot)
        ready = [(s, max(rs, r), rm, rd) for s, rs, rm, rd in ready]
    t_free = tl._free["tensor"]
    loaded, ls_end, mm_start = tl.loaded, tl.ls_end, tl.mm_start
    run_start = None
    n_run = 0
    end = t_free
    pending = []  # items of the current back-to-back run
    for (dst, st, mv), (s, rs, rm, rd) in zip(items, ready, strict=True):
        if s is not loaded:
            ls_start = max(rs, ls_end, mm_start)
            ls_end = ls_start + ls
            loaded = s
            ls_from = ls_start
        else:
            ls_from = None
        t = max(end, ls_end, rm, rd)
        if run_start is not None and t > end:  # the run breaks: record it
            tl.issue_run("tensor", op, mm_c, run_start, pending, lat, accumulate)
            run_start, pending = None, []
        if ls_from is not None and ls_end == t and t > end:  # LS exposed: TensorE waits on it
            lo = max(ls_from, end)
            tl._record("tensor", "LoadStationary", lo, t - lo)
            tl._busy["tensor"] += t - lo
        if run_start is None:
            run_start = t
        reads = (st, mv, *extra, dst) if accumulate else (st, mv, *extra)
        pending.append((reads, (dst,)))
        mm_start = t
        end = t + mm
        n_run += 1
    tl.issue_run("tensor", op, mm_c, run_start, pending, lat, accumulate)
    tl.loaded, tl.ls_end, tl.mm_start = loaded, ls_end, mm_start
    return end


def matmul_block(tl: Timeline, accs, st_parts, mv_parts, steps: int, wm, wn, kp: int,
                 dtype: str = "bf16", scales=(), accumulate: bool = False) -> float:
    """The K loop of one output block, cost only: for each of ``steps`` K steps, for each
    stationary column tile i (width ``wm[i]``) and moving column tile j (``wn[j]``),
    ``accs[i][j] += stationary[step, i]^T @ moving[step, j]``, issued back to back.

    ``st_parts[i]`` / ``mv_parts[j]`` are the tiles (or regions) holding those operands for
    every step. Same timing rules as :func:`matmuls`, computed in closed form: the block
    starts when TensorE, its first LoadStationary and the operands of its first step are
    ready (an operand or accumulator needed later in the first step may delay the start
    so the step runs back to back), then ``steps x sum(II_ij)`` cycles follow with every
    later LoadStationary hidden (LS = M / ls_speedup <= min(MM_INIT, M) <= II).
    """
    if tl.execute:
        raise ValueError("matmul_block is cost-only; use matmuls to compute values")
    key = (tuple(wm), tuple(wn), kp, dtype)
    const = tl.block_cache.get(key)
    if const is None:
        const = tl.block_cache[key] = _block_constants(tl, wm, wn, kp, dtype)
    ii, offs, D, ls, op, bpstep_sbuf, bpstep_psum = const
    hz = tl.clock_hz["tensor"]
    tm, tn = len(wm), len(wn)
    rs = [read_ready(t.slot) for t in st_parts]
    rsc = max((read_ready(t.slot) for t in scales), default=0.0)
    rm = [read_ready(t.slot) for t in mv_parts]
    t_free = tl._free["tensor"]
    ls_start = max(rs[0], rsc, tl.ls_end, tl.mm_start)
    ls_end = ls_start + ls
    t0 = max(t_free, ls_end)
    for i in range(tm):
        t0 = max(t0, rs[i] + ls - offs[i][0] / hz)
        for j in range(tn):
            acc = accs[i][j].slot
            rd = write_ready(acc, _acc_ready(acc) if accumulate else 0.0, "tensor")
            t0 = max(t0, rd - offs[i][j] / hz, rm[j] - offs[i][j] / hz)
    if ls_end >= t0 and t0 > t_free:  # the first LS is exposed: TensorE waits on it
        lo = max(ls_start, t_free)
        tl._record("tensor", "LoadStationary", lo, t0 - lo)
        tl._busy["tensor"] += t0 - lo
    n = steps * tm * tn
    span = steps * D / hz
    end = t0 + span
    lat = tl.tensor_latency
    tl._record("tensor", op, t0, span / n, n, lat)
    tl._busy["tensor"] += span
    tl._free["tensor"] = end
    last = t0 + (steps - 1) * D / hz
    for i in range(tm):
        for j in range(tn):
            e = last + (offs[i][j] + ii[i][j]) / hz
            acc = accs[i][j].slot
            if accumulate:
                mark_read(acc, e)
            mark_write(acc, e, e + lat, "tensor")
        mark_read(st_parts[i].slot, last + (offs[i][tn - 1] + ii[i][tn - 1]) / hz)
    for j in range(tn):
        mark_read(mv_parts[j].slot, last + (offs[tm - 1][j] + ii[tm - 1][j]) / hz)
    for t in scales:
        mark_read(t.slot, end)
    tl.loaded = None
    tl.mm_start = end - ii[tm - 1][tn - 1] / hz
    tl.ls_end = tl.mm_start
    tl.bytes["sbuf"] += steps * bpstep_sbuf
    tl.bytes["psum"] += steps * bpstep_psum * (2 if accumulate else 1)
    return end


def _block_constants(tl, wm, wn, kp, dtype):
    """Per block shape: II per tile pair (cycles), offsets in a step, step cycles, LS (s)..."""
    core = tl.core
    fp32 = dtype == "fp32"
    pack = 1 if fp32 else core.pack(dtype)
    op = "matmul_mx" if dtype in ("mxfp8", "mxfp4") else "matmul"
    if kp > core.pe_rows or max(wm) > core.pe_cols or max(wn) > core.moving_free_max:
        raise ValueError(f"{op}: tiles K {kp} x M {max(wm)} x N {max(wn)} exceed the "
                         f"{core.pe_rows}x{core.pe_cols} array or moving size "
                         f"{core.moving_free_max}")
    hz = tl.clock_hz["tensor"]
    f = core.fp32_matmul_factor if fp32 else 1
    mi = core.matmul_min_cycles
    ii = [[max(min(mi, a), b) * f for b in wn] for a in wm]
    offs, o = [], 0
    for i in range(len(wm)):
        row = []
        for j in range(len(wn)):
            row.append(o)
            o += ii[i][j]
        offs.append(row)
    ls = math.ceil(max(wm) / core.ls_speedup) / hz
    isz = {"fp32": 4, "bf16": 2}.get(dtype, 1)
    sb = kp * pack * isz * (len(wn) * sum(wm) + len(wm) * sum(wn))
    return ii, offs, o, ls, op, sb, 4 * sum(wm) * sum(wn)


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


def transpose(tl: Timeline, dst: Tile, src: Tile) -> float:
    """dst[F, P] = src[P, F]^T on TensorE (transpose mode: bf16 in -> bf16 PSUM out)."""
    p, f = src.shape
    if dst.shape != (f, p):
        raise ValueError(f"transpose: dst {dst.shape} is not the transpose of {src.shape}")
    if tl.execute:
        _store(dst, src.read().T)
    cycles = max(p, min(tl.core.matmul_min_cycles, f))
    return tl.issue("tensor", "transpose", cycles, (src,), (dst,))


def transposes(tl: Timeline, pairs) -> float:
    """Several TensorE transposes issued back to back: ``pairs`` = [(dst, src), ...].

    Each costs max(P, min(MM_INIT, F)) cycles (:func:`transpose`); the run starts when
    every source is ready and every destination free, and is recorded as one run.
    """
    t = tl._free["tensor"]
    cycles = 0
    for dst, src in pairs:
        p, f = src.shape
        if dst.shape != (f, p):
            raise ValueError(f"transpose: dst {dst.shape} is not the transpose of {src.shape}")
        if tl.execute:
            _store(dst, src.read().T)
        cycles = max(cycles, max(p, min(tl.core.matmul_min_cycles, f)))
        t = max(t, read_ready(src.slot))
        t = write_ready(dst.slot, t, "tensor")
    return tl.issue_run("tensor", "transpose", cycles, t,
                        [((src,), (dst,)) for dst, src in pairs], tl.tensor_latency)


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
    return tl.issue("gpsimd", "affine_select", tl.core.gpsimd_start_cycles + f, (), (dst,))
