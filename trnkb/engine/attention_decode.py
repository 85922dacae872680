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

The next tile's K/V loads, S^T and first transpose are issued before this tile's
softmax (PSUM double-buffered), so TensorE and the DMA queues run ahead of VectorE.
Costs are the published per-instruction formulas of :mod:`trnkb.engine.isa`; the
kernel is cost only (the one-core :func:`~trnkb.engine.attention.attention` computes
decode numerics with the query-row layout).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence

from trnkb.engine import isa
from trnkb.engine.buffers import Tile
from trnkb.engine.timeline import Timeline

MAX_ROWS = 128  # query rows per KV head this kernel takes (chunks x rows <= 128)


def decode_program(tl: Timeline, rows: int, seq_kv: int, d: int, heads_kv: int,
                   head_range: Sequence[int] | None = None,
                   exp_engine: str = "vector") -> Generator[None, None, None]:
    """Issue the decode kernel for KV heads ``head_range`` (default all); yields per tile."""
    core = tl.core
    P = core.partitions
    if not 1 <= rows <= MAX_ROWS or d > P:
        raise ValueError(f"decode kernel: rows={rows} must be 1..{MAX_ROWS} and head_dim "
                         f"{d} <= {P}")
    chunks = max(1, min(8, P // rows))
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
    sps = tl.psum_pool("S", (chunks * rows, P), "fp32", 2)
    pts = tl.psum_pool("P^T", (P, chunks * rows), "bf16", 2)
    pvs = tl.psum_pool("PV", (d, chunks * rows), "fp32", 2)
    psb = tl.sbuf_pool("P", (chunks * rows, P), "bf16", 2)
    ptsb = tl.sbuf_pool("P^T", (P, chunks * rows), "bf16", 2)
    stat = tl.sbuf_pool("row stats", (chunks * rows, 1), "fp32", 12)
    accp = tl.sbuf_pool("O accumulator", (d, chunks * rows), "fp32", 2)
    outp = tl.sbuf_pool("O tile", (rows, d), "bf16", 2)
    n_tiles = math.ceil(seq_kv / Bk)
    heads = range(heads_kv) if head_range is None else head_range

    def front(hk: int, t: int, qt: Tile) -> tuple[Tile, Tile, int]:
        """Loads, S^T and its transpose of tile ``t``: (S [segments, keys], V tile, chunks)."""
        j0 = t * Bk
        w = min(Bk, seq_kv - j0)
        nch = math.ceil(w / P)
        kt, vt = kpool.tile(), vpool.tile()
        isa.dma(tl, kt, K.view((slice(hk * d, (hk + 1) * d), slice(j0, j0 + w)), (d, w),
                               key=(hk, j0)))
        isa.dma(tl, vt, V.view((slice(hk * seq_kv + j0, hk * seq_kv + j0 + w), slice(None)),
                               (w, d), key=(hk, j0)))
        st = sts.tile()
        tl.issue("tensor", "matmul S^T", nch * (max(min(core.matmul_min_cycles, P), rows) + ls),
                 (kt, qt), (st,), latency=lat)
        s = sps.tile()
        tl.issue("tensor", "transpose", max(P, min(64, nch * rows)), (st,), (s,), latency=lat)
        return s, vt, nch

    for hk in heads:
        qt = qpool.tile()
        isa.dma(tl, qt, Q.view((slice(hk * d, (hk + 1) * d), slice(None)), (d, rows), key=hk))
        acc = accp.tile()
        m_old: Tile | None = None
        l_run: Tile | None = None
        nxt = front(hk, 0, qt)
        for t in range(n_tiles):
            s, vt, nch = nxt
            if t + 1 < n_tiles:
                nxt = front(hk, t + 1, qt)
            mx = stat.tile()
            tl.issue("vector", "tensor_reduce max", max(mi, P), (s,), (mx,))
            m_new = mx
            if m_old is not None:
                m_new = stat.tile()
                tl.issue("vector", "tensor_tensor max", mi, (m_old, mx), (m_new,))
            p, lj = psb.tile(), stat.tile()
            if exp_engine == "vector":
                cyc = max(mi, math.ceil(P * core.vector_clock.magnitude
                                        / (core.vector_exp_speedup * core.scalar_clock.magnitude)))
                tl.issue("vector", "exponential", cyc, (s, m_new), (p, lj))
            else:
                tl.issue("scalar", "activation exp", max(mi, P) + mi, (s, m_new), (p, lj))
            pt = pts.tile()
            tl.issue("tensor", "transpose", max(P, min(64, nch * rows)), (p,), (pt,), latency=lat)
            ptb = ptsb.tile()
            tl.issue("scalar", "copy", mi, (pt,), (ptb,))
            pv = pvs.tile()
            pv_cycles = max(min(core.matmul_min_cycles, d), rows) + math.ceil(d / core.ls_speedup)
            tl.issue("tensor", "matmul PV", nch * pv_cycles, (vt, ptb), (pv,), latency=lat)
            if m_old is None:
                tl.issue("vector", "copy", mi, (pv,), (acc,))
                l_run = lj
            else:
                assert l_run is not None
                alpha, l_new = stat.tile(), stat.tile()
                tl.issue("scalar", "activation exp", mi, (m_old, m_new), (alpha,))
                tl.issue("vector", "tensor_scalar", mi, (l_run, alpha, lj), (l_new,))
                tl.issue("vector", "tensor_tensor multiply", mi, (acc, alpha), (acc,))
                tl.issue("vector", "tensor_tensor add", mi, (acc, pv), (acc,))
                l_run = l_new
            m_old = m_new
            yield
        # merge the segments of each query (max, rescale, sum over chunks) and normalise
        assert l_run is not None
        ot = outp.tile()
        tl.issue("vector", "segment merge", 4 * mi, (acc, l_run), (ot,))
        isa.dma(tl, out.view((slice(hk * rows, (hk + 1) * rows), slice(None)), (rows, d), key=hk),
                ot)
