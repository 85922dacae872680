"""GEMM kernel emission: the instructions of a :class:`~trnkb.engine.gemm_plan.GemmPlan`.

:func:`gemm_program` issues, per block of ``tm`` x ``tn`` output tiles, the DMA groups of
K (stationary tiles, the moving slab or tiles, MX scale tiles, BF16 activations that
VectorE quantizes), the TensorE matmuls accumulating in PSUM, and after the last K step
the evacuation of each tile (VectorE and ScalarE in turn) and its store to its own
region of C (disjoint writes do not wait for each other). The previous block's
evacuation is issued after this block's first group, so TensorE does not wait for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from trnkb.engine import isa
from trnkb.engine.buffers import ITEMSIZE, Pool, Tile
from trnkb.engine.gemm_reference import MX_BLOCK, MX_DTYPES
from trnkb.engine.timeline import Timeline

if TYPE_CHECKING:
    from trnkb.engine.gemm_plan import GemmPlan

Progress = Callable[[int, int], None] | None
# a loaded group: (tile, scale tile, one region per column tile or None)
Loaded = tuple[Tile, Tile | None, list[Tile] | None]
Tiles = list[tuple[int, int]]  # (offset, size) per tile along one axis


def gemm_program(tl: Timeline, plan: GemmPlan, fp8_scale: float = 1.0,
                 progress: Progress = None) -> Iterator[None]:
    """Issue the GEMM of ``plan`` on ``tl`` (cost only); yields after each DMA group."""
    core = tl.core
    P = min(core.pe_rows, core.partitions)  # contraction rows per pass
    R, K, N, pack, K0, G = plan.rows, plan.k, plan.cols, plan.pack, plan.k_step, plan.group
    TM, TN = plan.tile_m, plan.tile_n
    Mb, Nb = plan.tm * TM, plan.tn * TN
    steps = plan.steps
    groups = math.ceil(steps / G)
    mx = plan.stat_dtype in MX_DTYPES
    q_st, q_mv = plan.quantize == "stationary", plan.quantize == "moving"
    S = tl.hbm("stationary^T", (K, R), "bf16" if q_st else plan.stat_dtype)
    Mv = tl.hbm("moving", (K, N), "bf16" if q_mv else plan.mov_dtype)
    C = tl.hbm("C^T" if plan.swapped else "C", (R, N), "bf16")

    def shape(kp: int, width: int) -> tuple[int, ...]:
        return (kp, pack, width) if pack > 1 else (kp, width)

    s_pool = tl.sbuf_pool("stationary tiles", shape(P, G * Mb), plan.stat_dtype, plan.bufs)
    # a resident slab is double-buffered when two fit in a quarter of SBUF: the next block
    # column's slab then loads in the DMA gaps of this one
    slab_bytes = groups * G * pack * Nb * ITEMSIZE[plan.mov_dtype]
    slabs = 2 if 2 * slab_bytes <= tl.sbuf_partition_bytes / 4 else 1
    m_bufs = slabs * groups if plan.resident else plan.bufs
    m_pool = tl.sbuf_pool("moving slab" if plan.resident else "moving tiles",
                          shape(P, G * Nb), plan.mov_dtype, m_bufs)
    if mx:
        # one E8M0 scale per 32 K-elements per column; a group with more scale rows than
        # partitions folds them into the free dimension (same bytes, at most 128 partitions)
        rows = G * K0 // MX_BLOCK
        sp = min(P, rows)
        fold = math.ceil(rows / sp)
        ss_pool = tl.sbuf_pool("stationary scales", (sp, fold * Mb), "e8m0", plan.bufs)
        ms_pool = tl.sbuf_pool("moving scales", (sp, fold * Nb), "e8m0", m_bufs)
    if q_st or q_mv:
        raw_pool = tl.sbuf_pool("bf16 activations", shape(P, G * (Mb if q_st else Nb)), "bf16",
                                plan.bufs)
    if plan.block_store:
        out_pool = tl.sbuf_pool("C blocks", (TM, plan.tm * Nb), "bf16", 2)
    else:
        out_pool = tl.sbuf_pool("C tiles", (TM, TN), "bf16", 2 * plan.tm * plan.tn)
    acc_pool = tl.psum_pool("accumulators", (TM, TN), "fp32", 2 * plan.tm * plan.tn)

    def load(pool: Pool, src: Tile, k0: int, kk: int, c0: int, widths: Sequence[int],
             quantize: bool, scale_pool: Pool | None, scale_src: Tile | None) -> Loaded:
        """DMA one group (rows k0:k0+kk, the column tiles ``widths`` from c0) into a new tile.

        Returns (tile, scale tile, region views): with one K step per group each column
        tile is its own DMA into its own region, so its matmuls start as soon as it lands.
        """
        t = pool.tile()
        total = sum(widths)
        sc = None
        if scale_pool is not None:
            sc = scale_pool.tile()
        parts: list[tuple[int, int, int | None]] = [(0, total, None)]
        item = ITEMSIZE["bf16" if quantize else pool.dtype] * pack
        if G == 1 and len(widths) > 1 and min(widths) * item >= tl.dma_min_payload:
            parts, o = [], 0
            for j, w in enumerate(widths):
                parts.append((o, w, j))
                o += w
        if scale_pool is not None and not quantize:  # scales first: every region needs them
            assert sc is not None and scale_src is not None
            isa.dma(tl, sc, scale_src, nbytes=math.ceil(kk / MX_BLOCK) * total)
        regions = []
        raw = raw_pool.tile() if quantize else None
        for o, w, i in parts:
            idx = (slice(None),) * (2 if pack > 1 else 1) + (slice(o, o + w),)
            kp = min(P, math.ceil(kk / pack))
            dst = t if i is None else t.view(idx, shape(kp, w), key=("r", i), disjoint=True)
            nbytes = kk * w * ITEMSIZE[src.dtype]  # inputs are read-only: no region needed
            if quantize:
                assert raw is not None and sc is not None
                rd = raw if i is None else raw.view(idx, shape(kp, w), key=("r", i), disjoint=True)
                isa.dma(tl, rd, src, nbytes)
                isa.quantize_mx(tl, dst, sc, rd)
            else:
                isa.dma(tl, dst, src, nbytes)
            regions.append(dst)
        return t, sc, (regions if len(parts) > 1 else None)

    SS = tl.hbm("stationary scales", (math.ceil(K / MX_BLOCK), R), "e8m0") if mx else None
    MS = tl.hbm("moving scales", (math.ceil(K / MX_BLOCK), N), "e8m0") if mx else None
    blocks = [(r0, c0) for c0 in range(0, N, Nb) for r0 in range(0, R, Mb)]
    slab: list[Loaded] = []
    evict = ("vector", "scalar")
    dt = "bf16" if not mx else ("mxfp4" if "mxfp4" in (plan.stat_dtype, plan.mov_dtype)
                                else "mxfp8")
    if plan.in_dtype == "fp8":
        dt = "fp8"

    def evacuate(accs: dict[tuple[int, int], Tile], tiles_m: Tiles, tiles_n: Tiles, r0: int,
                 c0: int) -> None:
        blk = out_pool.tile() if plan.block_store else None
        for (i, j), acc in accs.items():
            (oi, h), (oj, w) = tiles_m[i], tiles_n[j]
            if blk is not None:
                o = blk.view(None, (h, w), key=(i, j), disjoint=True)
                eng = evict[(i + j) % 2]
                a = acc if (h, w) == (TM, TN) else acc.view(None, (h, w), key="edge")
                if plan.in_dtype == "fp8":
                    isa.tensor_scalar(tl, o, a, "multiply", fp8_scale, engine=eng)
                else:
                    isa.copy(tl, o, a, engine=eng)
                continue
            ot = out_pool.tile()
            cost = {e: tl._free[e] + (1.0 if e == "scalar" and tl.core.scalar_lanes
                                      <= tl.core.partitions else 0.5) * TN / tl.clock_hz[e]
                    for e in evict}
            eng = min(evict, key=lambda e: cost[e])  # the evacuation engine that finishes first
            a = acc if (h, w) == (TM, TN) else acc.view(None, (h, w), key="edge")
            o = ot if (h, w) == (TM, TN) else ot.view(None, (h, w), key="edge")
            if plan.in_dtype == "fp8":
                isa.tensor_scalar(tl, o, a, "multiply", fp8_scale, engine=eng)
            else:
                isa.copy(tl, o, a, engine=eng)
            rr, cc = r0 + oi, c0 + oj
            isa.dma(tl, C.view((slice(rr, rr + h), slice(cc, cc + w)), (h, w), key=(rr, cc)), o)
        if blk is not None:
            mb, nb = sum(h for _, h in tiles_m), sum(w for _, w in tiles_n)
            isa.dma(tl, C.view((slice(r0, r0 + mb), slice(c0, c0 + nb)), (mb, nb), key=(r0, c0)),
                    blk, nbytes=mb * nb * ITEMSIZE["bf16"])

    pending: tuple[dict[tuple[int, int], Tile], Tiles, Tiles, int, int] | None = None
    # pending: the previous block's evacuation, issued after this block's first group
    for bi, (r0, c0) in enumerate(blocks):
        mb, nb = min(Mb, R - r0), min(Nb, N - c0)
        tiles_m = [(i * TM, min(TM, mb - i * TM)) for i in range(math.ceil(mb / TM))]
        tiles_n = [(j * TN, min(TN, nb - j * TN)) for j in range(math.ceil(nb / TN))]
        wm, wn = [w for _, w in tiles_m], [w for _, w in tiles_n]
        accs = {(i, j): acc_pool.tile() for i in range(len(tiles_m)) for j in range(len(tiles_n))}
        if r0 == 0 or not plan.resident:
            slab = []
        for g in range(groups):
            k0 = g * G * K0
            kk = min(G * K0, K - k0)
            st, sts, st_regions = load(s_pool, S, k0, kk, r0, wm, q_st,
                                       ss_pool if mx else None, SS)
            if len(slab) <= g:
                slab.append(load(m_pool, Mv, k0, kk, c0, wn, q_mv, ms_pool if mx else None, MS))
            mv, mvs, mv_regions = slab[g]
            kp = min(P, math.ceil(min(K0, kk) / pack))
            st_parts = st_regions or [st] * len(wm)
            mv_parts = mv_regions or [mv] * len(wn)
            grid = [[accs[i, j] for j in range(len(wn))] for i in range(len(wm))]
            scale_tiles: tuple[Tile, ...] = ()
            if mx:
                assert sts is not None and mvs is not None
                scale_tiles = (sts, mvs)
            isa.matmul_block(tl, grid, st_parts, mv_parts, math.ceil(kk / K0), wm, wn, kp, dt,
                             scale_tiles, accumulate=g > 0)
            if g == 0 and pending is not None:
                evacuate(*pending)
                pending = None
            yield
        pending = (accs, tiles_m, tiles_n, r0, c0)
        if progress is not None:
            progress(bi + 1, len(blocks))
    if pending is not None:
        evacuate(*pending)
