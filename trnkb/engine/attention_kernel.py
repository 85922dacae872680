"""Attention kernel emission: the flash-attention forward's instructions on a Timeline.

:func:`attention_program` issues, per query tile, the streamed or resident K/V tiles,
QK^T, masking, the online softmax and PV (the algorithm is described in
:mod:`trnkb.engine.attention`); :func:`choose_evict_engine` picks the engine that
evacuates P^T from PSUM by a one-tile-row trial.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from trnkb.engine import isa
from trnkb.engine.buffers import Pool, Tile
from trnkb.engine.model import NeuronCore
from trnkb.engine.timeline import Timeline

Progress = Callable[[int, int], None] | None
Program = Generator[None, None, Tile]  # yields per query tile, returns the output in HBM
T = TypeVar("T")
Q_GROUPS = 2  # query tiles in flight (software pipelining across Q groups)


def attention_program(tl: Timeline, seq_q: int, seq_kv: int, d: int, heads: int, heads_kv: int,
                      causal: bool, exp_engine: str, evict_engine: str,
                      q: NDArray[Any] | None = None, k: NDArray[Any] | None = None,
                      v: NDArray[Any] | None = None, progress: Progress = None,
                      head_range: Sequence[int] | None = None,
                      q_tiles: Sequence[int] | None = None) -> Program:
    """Issue the flash-attention forward; yields after each query tile; returns the output.

    ``head_range`` / ``q_tiles``: the heads and query-tile starts this core computes
    (default all; a chip run gives each core its share).
    """
    core = tl.core
    P = core.partitions
    # key tiles of two PSUM banks of fp32 scores where the moving size allows it
    # (NeuronCore-v4: up to 4096), else one bank (512 on NeuronCore-v3)
    bank = core.tile_cols
    Bq, Bk = P, min(2 * bank if core.moving_free_max >= 2 * bank else bank, seq_kv)
    dp, dc = min(d, P), math.ceil(d / P)
    scale = 1.0 / np.sqrt(d)
    off = seq_kv - seq_q  # bottom-right causal alignment
    Q = tl.hbm("Q^T", (heads * d, seq_q), "bf16", q)
    K = tl.hbm("K^T", (heads_kv * d, seq_kv), "bf16", k)
    V = tl.hbm("V", (heads_kv * seq_kv, d), "bf16", v)
    Out = tl.hbm("O", (heads * seq_q, d), "bf16")
    n_chunks = math.ceil(seq_kv / Bk)
    per_part = 2 * n_chunks * (dc * Bk + math.ceil(Bk / P) * d)  # K^T + V bytes per partition
    resident = 2 * per_part <= tl.sbuf_free_bytes // 2
    bufs = 2 * n_chunks if resident else 3 * Q_GROUPS
    kpool = tl.sbuf_pool("K^T chunks", (dp, dc, Bk), "bf16", bufs)
    vpool = tl.sbuf_pool("V chunks", (P, math.ceil(Bk / P), d), "bf16", bufs)
    G = Q_GROUPS
    # PSUM banks per tile in flight: its S (two with the look-ahead QK^T), one P^T, one
    # PV (two when the rescale is deferred a step). Q-group pipelining first, then the
    # deferred rescale, then the look-ahead, as far as the core's banks allow.
    def banks(nbytes: int) -> int:
        return math.ceil(nbytes / tl.core.psum_bank_bytes)

    b_s, b_pt, b_pv = banks(Bk * 4), banks(math.ceil(Bk / P) * Bq * 2), banks(d * 4)

    def fits(la: bool, defer: bool) -> bool:
        return G * ((1 + la) * b_s + b_pt + (1 + defer) * b_pv) <= tl.core.psum_banks

    defer = fits(False, True)
    lookahead = fits(True, defer)
    qpool = tl.sbuf_pool("Q^T tile", (dp, dc, Bq), "bf16", 2 * G)
    ppool = tl.sbuf_pool("P tile", (Bq, Bk), "bf16", 2 * G)
    ptpool = tl.sbuf_pool("P^T tile", (P, math.ceil(Bk / P), Bq), "bf16", 2 * G)
    stat = tl.sbuf_pool("row stats", (Bq, 1), "fp32", 24 * G)
    opool = tl.sbuf_pool("O accumulator", (Bq, d), "fp32", 2 * G)
    oout = tl.sbuf_pool("O tile", (Bq, d), "bf16", 2 * G)
    spool = tl.psum_pool("S = QK^T", (Bq, Bk), "fp32", 2 * G if lookahead else G)
    ptps = tl.psum_pool("P^T (transposed)", (P, math.ceil(Bk / P), Bq), "bf16", G)
    pvps = tl.psum_pool("PV", (Bq, d), "fp32", (1 + defer) * G)
    mpool = tl.sbuf_pool("causal masks", (Bq, Bk), "fp32", 4) if causal else None
    mask: dict[Hashable, Tile] = {}
    heads_sel = range(heads) if head_range is None else head_range
    group = heads // heads_kv
    tiles = range(0, seq_q, Bq) if q_tiles is None else q_tiles
    total = len(heads_sel) * len(tiles)
    done = 0
    kv_loaded: dict[int, list[tuple[Tile, Tile]]] = {}

    def load_kv(hk: int, c: int) -> tuple[Tile, Tile]:
        """DMA key chunk ``c`` of KV head ``hk`` (K^T columns and V rows) into new tiles."""
        j0 = c * Bk
        w = min(Bk, seq_kv - j0)
        kt, vt = kpool.tile(), vpool.tile()
        kview = K.view((slice(hk * d, (hk + 1) * d), slice(j0, j0 + w)), (d, w), key=(hk, j0))
        isa.dma(tl, kt if w == Bk else kt.view((slice(None), slice(None), slice(0, w)),
                                              (dp, dc, w), key="part"), kview)
        vrows = V.view((slice(hk * seq_kv + j0, hk * seq_kv + j0 + w), slice(None)), (w, d),
                       key=(hk, j0))
        nv = math.ceil(w / P)
        isa.dma(tl, vt if w == Bk else vt.view((slice(None), slice(0, nv), slice(None)),
                                              (P, nv, d), key="part"), vrows)
        return kt, vt

    def q_tile(h: int, hk: int, i0: int) -> Generator[None, None, None]:
        """One query tile of head ``h``; yields after each of the three stages of a key step."""
        bq = min(Bq, seq_q - i0)
        last = min(seq_kv, i0 + bq + off) if causal else seq_kv
        acc = opool.tile()
        ot = oout.tile()
        orows = Out.view((slice(h * seq_q + i0, h * seq_q + i0 + bq), slice(None)),
                         (bq, d), key=(h, i0))
        o_v = ot if bq == Bq else ot.view((slice(0, bq), slice(None)), (bq, d), key="part")
        if last <= 0:  # no query of this tile sees a key: the output is 0
            isa.tensor_scalar(tl, o_v, acc if bq == Bq else acc.view(
                (slice(0, bq), slice(None)), (bq, d), key="part"), "multiply", 0.0)
            isa.dma(tl, orows, o_v)
            return
        qt = qpool.tile()
        qview = Q.view((slice(h * d, (h + 1) * d), slice(i0, i0 + bq)), (d, bq), key=(h, i0))
        isa.dma(tl, qt if bq == Bq else qt.view((slice(None), slice(None), slice(0, bq)),
                                                (dp, dc, bq), key="part"), qview)
        m_old: Tile | None = None
        l_run: Tile | None = None
        pending: Callable[[], Tile] | None = None
        # streamed chunks in SBUF: the current one and the look-ahead (the pool holds
        # three), so the current chunk's V is still there after the next QK^T is issued
        live: dict[int, tuple[Tile, Tile]] = {}

        def kv_at(j0: int, hk: int = hk,
                  live: dict[int, tuple[Tile, Tile]] = live) -> tuple[Tile, Tile]:
            """(K^T chunk, V chunk) holding key j0: resident, or streamed in once."""
            c = j0 // Bk
            if resident:
                return kv_loaded[hk][c]
            if c not in live:
                for old in [x for x in live if x < c - 1]:
                    del live[old]
                live[c] = load_kv(hk, c)
            return live[c]

        def scores(j0: int, qt: Tile = qt, bq: int = bq,
                   last: int = last) -> tuple[Tile, Tile, int]:
            kt, _ = kv_at(j0)
            w = min(Bk, last - j0)
            t = spool.tile()
            sv = t if (w, bq) == (Bk, Bq) else t.view((slice(0, bq), slice(0, w)), (bq, w),
                                                     key=("s", w, bq))
            for c in range(dc):
                isa.matmul(tl, sv, qt.view((slice(None), c, slice(0, bq)), (dp, bq),
                                           key=("q", c, bq)),
                           kt.view((slice(None), c, slice(0, w)), (dp, w),
                                   key=("k", c, w)), accumulate=c > 0)
            return t, sv, w

        s_next = scores(0)
        for j0 in range(0, last, Bk):
            if j0 and not lookahead:
                s_next = scores(j0)
            _, s, w = s_next
            if causal and j0 + w - 1 > i0 + off:
                moff = i0 + off - j0
                mk = (moff, w, bq)
                if mk not in mask:
                    if len(mask) >= 4:
                        mask.clear()
                    assert mpool is not None
                    mt = mpool.tile()
                    mask[mk] = mt if (w, bq) == (Bk, Bq) else mt.view(
                        (slice(0, bq), slice(0, w)), (bq, w), key=mk)
                    isa.affine_select(tl, mask[mk], moff)
                isa.tensor_tensor(tl, s, s, mask[mk], "add")
            mx = _rows(stat.tile(), bq)
            isa.tensor_reduce(tl, mx, s, "max")
            if m_old is not None:
                m_new = _rows(stat.tile(), bq)
                isa.tensor_tensor(tl, m_new, m_old, mx, "max")
            else:
                m_new = mx
            negb = _rows(stat.tile(), bq)
            isa.tensor_scalar(tl, negb, m_new, "multiply", -scale)
            p_full, lj = ppool.tile(), _rows(stat.tile(), bq)
            p = p_full if (w, bq) == (Bk, Bq) else p_full.view(
                (slice(0, bq), slice(0, w)), (bq, w), key=("p", w, bq))
            if exp_engine == "vector":
                isa.exponential(tl, p, s, m_new, scale=scale, reduce=lj)
            else:
                isa.activation(tl, p, s, "exp", scale=scale, bias=negb, reduce=lj)
            if lookahead and j0 + Bk < last:  # next scores first: TensorE not idle in the chain
                s_next = scores(j0 + Bk)
            yield  # stage 1 (QK^T, row max, exp) issued: the other Q group's turn
            nch = math.ceil(w / P)
            pt = ptps.tile()
            isa.transposes(tl, [
                (pt.view((slice(0, kc), c, slice(0, bq)), (kc, bq), key=("pt", c, kc, bq)),
                 p_full.view((slice(0, bq), slice(c * P, c * P + kc)), (bq, kc),
                             key=("pc", c, kc, bq)))
                for c, kc in ((c, min(P, w - c * P)) for c in range(nch))])
            pts = ptpool.tile()
            isa.copy(tl, pts, pt, engine=evict_engine)
            yield  # stage 2 (P transposed and evacuated) issued
            _, vt = kv_at(j0)
            pv = pvps.tile()
            pvv = pv if bq == Bq else pv.view((slice(0, bq), slice(None)), (bq, d), key="part")
            isa.matmuls(tl, [(pvv, pts.view((slice(0, kc), c, slice(0, bq)), (kc, bq),
                                            key=("pts", c, kc, bq)),
                              vt.view((slice(0, kc), c, slice(None)), (kc, d),
                                      key=("v", c, kc)))
                             for c, kc in ((c, min(P, w - c * P)) for c in range(nch))],
                        chain=True)
            if pending is not None:
                l_run = pending()
            accv = acc if bq == Bq else acc.view((slice(0, bq), slice(None)), (bq, d),
                                                 key="part")
            pending = _rescale(tl, stat, accv, pvv, lj, l_run, m_old, negb, scale, bq)
            if not defer:
                l_run, pending = pending(), None
            m_old = m_new
            yield  # stage 3 (PV, online-softmax rescale) issued
        if pending is not None:
            l_run = pending()
        assert l_run is not None  # the tile sees at least one key
        accv = acc if bq == Bq else acc.view((slice(0, bq), slice(None)), (bq, d), key="part")
        isa.tensor_scalar(tl, o_v, accv, "divide", l_run)
        isa.dma(tl, orows, o_v)

    for h in heads_sel:
        hk = h // group
        if resident and hk not in kv_loaded:
            kv_loaded.clear()
            kv_loaded[hk] = [load_kv(hk, c) for c in range(n_chunks)]
        # software pipelining across query tiles (NKI Library attention CTE: "overlaps
        # operations across Q groups"): Q_GROUPS tiles are in flight, their key steps
        # issued in turn, so one tile's softmax chain runs while another's matmuls do
        waiting = [q_tile(h, hk, i0) for i0 in tiles]
        active: list[Generator[None, None, None]] = []
        while waiting or active:
            while waiting and len(active) < Q_GROUPS:
                active.append(waiting.pop(0))
            for g in list(active):
                try:
                    next(g)
                except StopIteration:
                    active.remove(g)
                    done += 1
                    if progress is not None:
                        progress(done, total)
                    yield
    return Out


def _rows(t: Tile, bq: int) -> Tile:
    """A [P, 1] stats tile restricted to the first ``bq`` rows."""
    if t.shape[0] == bq:
        return t
    return t.view((slice(0, bq), slice(None)), (bq, 1), key=("rows", bq))


def _rescale(tl: Timeline, stat: Pool, acc: Tile, pv: Tile, lj: Tile, l_run: Tile | None,
             m_old: Tile | None, negb: Tile, scale: float, bq: int) -> Callable[[], Tile]:
    """The online-softmax update of one key tile, as a deferred step returning the new sum.

    First tile: acc = PV, l = l_j. Later tiles: alpha = exp((m_old - m_new) / sqrt(d)),
    l = l * alpha + l_j, acc = acc * alpha + PV.
    """
    def step() -> Tile:
        if m_old is None:
            isa.copy(tl, acc, pv)
            return lj
        assert l_run is not None
        alpha, l_new = _rows(stat.tile(), bq), _rows(stat.tile(), bq)
        isa.activation(tl, alpha, m_old, "exp", scale=scale, bias=negb)
        isa.tensor_scalar(tl, l_new, l_run, "multiply", alpha, op2="add", scalar2=lj)
        isa.tensor_scalar(tl, acc, acc, "multiply", alpha)
        isa.tensor_tensor(tl, acc, acc, pv, "add")
        return l_new
    return step


def drain(gen: Generator[None, None, T]) -> T:
    """Run a program generator to its end and return its return value."""
    with np.errstate(invalid="ignore"):  # rows with no visible key: -inf - -inf
        while True:
            try:
                next(gen)
            except StopIteration as stop:
                value: T = stop.value
                return value


def choose_evict_engine(core: NeuronCore, seq_kv: int, head_dim: int, exp_engine: str) -> str:
    """VectorE or ScalarE for the P^T evacuation: whichever finishes a trial of one row of
    ``Q_GROUPS`` query tiles sooner."""
    trial: dict[str, float] = {}
    for eng in ("vector", "scalar"):
        t = Timeline(core, execute=False)
        drain(attention_program(t, Q_GROUPS * core.partitions, min(seq_kv, 4096), head_dim,
                                1, 1, False, exp_engine, eng))
        trial[eng] = t.now
    return min(trial, key=lambda e: trial[e])
