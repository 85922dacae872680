"""Flash-attention forward on a NeuronCore: any sequence lengths, GQA/MQA, causal, long KV.

Per 128-query tile and key tile of up to 512 (1024 on Trainium3): S = QK^T on TensorE
(fp32 PSUM; a head_dim above 128 contracts in passes of 128); the row max on VectorE; P = exp((S - m) / sqrt(d)) with its
row sum on ScalarE (``activation``) or, where the core has it, the VectorE
``exponential`` (Trainium3); P transposed on TensorE and evacuated to SBUF; PV on
TensorE; the running sum and output rescaled by exp(m_old - m_new) (online softmax).

K and V of one KV head stay resident in SBUF when they fit (loaded once, shared by the
query heads of a GQA group); otherwise they stream through SBUF one key chunk at a time
(re-read per query tile), so SBUF never overflows whatever the KV length.

Causal masking is aligned bottom-right (FlashAttention, PyTorch SDPA ``is_causal`` with
a KV cache): query i sees keys j <= i + seq_kv - seq_q. A query with no visible key
(only when seq_q > seq_kv) outputs 0, as FlashAttention does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pint

from trnkb.engine import isa
from trnkb.engine.model import NeuronCore
from trnkb.engine.numerics import error_stats, round_to
from trnkb.engine.result import Result
from trnkb.engine.timeline import Timeline

Progress = Callable[[int, int], None] | None
MAX_HEAD_DIM = 512  # PV output [128, d] in fp32 must fit one PSUM bank (2 KiB per partition)


def _check(seq_q, seq_kv, head_dim, heads, heads_kv):
    for name, v in (("seq_q", seq_q), ("seq_kv", seq_kv), ("heads", heads)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}={v!r} must be an integer >= 1")
    if not isinstance(head_dim, (int, np.integer)) or not 1 <= head_dim <= MAX_HEAD_DIM:
        raise ValueError(f"head_dim={head_dim!r} must be an integer from 1 to {MAX_HEAD_DIM} "
                         f"(one fp32 PSUM bank holds 512 values of a PV output row)")
    if heads_kv < 1 or heads % heads_kv:
        raise ValueError(f"heads_kv={heads_kv} must divide heads={heads} (GQA/MQA)")


def attention_program(tl: Timeline, seq_q, seq_kv, d, heads, heads_kv, causal, exp_engine,
                      evict_engine, q=None, k=None, v=None, progress: Progress = None,
                      head_range=None, q_tiles=None):
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
    bufs = 2 * n_chunks if resident else 3
    kpool = tl.sbuf_pool("K^T chunks", (dp, dc, Bk), "bf16", bufs)
    vpool = tl.sbuf_pool("V chunks", (P, math.ceil(Bk / P), d), "bf16", bufs)
    qpool = tl.sbuf_pool("Q^T tile", (dp, dc, Bq), "bf16", 2)
    ppool = tl.sbuf_pool("P tile", (Bq, Bk), "bf16", 2)
    ptpool = tl.sbuf_pool("P^T tile", (P, math.ceil(Bk / P), Bq), "bf16", 2)
    stat = tl.sbuf_pool("row stats", (Bq, 1), "fp32", 24)
    opool = tl.sbuf_pool("O accumulator", (Bq, d), "fp32", 2)
    oout = tl.sbuf_pool("O tile", (Bq, d), "bf16", 2)
    spool = tl.psum_pool("S = QK^T", (Bq, Bk), "fp32", 2)
    ptps = tl.psum_pool("P^T (transposed)", (P, math.ceil(Bk / P), Bq), "bf16", 2)
    pvps = tl.psum_pool("PV", (Bq, d), "fp32", 2)
    mpool = tl.sbuf_pool("causal masks", (Bq, Bk), "fp32", 4) if causal else None
    mask: dict = {}
    heads_sel = range(heads) if head_range is None else head_range
    group = heads // heads_kv
    tiles = range(0, seq_q, Bq) if q_tiles is None else q_tiles
    total = len(heads_sel) * len(tiles)
    done = 0
    kv_loaded: dict = {}

    def load_kv(hk, c):
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

    for h in heads_sel:
        hk = h // group
        if resident and hk not in kv_loaded:
            kv_loaded.clear()
            kv_loaded[hk] = [load_kv(hk, c) for c in range(n_chunks)]
        for i0 in tiles:
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
                done += 1
                yield
                continue
            qt = qpool.tile()
            qview = Q.view((slice(h * d, (h + 1) * d), slice(i0, i0 + bq)), (d, bq), key=(h, i0))
            isa.dma(tl, qt if bq == Bq else qt.view((slice(None), slice(None), slice(0, bq)),
                                                    (dp, dc, bq), key="part"), qview)
            m_old = l_run = pending = None
            cur = None

            def kv_at(j0, hk=hk):
                """(K^T chunk, V chunk) holding key j0: resident, or streamed in now."""
                nonlocal cur
                c = j0 // Bk
                if resident:
                    return kv_loaded[hk][c]
                if cur is None or cur[0] != c:
                    cur = (c, *load_kv(hk, c))
                return cur[1], cur[2]

            def scores(j0, qt=qt, bq=bq, last=last):
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
                s_full, s, w = s_next
                if causal and j0 + w - 1 > i0 + off:
                    moff = i0 + off - j0
                    mk = (moff, w, bq)
                    if mk not in mask:
                        if len(mask) >= 4:
                            mask.clear()
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
                if j0 + Bk < last:  # next scores first, so TensorE is not idle in the chain
                    s_next = scores(j0 + Bk)
                nch = math.ceil(w / P)
                pt = ptps.tile()
                isa.transposes(tl, [
                    (pt.view((slice(0, kc), c, slice(0, bq)), (kc, bq), key=("pt", c, kc, bq)),
                     p_full.view((slice(0, bq), slice(c * P, c * P + kc)), (bq, kc),
                                 key=("pc", c, kc, bq)))
                    for c, kc in ((c, min(P, w - c * P)) for c in range(nch))])
                pts = ptpool.tile()
                isa.copy(tl, pts, pt, engine=evict_engine)
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
                m_old = m_new
            l_run = pending()
            accv = acc if bq == Bq else acc.view((slice(0, bq), slice(None)), (bq, d), key="part")
            isa.tensor_scalar(tl, o_v, accv, "divide", l_run)
            isa.dma(tl, orows, o_v)
            done += 1
            if progress is not None:
                progress(done, total)
            yield
    return Out


def _rows(t, bq):
    """A [P, 1] stats tile restricted to the first ``bq`` rows."""
    if t.shape[0] == bq:
        return t
    return t.view((slice(0, bq), slice(None)), (bq, 1), key=("rows", bq))


def _rescale(tl, stat, acc, pv, lj, l_run, m_old, negb, scale, bq):
    """The online-softmax update of one key tile, as a deferred step returning the new sum.

    First tile: acc = PV, l = l_j. Later tiles: alpha = exp((m_old - m_new) / sqrt(d)),
    l = l * alpha + l_j, acc = acc * alpha + PV.
    """
    def step():
        if m_old is None:
            isa.copy(tl, acc, pv)
            return lj
        alpha, l_new = _rows(stat.tile(), bq), _rows(stat.tile(), bq)
        isa.activation(tl, alpha, m_old, "exp", scale=scale, bias=negb)
        isa.tensor_scalar(tl, l_new, l_run, "multiply", alpha, op2="add", scalar2=lj)
        isa.tensor_scalar(tl, acc, acc, "multiply", alpha)
        isa.tensor_tensor(tl, acc, acc, pv, "add")
        return l_new
    return step


def attention_flops(seq_q: int, seq_kv: int, head_dim: int, heads: int = 1,
                    causal: bool = False) -> float:
    """Useful FLOPs of attention forward: 4 x d x (query, key) pairs x heads.

    2d for QK^T and 2d for PV per visible pair; causal counts pairs with key <= query +
    seq_kv - seq_q (bottom-right aligned).
    """
    if causal:
        off = seq_kv - seq_q
        i = np.arange(seq_q, dtype=np.int64)
        pairs = int(np.clip(i + off + 1, 0, seq_kv).sum())
    else:
        pairs = seq_q * seq_kv
    return 4.0 * head_dim * pairs * heads


def attention(core: NeuronCore, seq_q: int, seq_kv: int, head_dim: int, heads: int = 1,
              causal: bool = False, dtype: str = "bf16", execute: bool = True,
              q: np.ndarray | None = None, k: np.ndarray | None = None,
              v: np.ndarray | None = None, seed: int = 0, exp_engine: str | None = None,
              heads_kv: int | None = None, progress: Progress = None) -> Result:
    """Flash-attention forward, O = softmax(Q K^T / sqrt(d)) V, on one core.

    Parameters
    ----------
    seq_q, seq_kv : any lengths >= 1 (decode: seq_q = 1 against a KV cache of seq_kv).
    head_dim : 1 to 512 (above 128, QK^T contracts in passes of 128 rows, zero-padded).
    heads, heads_kv : query heads and KV heads (GQA; MQA with heads_kv = 1; default heads).
    causal : bottom-right aligned mask (see the module docstring).
    q : (heads, seq_q, d); k, v : (heads_kv, seq_kv, d); default standard normal, rounded to bf16.
    """
    heads_kv = heads if heads_kv is None else heads_kv
    _check(seq_q, seq_kv, head_dim, heads, heads_kv)
    if dtype != "bf16":
        raise ValueError(f"attention supports dtype='bf16' only, got {dtype!r}")
    if exp_engine is None:
        exp_engine = "vector" if core.vector_exp_speedup else "scalar"
    if exp_engine == "vector" and not core.vector_exp_speedup:
        raise ValueError(f"{core.chip} has no VectorE exponential; use exp_engine='scalar'")
    group = heads // heads_kv
    # GQA/MQA with few queries: the group's query heads share one pass over their KV head
    # (their rows stacked in one query tile), as decode kernels do
    fold = group > 1 and group * seq_q <= core.partitions and (not causal or seq_q == 1)
    rows = group * seq_q if fold else seq_q
    evict = choose_evict_engine(core, seq_kv, head_dim, exp_engine)
    tl = Timeline(core, execute)
    q64 = k64 = v64 = None
    args = (None, None, None)
    if execute:
        rng = np.random.default_rng(seed)
        shape_q, shape_kv = (heads, seq_q, head_dim), (heads_kv, seq_kv, head_dim)
        q64 = rng.standard_normal(shape_q) if q is None else np.asarray(q, np.float64)
        k64 = rng.standard_normal(shape_kv) if k is None else np.asarray(k, np.float64)
        v64 = rng.standard_normal(shape_kv) if v is None else np.asarray(v, np.float64)
        if q64.shape != shape_q or k64.shape != shape_kv or v64.shape != shape_kv:
            raise ValueError(f"q must be {shape_q}, k and v {shape_kv}")
        qb, kb, vb = (round_to(x, "bf16") for x in (q64, k64, v64))
        qf = qb.reshape(heads_kv, rows, head_dim) if fold else qb
        args = (qf.transpose(0, 2, 1).reshape(qf.shape[0] * head_dim, qf.shape[1]),
                kb.transpose(0, 2, 1).reshape(heads_kv * head_dim, seq_kv),
                vb.reshape(heads_kv * seq_kv, head_dim))
    if fold:
        prog = attention_program(tl, rows, seq_kv, head_dim, heads_kv, heads_kv, False,
                                 exp_engine, evict, *args, progress)
    else:
        prog = attention_program(tl, seq_q, seq_kv, head_dim, heads, heads_kv, causal,
                                 exp_engine, evict, *args, progress)
    out_hbm = _drain(prog)
    flops = attention_flops(seq_q, seq_kv, head_dim, heads, causal)
    res = tl.result("attention", dtype, flops,
                    params={"seq_q": seq_q, "seq_kv": seq_kv, "head_dim": head_dim,
                            "heads": heads, "heads_kv": heads_kv, "causal": causal,
                            "exp_engine": exp_engine, "evict_engine": evict,
                            "gqa_folded": fold})
    res.notes.append(explain_attention(res, core))
    if execute:
        out = out_hbm.read().reshape(heads, seq_q, head_dim).copy()
        if causal and seq_q > seq_kv:
            out[:, : seq_q - seq_kv] = 0.0  # no visible key (see the module docstring)
        res.output = out
        res.error = error_stats(reference_attention(q64, k64, v64, causal), out)
    return res


def _drain(gen):
    """Run a program generator to its end and return its return value."""
    with np.errstate(invalid="ignore"):  # rows with no visible key: -inf - -inf
        while True:
            try:
                next(gen)
            except StopIteration as stop:
                return stop.value


def choose_evict_engine(core, seq_kv, head_dim, exp_engine) -> str:
    """VectorE or ScalarE for the P^T evacuation: whichever finishes a one-tile-row trial sooner."""
    trial = {}
    for eng in ("vector", "scalar"):
        t = Timeline(core, execute=False)
        _drain(attention_program(t, core.partitions, min(seq_kv, 4096), head_dim, 1, 1, False,
                                 exp_engine, eng))
        trial[eng] = t.now
    return min(trial, key=trial.get)


def reference_attention(q, k, v, causal=False) -> np.ndarray:
    """float64 softmax(q k^T / sqrt(d)) v for q (heads, seq_q, d) and k, v (heads_kv, seq_kv, d).

    GQA: query head h uses KV head h // (heads / heads_kv). Causal is bottom-right
    aligned; a query with no visible key gives 0.
    """
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    rep = q.shape[0] // k.shape[0]
    k, v = np.repeat(k, rep, axis=0), np.repeat(v, rep, axis=0)
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    sq, sk = s.shape[-2:]
    if causal:
        keep = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
        s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    den = p.sum(axis=-1, keepdims=True)
    return np.divide(p @ v, den, out=np.zeros_like(q @ np.zeros((q.shape[-1], v.shape[-1]))),
                     where=den > 0)


def explain_attention(res: Result, core: NeuronCore) -> str:
    """One sentence: which engine bounds the kernel (critical path) and the modelled rates."""
    busy = {e: res.busy[e].to("us").magnitude for e in ("tensor", "vector", "scalar", "dma")}
    bound = res.bound_by
    crit = res.critical.get(bound, 0.0) * 1e6
    where = res.params["exp_engine"]
    return (f"{core.chip}: bound by {bound} ({crit:.1f} us of the {res.seconds.to('us').magnitude:.1f} us "
            f"critical path; busiest {res.busiest}); exp on {where} at "
            f"{_exp_rate(res, core).magnitude:.0f} G exp/s, VectorE clock "
            f"{core.vector_clock:~P}, busy: TensorE {busy['tensor']:.1f} us, VectorE "
            f"{busy['vector']:.1f} us, ScalarE {busy['scalar']:.1f} us, DMA {busy['dma']:.1f} us")


def _exp_rate(res: Result, core: NeuronCore) -> pint.Quantity:
    """Exponentials per second on the engine the kernel used for exp."""
    rate = core.partitions * core.scalar_clock
    if res.params["exp_engine"] == "vector":
        rate = rate * core.vector_exp_speedup
    return rate.to("GHz")


def compare_attention(old: Result, old_core: NeuronCore, new: Result, new_core: NeuronCore) -> str:
    """Why the same attention kernel runs faster (or slower) on ``new_core``, in one paragraph.

    Names what bounds each run (its critical path) and traces the change to the modelled
    differences between the cores: the VectorE clock and where the exponential runs.
    """
    def busy(res, engine):
        return res.busy[engine].to("us").magnitude

    engines = ("tensor", "vector", "scalar", "dma")
    b_old, b_new = old.bound_by, new.bound_by
    t_old, t_new = old.seconds.to("us").magnitude, new.seconds.to("us").magnitude
    clock = (new_core.vector_clock / old_core.vector_clock).to("").magnitude
    parts = [
        f"{old_core.chip} -> {new_core.chip}: {t_old:,.1f} -> {t_new:,.1f} us "
        f"({t_old / t_new:.2f}x).",
        f"{old_core.chip} is bound by {b_old} ({busy(old, b_old):,.1f} us busy), "
        f"{new_core.chip} by {b_new} ({busy(new, b_new):,.1f} us busy).",
        f"VectorE runs at {clock:.2f}x the clock ({old_core.vector_clock:~P} -> "
        f"{new_core.vector_clock:~P}); the exponential moves from {old.params['exp_engine']} "
        f"at {_exp_rate(old, old_core).magnitude:.0f} G exp/s to {new.params['exp_engine']} at "
        f"{_exp_rate(new, new_core).magnitude:.0f} G exp/s.",
        "Busy time per engine: " + ", ".join(
            f"{e} {busy(old, e):,.1f} -> {busy(new, e):,.1f} us" for e in engines[:3]) + ".",
    ]
    return " ".join(parts)
