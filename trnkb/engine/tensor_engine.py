"""TensorE instructions: matmul (LoadStationary + MultiplyMoving), MX matmul, transposes.

Costs (nki.isa "Estimated instruction cost" and the NKI architecture guides; the
constants are fields of :class:`~trnkb.engine.model.NeuronCore`, from specs/cores.yaml):
MultiplyMoving max(min(MM_INIT, M_stationary), N_moving) cycles (x ``fp32_matmul_factor``
for fp32 inputs); LoadStationary M / ``ls_speedup`` cycles, in the background of the
previous MultiplyMoving; results reach PSUM ``tensor_pipeline_cycles`` after the
instruction leaves the array; transpose max(P, min(MM_INIT, F)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trnkb.engine.buffers import Slot, Tile, mark_read, mark_write, read_ready, store, write_ready
from trnkb.engine.numerics import E8M0_BIAS, E8M0_NAN, MX_BLOCK
from trnkb.engine.timeline import Timeline


def _logical(t: Tile) -> NDArray[Any]:
    """A matmul operand as [K, F]: (P, pack, F) -> k = j * P + p."""
    a = t.read()
    if a.ndim == 3:
        p, j, f = a.shape
        return a.transpose(1, 0, 2).reshape(j * p, f)
    return a


def _matmul_cost(tl: Timeline, stationary: Tile, moving: Tile, pack: int, op: str,
                 fp32: bool = False) -> tuple[int, int, float]:
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


def _apply_scales(vals: NDArray[Any], scales: NDArray[Any]) -> NDArray[Any]:
    """MX operand [K, F] times its E8M0 scales [K / 32, F] (value 2**(s - 127), 255 = NaN)."""
    s = np.asarray(scales).astype(np.int64)
    f = np.where(s == E8M0_NAN, np.nan, np.ldexp(1.0, s - E8M0_BIAS)).astype(np.float32)
    return vals * np.repeat(f, MX_BLOCK, axis=0)[: vals.shape[0]]


def _acc_ready(s: Slot) -> float:
    """When TensorE may accumulate into ``s``: right after its own last write (PSUM
    accumulation needs no drain), or when another engine's write has landed."""
    r = read_ready(s)
    return s.wend if s.weng == "tensor" and s.wend < r and s.parent is None else r


def matmuls(tl: Timeline, items: Sequence[tuple[Tile, Tile, Tile]], accumulate: bool = False,
            dtype: str = "bf16",
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
    for operand in (st0, mv0) if mx else ():
        if operand.dtype not in ("mxfp8", "mxfp4"):
            raise ValueError(f"matmul_mx: operand dtype {operand.dtype!r} is not mxfp8/mxfp4")
    fp32 = dtype == "fp32"
    extra: tuple[Tile, ...] = scales if (mx and scales is not None) else ()
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
                a, b = _apply_scales(a, extra[0].read()), _apply_scales(b, extra[1].read())
            prod = a.T @ b
            add = accumulate or (chain and n_ > 0)
            dst.write(dst.read() + prod if add else prod)
    hz = tl.clock_hz["tensor"]
    mm, ls = mm_c / hz, ls_c / hz
    lat = tl.tensor_latency
    # readiness of every operand, computed once per distinct region
    cache: dict[int, float] = {}
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
    end = t_free
    # items of the current back-to-back run
    pending: list[tuple[tuple[Tile, ...], tuple[Tile, ...]]] = []
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
    assert run_start is not None  # items is not empty
    tl.issue_run("tensor", op, mm_c, run_start, pending, lat, accumulate)
    tl.loaded, tl.ls_end, tl.mm_start = loaded, ls_end, mm_start
    return end


def matmul_block(tl: Timeline, accs: Sequence[Sequence[Tile]], st_parts: Sequence[Tile],
                 mv_parts: Sequence[Tile], steps: int, wm: Sequence[int], wn: Sequence[int],
                 kp: int, dtype: str = "bf16", scales: Sequence[Tile] = (),
                 accumulate: bool = False) -> float:
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
    end: float = t0 + span
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


def _block_constants(tl: Timeline, wm: Sequence[int], wn: Sequence[int], kp: int, dtype: str
                     ) -> tuple[list[list[int]], list[list[int]], int, float, str, int, int]:
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
    offs: list[list[int]] = []
    o = 0
    for i in range(len(wm)):
        row: list[int] = []
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


def transpose(tl: Timeline, dst: Tile, src: Tile) -> float:
    """dst[F, P] = src[P, F]^T on TensorE (transpose mode: bf16 in -> bf16 PSUM out)."""
    p, f = src.shape
    if dst.shape != (f, p):
        raise ValueError(f"transpose: dst {dst.shape} is not the transpose of {src.shape}")
    if tl.execute:
        store(dst, src.read().T)
    cycles = max(p, min(tl.core.matmul_min_cycles, f))
    return tl.issue("tensor", "transpose", cycles, (src,), (dst,))


def transposes(tl: Timeline, pairs: Sequence[tuple[Tile, Tile]]) -> float:
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
            store(dst, src.read().T)
        cycles = max(cycles, max(p, min(tl.core.matmul_min_cycles, f)))
        t = max(t, read_ready(src.slot))
        t = write_ready(dst.slot, t, "tensor")
    return tl.issue_run("tensor", "transpose", cycles, t,
                        [((src,), (dst,)) for dst, src in pairs], tl.tensor_latency)
