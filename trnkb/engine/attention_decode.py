"""Decode attention with keys on partitions: the GQA/MQA decode kernel (cost only).

With few query rows (a GQA group of decode queries, ``rows`` <= 128), a [rows, keys]
score tile uses ``rows`` of 128 partitions and every VectorE/ScalarE instruction
streams all keys per partition. Decode kernels turn it around, as this one does per
tile of up to 1024 keys (``chunks`` of 128):

* S^T = K Q^T per 128-key chunk: K^T chunk stationary (LoadStationary M = 128), Q^T
  moving (N = rows): ``chunks`` matmuls of max(min(64, 128), rows) cycles into one PSUM
  tile [128 keys, chunks x rows];
* one TensorE transpose to [chunks x rows, 128]: each (chunk, query) row is its own
  softmax segment (flash-decoding inside the core; segments are merged at the end);
* VectorE: row max over 128 keys, running max, exponential with its row sum (ScalarE
  activation where the core has no VectorE exponential);
* TensorE transposes P back to [128 keys, chunks x rows]; ScalarE evacuates it to SBUF;
* PV per chunk: V chunk stationary (M = d), P^T moving (N = rows) into [d, chunks x rows];
* VectorE rescales the accumulator by exp(m_old - m_new) and adds PV.

With many rows (MQA: 64) the transposed scores of several chunks sit side by side on the
free axis, so a tile is up to 1024 keys whatever the rows and one VectorE instruction
covers it; the chunks of one score row accumulate their PV in PSUM. K/V loads are issued
two tiles ahead of their S^T (the ~1.3 us DMA start latency exceeds a tile's compute); TensorE runs
S^T two tiles ahead and the next tile's transpose before this tile's P^T, and this
tile's PV after the next P^T (PSUM double-buffered), so no TensorE instruction waits on
the one just before it.
Costs are the published per-instruction formulas of :mod:`trnkb.engine.isa`; the
kernel is cost only (the one-core :func:`~trnkb.engine.attention.attention` computes
decode numerics with the query-row layout).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence

from trnkb.engine import isa
from trnkb.engine.buffers import Pool, Tile
from trnkb.engine.timeline import Timeline

MAX_ROWS = 128  # query rows per KV head this kernel takes (chunks x rows <= 128)
# K/V tiles loaded ahead of the S^T that reads them: the ~1.3 us DMA start latency
# (nki-dma-bandwidth guide) is longer than a tile's compute. Deeper look-ahead runs into
# the six K/V buffers (a load waits for the buffer's last PV) and leaves the queues idle
PREFETCH = 2


def softmax_step(tl: Timeline, s: Tile, m_old: Tile | None, stat: Pool, pool: Pool, free: int,
                 exp_engine: str) -> tuple[Tile, Tile, Tile]:
    """Row max of the scores ``s`` (``free`` elements per partition), the running max, and
    exp(s - max) with its row sum: (new max, P, row sum). The exponential runs on VectorE
    (Trainium3's ``exponential``) or as a ScalarE ``activation``."""
    core = tl.core
    mi = core.instruction_min_cycles
    mx = stat.tile()
    tl.issue("vector", "tensor_reduce max", max(mi, free), (s,), (mx,))
    m_new = mx
    if m_old is not None:
        m_new = stat.tile()
        tl.issue("vector", "tensor_tensor max", mi, (m_old, mx), (m_new,))
    p, lj = pool.tile(), stat.tile()
    if exp_engine == "vector":
        cyc = max(mi, math.ceil(free * core.vector_clock.magnitude
                                / (core.vector_exp_speedup * core.scalar_clock.magnitude)))
        tl.issue("vector", "exponential", cyc, (s, m_new), (p, lj))
    else:
        tl.issue("scalar", "activation exp", max(mi, free) + mi, (s, m_new), (p, lj))
    return m_new, p, lj


def decode_program(tl: Timeline, rows: int, seq_kv: int, d: int, heads_kv: int,
                   head_range: Sequence[int] | None = None,
                   exp_engine: str = "vector") -> Generator[None, None, None]:
    """Issue the decode kernel for KV heads ``head_range`` (default all); yields per tile."""
    core = tl.core
    P = core.partitions
    if not 1 <= rows <= MAX_ROWS or d > P:
        raise ValueError(f"decode kernel: rows={rows} must be 1..{MAX_ROWS} and head_dim "
                         f"{d} <= {P}")
    # chunks of 128 keys per tile: S^T [128 keys, chunks x rows] fills at most one PSUM
    # bank of fp32; each transpose takes ``cpb`` chunks (cpb x rows <= 128 partitions), the
    # ``blocks`` transposed blocks side by side on the free axis, so one VectorE/ScalarE
    # instruction handles the whole tile whatever the rows (MQA's 64 rows included)
    chunks = max(1, min(8, core.psum_bank_bytes // 4 // rows))
    cpb = max(1, min(chunks, P // rows))
    blocks = math.ceil(chunks / cpb)
    Bk = min(chunks * P, seq_kv)
    mi = core.instruction_min_cycles
    ls = math.ceil(P / core.ls_speedup)
    lat = tl.tensor_latency
    K = tl.hbm("K^T", (heads_kv * d, seq_kv), "bf16")
    V = tl.hbm("V", (heads_kv * seq_kv, d), "bf16")
    Q = tl.hbm("Q^T", (heads_kv * d, rows), "bf16")
    out = tl.hbm("O", (heads_kv * rows, d), "bf16")
    kpool = tl.sbuf_pool("K^T tiles", (d, Bk), "bf16", 6)
    vpool = tl.sbuf_pool("V tiles", (P, chunks, d), "bf16", 6)
    qpool = tl.sbuf_pool("Q^T", (d, rows), "bf16", 2)
    sts = tl.psum_pool("S^T", (P, chunks * rows), "fp32", 2)
    sps = tl.psum_pool("S", (cpb * rows, blocks * P), "fp32", 2)
    pts = tl.psum_pool("P^T", (P, chunks * rows), "bf16", 2)
    pvs = tl.psum_pool("PV", (d, cpb * rows), "fp32", 2)
    psb = tl.sbuf_pool("P", (cpb * rows, blocks * P), "bf16", 2)
    ptsb = tl.sbuf_pool("P^T", (P, chunks * rows), "bf16", 2)
    stat = tl.sbuf_pool("row stats", (cpb * rows, 1), "fp32", 16)
    accp = tl.sbuf_pool("O accumulator", (d, cpb * rows), "fp32", 2)
    outp = tl.sbuf_pool("O tile", (rows, d), "bf16", 2)
    n_tiles = math.ceil(seq_kv / Bk)
    heads = range(heads_kv) if head_range is None else head_range

    loads: dict[tuple[int, int], tuple[Tile, Tile]] = {}

    def load(hk: int, t: int) -> None:
        """DMA tile ``t``'s K^T and V (issued PREFETCH tiles ahead of their use)."""
        if t >= n_tiles or (hk, t) in loads:
            return
        j0 = t * Bk
        w = min(Bk, seq_kv - j0)
        kt, vt = kpool.tile(), vpool.tile()
        isa.dma(tl, kt, K.view((slice(hk * d, (hk + 1) * d), slice(j0, j0 + w)), (d, w),
                               key=(hk, j0)))
        isa.dma(tl, vt, V.view((slice(hk * seq_kv + j0, hk * seq_kv + j0 + w), slice(None)),
                               (w, d), key=(hk, j0)))
        loads[hk, t] = kt, vt

    def scores_t(hk: int, t: int, qt: Tile) -> tuple[Tile, Tile, int]:
        """S^T of tile ``t`` (its loads issued PREFETCH tiles ahead): (S^T, V tile, chunks)."""
        for ahead in range(t, t + PREFETCH + 1):
            load(hk, ahead)
        kt, vt = loads.pop((hk, t))
        nch = math.ceil(min(Bk, seq_kv - t * Bk) / P)
        st = sts.tile()
        tl.issue("tensor", "matmul S^T", nch * (max(min(core.matmul_min_cycles, P), rows) + ls),
                 (kt, qt), (st,), latency=lat)
        return st, vt, nch

    def transpose_s(front: tuple[Tile, Tile, int]) -> tuple[Tile, Tile, int, int]:
        """S^T transposed to S [segments, keys]: (S, V tile, chunks, transposed blocks)."""
        st, vt, nch = front
        s = sps.tile()
        nb = math.ceil(nch / cpb)
        tl.issue("tensor", "transpose", nb * max(P, min(64, min(nch, cpb) * rows)), (st,),
                 (s,), latency=lat)
        return s, vt, nch, nb

    def pv_step(acc: Tile, vt: Tile, ptb: Tile, nch: int,
                alpha: Tile | None) -> Callable[[], None]:
        """PV of one tile and its accumulation (rescaled by ``alpha`` after the first)."""
        def run() -> None:
            pv = pvs.tile()
            pv_cycles = max(min(core.matmul_min_cycles, d), rows) + math.ceil(d / core.ls_speedup)
            tl.issue("tensor", "matmul PV", nch * pv_cycles, (vt, ptb), (pv,), latency=lat)
            seg = min(nch, cpb) * rows  # segments: the chunks of one S row accumulate in PSUM
            if alpha is None:
                tl.issue("vector", "copy", max(mi, seg), (pv,), (acc,))
                return
            tl.issue("vector", "tensor_tensor multiply", max(mi, seg), (acc, alpha), (acc,))
            tl.issue("vector", "tensor_tensor add", max(mi, seg), (acc, pv), (acc,))
        return run

    for hk in heads:
        qt = qpool.tile()
        isa.dma(tl, qt, Q.view((slice(hk * d, (hk + 1) * d), slice(None)), (d, rows), key=hk))
        acc = accp.tile()
        m_old: Tile | None = None
        l_run: Tile | None = None
        # TensorE order per tile: S^T two tiles ahead, the next tile's transpose, then this
        # tile's P^T and PV, so no instruction waits for the one just before it to drain
        pending: Callable[[], None] | None = None
        st0 = scores_t(hk, 0, qt)
        st_next = scores_t(hk, 1, qt) if n_tiles > 1 else None
        nxt = transpose_s(st0)
        for t in range(n_tiles):
            s, vt, nch, nb = nxt
            st_after = scores_t(hk, t + 2, qt) if t + 2 < n_tiles else None
            if st_next is not None:
                nxt = transpose_s(st_next)
            st_next = st_after
            m_new, p, lj = softmax_step(tl, s, m_old, stat, psb, nb * P, exp_engine)
            if t == n_tiles - 1 and pending is not None:  # the last tile: nothing to hide
                pending()  # behind, so the previous PV runs while this softmax does
                pending = None
            pt = pts.tile()
            tl.issue("tensor", "transpose", nb * max(P, min(64, min(nch, cpb) * rows)), (p,),
                     (pt,), latency=lat)
            ptb = ptsb.tile()
            tl.issue("scalar", "copy", max(mi, nch * rows), (pt,), (ptb,))
            alpha: Tile | None = None
            if m_old is None:
                l_run = lj
            else:
                assert l_run is not None
                alpha, l_new = stat.tile(), stat.tile()
                tl.issue("scalar", "activation exp", mi, (m_old, m_new), (alpha,))
                tl.issue("vector", "tensor_scalar", mi, (l_run, alpha, lj), (l_new,))
                l_run = l_new
            m_old = m_new
            # PV and the accumulator update of the previous tile go after this tile's P^T,
            # so TensorE has work while this tile's P^T drains and is evacuated
            if pending is not None:
                pending()
            pending = pv_step(acc, vt, ptb, nch, alpha)
            yield
        if pending is not None:
            pending()
        # merge the segments of each query (max, rescale, sum over chunks) and normalise
        assert l_run is not None
        ot = outp.tile()
        tl.issue("vector", "segment merge", 4 * mi, (acc, l_run), (ot,))
        isa.dma(tl, out.view((slice(hk * rows, (hk + 1) * rows), slice(None)), (rows, d), key=hk),
                ot)
