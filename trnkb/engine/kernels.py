"""Kernels written against the ISA: tiled GEMM and flash-attention forward.

Both return a :class:`~trnkb.engine.timeline.Result`. With ``execute=True`` they also
compute the numeric output and its error against a float64 NumPy reference of the
original (unrounded) inputs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pint

from trnkb.engine import isa
from trnkb.engine.model import NeuronCore
from trnkb.engine.numerics import error_stats, quantize_mx, round_to
from trnkb.engine.timeline import ITEMSIZE, Result, Timeline

Progress = Callable[[int, int], None] | None
MX_BLOCK = 32


def _divides(name: str, size: int, tile: int) -> None:
    if size <= 0 or size % tile:
        raise ValueError(f"{name}={size} must be a positive multiple of {tile}")


def _gemm_inputs(core, m, k, n, dtype, weight_dtype, a, b, seed):
    """Round/quantize the inputs as they would sit in HBM; return values and notes."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)) if a is None else np.asarray(a, np.float64)
    b = rng.standard_normal((k, n)) if b is None else np.asarray(b, np.float64)
    if a.shape != (m, k) or b.shape != (k, n):
        raise ValueError(f"a must be {(m, k)} and b {(k, n)}; got {a.shape} and {b.shape}")
    scale = 1.0
    if dtype == "bf16":
        aq, bq = round_to(a, "bf16"), round_to(b, "bf16")
    elif dtype == "fp8":  # per-tensor scales, applied when PSUM is evacuated
        sa = np.float32(max(np.max(np.abs(a)), 1e-30) / 448.0)
        sb = np.float32(max(np.max(np.abs(b)), 1e-30) / 448.0)
        aq, bq = round_to(a / sa, "fp8"), round_to(b / sb, "fp8")
        scale = float(np.float32(sa * sb))
    else:  # MX: blocks of 32 along K for both operands
        aq = quantize_mx(a, dtype).dequantize().astype(np.float32)
        bq = quantize_mx(b.T, weight_dtype or dtype).dequantize().T.astype(np.float32)
    return a, b, aq, bq, scale


def gemm(core: NeuronCore, m: int, k: int, n: int, dtype: str = "bf16", execute: bool = True,
         a: np.ndarray | None = None, b: np.ndarray | None = None, seed: int = 0,
         weight_dtype: str | None = None, bufs: int = 3, progress: Progress = None) -> Result:
    """C[m, n] = A[m, k] @ B[k, n] on one NeuronCore, tiled and multi-buffered.

    Parameters
    ----------
    dtype : ``bf16``, ``fp8`` (per-tensor scaled E4M3; double row where the core has it),
        ``mxfp8`` or ``mxfp4`` (OCP MX, blocks of 32 along K; Trainium3 only).
    weight_dtype : ``"mxfp4"`` with ``dtype="mxfp8"`` gives W4A8: B is stored and read
        in 4 bits (half the weight bytes from HBM) and multiplied as MX on TensorE.
    bufs : SBUF buffers per input stream (2 = double buffering; 3 hides the DMA latency).
    a, b : inputs (default: standard normal with ``seed``). The output C is bf16.

    Schedule: C is computed in blocks of up to 4 x 2 tiles of 128 x 512 (8 PSUM banks).
    For each K step (128 x pack rows) one DMA brings A^T[K step, block rows] and one
    B[K step, block columns] into SBUF; each of the block's tiles gets one matmul
    accumulating in its PSUM bank. After the last K step, VectorE and ScalarE take
    turns evacuating PSUM to SBUF (bf16) and DMA writes C out.

    FLOPs = 2 m n k. Peak = 2 x pe_rows x pe_cols x pack(dtype) x tensor_clock.
    """
    mx = dtype in ("mxfp8", "mxfp4")
    if weight_dtype not in (None, dtype):
        if not (dtype == "mxfp8" and weight_dtype == "mxfp4"):
            raise ValueError("weight_dtype='mxfp4' needs dtype='mxfp8' (W4A8); "
                             f"got dtype={dtype!r}, weight_dtype={weight_dtype!r}")
        core.pack(weight_dtype)
    pack = core.pack(dtype)  # raises for MX on Trainium2
    P = core.partitions
    K0, TMt, TNt = P * pack, min(P, m), min(512, core.moving_free_max, n)
    _divides("k", k, K0)
    _divides("m", m, TMt)
    _divides("n", n, TNt)
    mt, nt = m // TMt, n // TNt
    tm, tn = min(4, mt), min(2, nt)
    while mt % tm:
        tm -= 1
    while nt % tn:
        tn -= 1
    Mb, Nb, steps = tm * TMt, tn * TNt, k // K0
    wdt = weight_dtype or dtype
    in_dt = {"bf16": "bf16", "fp8": "fp8"}.get(dtype, dtype)

    tl = Timeline(core, execute)
    a64 = b64 = aq = bq = None
    scale = 1.0
    if execute:
        a64, b64, aq, bq, scale = _gemm_inputs(core, m, k, n, dtype, weight_dtype, a, b, seed)
    A = tl.hbm("A^T", (k, m), in_dt, None if aq is None else aq.T)
    B = tl.hbm("B", (k, n), wdt if mx else in_dt, bq)
    C = tl.hbm("C", (m, n), "bf16")
    a_shape = (P, pack, Mb) if pack > 1 else (P, Mb)
    b_shape = (P, pack, Nb) if pack > 1 else (P, Nb)
    # Keep B's K x Nb slab resident in SBUF across the m blocks when it fits in half of
    # SBUF: B is then read from HBM once and only A is re-read, once per slab.
    b_tile_bytes = K0 * Nb * ITEMSIZE[wdt if mx else in_dt] / P
    sbuf_part = core.sbuf_capacity.to("B").magnitude / P
    resident = steps * b_tile_bytes <= sbuf_part / 2 and m > Mb
    b_bufs = steps if resident else bufs
    a_pool = tl.sbuf_pool("A^T tiles", a_shape, in_dt, bufs)
    b_pool = tl.sbuf_pool("B slab" if resident else "B tiles", b_shape, wdt if mx else in_dt,
                          b_bufs)
    if mx:
        SA = tl.hbm("A scales", (k // MX_BLOCK, m), "e8m0")
        SB = tl.hbm("B scales", (k // MX_BLOCK, n), "e8m0")
        sa_pool = tl.sbuf_pool("A scale tiles", (K0 // MX_BLOCK, Mb), "e8m0", bufs)
        sb_pool = tl.sbuf_pool("B scale tiles", (K0 // MX_BLOCK, Nb), "e8m0", b_bufs)
    out_pool = tl.sbuf_pool("C tiles", (TMt, TNt), "bf16", 2 * tm * tn)
    acc_pool = tl.psum_pool("C accumulators", (TMt, TNt), "fp32", tm * tn)

    def cols(lo, width):
        return (slice(None), slice(None), slice(lo, lo + width)) if pack > 1 else \
            (slice(None), slice(lo, lo + width))

    blocks = [(i, j) for j in range(0, n, Nb) for i in range(0, m, Mb)]
    evict_engines = ("vector", "scalar")
    slab: list = []
    for bi, (m0, n0) in enumerate(blocks):
        accs = [acc_pool.tile() for _ in range(tm * tn)]
        if m0 == 0 or not resident:
            slab = []
        for s in range(steps):
            k0 = s * K0
            at = a_pool.tile()
            isa.dma(tl, at, A.view((slice(k0, k0 + K0), slice(m0, m0 + Mb)), (K0, Mb)))
            r = slice(k0 // MX_BLOCK, (k0 + K0) // MX_BLOCK)
            if len(slab) <= s:
                bt = b_pool.tile()
                isa.dma(tl, bt, B.view((slice(k0, k0 + K0), slice(n0, n0 + Nb)), (K0, Nb)))
                sbt = None
                if mx:
                    sbt = sb_pool.tile()
                    isa.dma(tl, sbt, SB.view((r, slice(n0, n0 + Nb)), (K0 // MX_BLOCK, Nb)))
                slab.append((bt, sbt))
            bt, sbt = slab[s]
            if mx:
                sat = sa_pool.tile()
                isa.dma(tl, sat, SA.view((r, slice(m0, m0 + Mb)), (K0 // MX_BLOCK, Mb)))
            av = at.slot.views.get("st") or at.slot.views.setdefault(
                "st", [at.view(cols(i * TMt, TMt), (*a_shape[:-1], TMt)) for i in range(tm)])
            bv = bt.slot.views.get("mv") or bt.slot.views.setdefault(
                "mv", [bt.view(cols(j * TNt, TNt), (*b_shape[:-1], TNt)) for j in range(tn)])
            run = [(accs[i * tn + j], av[i], bv[j]) for i in range(tm) for j in range(tn)]
            isa.matmuls(tl, run, accumulate=s > 0, dtype=wdt if mx else dtype,
                        scales=(sat, sbt) if mx else None)
        for idx, acc in enumerate(accs):
            i, j = divmod(idx, tn)
            ot = out_pool.tile()
            eng = evict_engines[idx % 2]
            if dtype == "fp8":
                isa.tensor_scalar(tl, ot, acc, "multiply", scale, engine=eng)
            else:
                isa.copy(tl, ot, acc, engine=eng)
            r0, c0 = m0 + i * TMt, n0 + j * TNt
            isa.dma(tl, C.view((slice(r0, r0 + TMt), slice(c0, c0 + TNt)), (TMt, TNt)), ot)
        if progress is not None:
            progress(bi + 1, len(blocks))

    res = tl.result("gemm", dtype, 2.0 * m * n * k,
                    params={"m": m, "k": k, "n": n, "weight_dtype": weight_dtype})
    res.notes.append(f"block {Mb}x{Nb} of C per {tm * tn} PSUM banks, K step {K0}, "
                     f"{bufs} SBUF buffers for A, B slab {'resident' if resident else 'streamed'}; "
                     f"DMA at {core.dma_rate:.0f~P} per core")
    if execute:
        out = C.read().astype(np.float32)
        res.output = out
        res.error = error_stats(a64 @ b64, out)
    return res


# ---- attention ----------------------------------------------------------------------------
def _attention_program(tl: Timeline, seq_q, seq_kv, d, heads, causal, exp_engine, evict_engine,
                       q, k, v, progress: Progress):
    """Issue the flash-attention forward; returns the output HBM tile."""
    core = tl.core
    P = core.partitions
    Bq, Bk = P, min(512, core.moving_free_max, seq_kv)
    scale = 1.0 / np.sqrt(d)
    Q = tl.hbm("Q^T", (heads * d, seq_q), "bf16", q)
    K = tl.hbm("K^T", (heads * d, seq_kv), "bf16", k)
    V = tl.hbm("V", (heads * seq_kv, d), "bf16", v)
    Out = tl.hbm("O", (heads * seq_q, d), "bf16")
    kv_chunks = seq_kv // P
    kpool = tl.sbuf_pool("K^T (one head)", (d, seq_kv), "bf16", 2)
    vpool = tl.sbuf_pool("V (one head)", (P, kv_chunks, d), "bf16", 2)
    qpool = tl.sbuf_pool("Q^T tile", (d, Bq), "bf16", 2)
    ppool = tl.sbuf_pool("P tile", (Bq, Bk), "bf16", 2)
    ptpool = tl.sbuf_pool("P^T tile", (P, Bk // P, Bq), "bf16", 2)
    stat = tl.sbuf_pool("row stats", (Bq, 1), "fp32", 24)
    opool = tl.sbuf_pool("O accumulator", (Bq, d), "fp32", 2)
    oout = tl.sbuf_pool("O tile", (Bq, d), "bf16", 2)
    spool = tl.psum_pool("S = QK^T", (Bq, Bk), "fp32", 2)
    ptps = tl.psum_pool("P^T (transposed)", (P, Bk // P, Bq), "bf16", 2)
    pvps = tl.psum_pool("PV", (Bq, d), "fp32", 2)
    mask = {}
    if causal:
        mpool = tl.sbuf_pool("causal masks", (Bq, Bk), "fp32", max(1, Bk // Bq))
    total = heads * (seq_q // Bq)
    done = 0
    for h in range(heads):
        kt, vt = kpool.tile(), vpool.tile()
        isa.dma(tl, kt, K.view((slice(h * d, (h + 1) * d), slice(None)), (d, seq_kv)))
        vrows = V.view((slice(h * seq_kv, (h + 1) * seq_kv), slice(None)), (seq_kv, d))
        isa.dma(tl, vt, vrows)  # rows land as (P, chunk, d): row = chunk * P + p
        for i0 in range(0, seq_q, Bq):
            qt = qpool.tile()
            isa.dma(tl, qt, Q.view((slice(h * d, (h + 1) * d), slice(i0, i0 + Bq)), (d, Bq)))
            acc = opool.tile()
            m_old = l_run = pending = None
            last = min(seq_kv, i0 + Bq) if causal else seq_kv
            def scores(j0, qt=qt, kt=kt):
                t = spool.tile()
                isa.matmul(tl, t, qt, kt.view((slice(None), slice(j0, j0 + Bk)), (d, Bk)))
                return t

            s_next = scores(0)
            for j0 in range(0, last, Bk):
                s = s_next
                if causal and j0 + Bk > i0 + 1:
                    off = i0 - j0
                    if off not in mask:
                        mask[off] = mpool.tile()
                        isa.affine_select(tl, mask[off], off)
                    isa.tensor_tensor(tl, s, s, mask[off], "add")
                mx = stat.tile()
                isa.tensor_reduce(tl, mx, s, "max")
                if m_old is not None:
                    m_new = stat.tile()
                    isa.tensor_tensor(tl, m_new, m_old, mx, "max")
                else:
                    m_new = mx
                negb = stat.tile()
                isa.tensor_scalar(tl, negb, m_new, "multiply", -scale)
                p, lj = ppool.tile(), stat.tile()
                if exp_engine == "vector":
                    isa.exponential(tl, p, s, m_new, scale=scale, reduce=lj)
                else:
                    isa.activation(tl, p, s, "exp", scale=scale, bias=negb, reduce=lj)
                if j0 + Bk < last:  # next scores first, so TensorE is not idle in the chain
                    s_next = scores(j0 + Bk)
                pt = ptps.tile()
                for c in range(Bk // P):
                    isa.transpose(tl, pt.view((slice(None), c, slice(None)), (P, Bq)),
                                  p.view((slice(None), slice(c * P, (c + 1) * P)), (Bq, P)))
                pts = ptpool.tile()
                isa.copy(tl, pts, pt, engine=evict_engine)
                pv = pvps.tile()
                for c in range(Bk // P):
                    isa.matmul(tl, pv, pts.view((slice(None), c, slice(None)), (P, Bq)),
                               vt.view((slice(None), (j0 // P) + c, slice(None)), (P, d)),
                               accumulate=c > 0)
                # Software pipelining: the rescale of tile j is issued after tile j+1's
                # exp, so VectorE/ScalarE do not wait in order for tile j's PV.
                if pending is not None:
                    l_run = pending()
                pending = _rescale(tl, stat, acc, pv, lj, l_run, m_old, negb, scale)
                m_old = m_new
            l_run = pending()
            ot = oout.tile()
            isa.tensor_scalar(tl, ot, acc, "divide", l_run)
            isa.dma(tl, Out.view((slice(h * seq_q + i0, h * seq_q + i0 + Bq), slice(None)),
                               (Bq, d)), ot)
            done += 1
            if progress is not None:
                progress(done, total)
    return Out


def _rescale(tl, stat, acc, pv, lj, l_run, m_old, negb, scale):
    """The online-softmax update of one key tile, as a deferred step returning the new sum.

    First tile: acc = PV, l = l_j. Later tiles: alpha = exp((m_old - m_new) / sqrt(d)),
    l = l * alpha + l_j, acc = acc * alpha + PV.
    """
    def step():
        if m_old is None:
            isa.copy(tl, acc, pv)
            return lj
        alpha, l_new = stat.tile(), stat.tile()
        isa.activation(tl, alpha, m_old, "exp", scale=scale, bias=negb)
        isa.tensor_scalar(tl, l_new, l_run, "multiply", alpha, op2="add", scalar2=lj)
        isa.tensor_scalar(tl, acc, acc, "multiply", alpha)
        isa.tensor_tensor(tl, acc, acc, pv, "add")
        return l_new
    return step


def attention_flops(seq_q: int, seq_kv: int, head_dim: int, heads: int = 1,
                    causal: bool = False) -> float:
    """Useful FLOPs of attention forward: 4 x d x (query, key) pairs x heads.

    (2d for QK^T and 2d for PV per pair; causal counts pairs with key <= query,
    queries aligned to the end of the keys when seq_q < seq_kv is not modelled.)
    """
    if causal:
        pairs = sum(min(seq_kv, i + 1) for i in range(seq_q))
    else:
        pairs = seq_q * seq_kv
    return 4.0 * head_dim * pairs * heads


def attention(core: NeuronCore, seq_q: int, seq_kv: int, head_dim: int, heads: int = 1,
              causal: bool = False, dtype: str = "bf16", execute: bool = True,
              q: np.ndarray | None = None, k: np.ndarray | None = None,
              v: np.ndarray | None = None, seed: int = 0, exp_engine: str | None = None,
              progress: Progress = None) -> Result:
    """Flash-attention forward, O = softmax(Q K^T / sqrt(d)) V, per head, on one core.

    Per 128-query tile and 512-key tile: S = QK^T on TensorE (fp32 PSUM); the row max
    on VectorE; P = exp((S - m) / sqrt(d)) with its row sum on ScalarE (``activation``)
    or, where the core has it, the VectorE ``exponential`` (Trainium3, default there);
    P transposed on TensorE and evacuated to SBUF; PV on TensorE; the running sum and
    output rescaled by exp(m_old - m_new) (online softmax). The P^T evacuation goes to
    whichever of VectorE/ScalarE finishes a one-tile-row trial run sooner.

    Inputs ``q, k, v`` have shape (heads, seq, head_dim) (default: standard normal);
    they are rounded to bf16. The result's notes name the bounding engine and the
    modelled reason.
    """
    if dtype != "bf16":
        raise ValueError(f"attention supports dtype='bf16' only, got {dtype!r}")
    P = core.partitions
    if head_dim > P:
        raise ValueError(f"head_dim={head_dim} exceeds the {P} partitions of one tile")
    _divides("seq_q", seq_q, P)
    _divides("seq_kv", seq_kv, min(512, seq_kv) if seq_kv % P == 0 else P)
    if exp_engine is None:
        exp_engine = "vector" if core.vector_exp_speedup else "scalar"
    if exp_engine == "vector" and not core.vector_exp_speedup:
        raise ValueError(f"{core.chip} has no VectorE exponential; use exp_engine='scalar'")

    # choose the evacuation engine with a cost-only trial of one query-tile row
    trial = {}
    for eng in ("vector", "scalar"):
        t = Timeline(core, execute=False)
        _attention_program(t, P, seq_kv, head_dim, 1, False, exp_engine, eng, None, None,
                           None, None)
        trial[eng] = max(t._end)
    evict = min(trial, key=trial.get)

    tl = Timeline(core, execute)
    q64 = k64 = v64 = None
    args = (None, None, None)
    if execute:
        rng = np.random.default_rng(seed)
        shape_q, shape_kv = (heads, seq_q, head_dim), (heads, seq_kv, head_dim)
        q64 = rng.standard_normal(shape_q) if q is None else np.asarray(q, np.float64)
        k64 = rng.standard_normal(shape_kv) if k is None else np.asarray(k, np.float64)
        v64 = rng.standard_normal(shape_kv) if v is None else np.asarray(v, np.float64)
        if q64.shape != shape_q or k64.shape != shape_kv or v64.shape != shape_kv:
            raise ValueError(f"q must be {shape_q}, k and v {shape_kv}")
        qb, kb, vb = (round_to(x, "bf16") for x in (q64, k64, v64))
        args = (qb.transpose(0, 2, 1).reshape(heads * head_dim, seq_q),
                kb.transpose(0, 2, 1).reshape(heads * head_dim, seq_kv),
                vb.reshape(heads * seq_kv, head_dim))
    out_hbm = _attention_program(tl, seq_q, seq_kv, head_dim, heads, causal, exp_engine, evict,
                           *args, progress)
    flops = attention_flops(seq_q, seq_kv, head_dim, heads, causal)
    res = tl.result("attention", dtype, flops,
                    params={"seq_q": seq_q, "seq_kv": seq_kv, "head_dim": head_dim,
                            "heads": heads, "causal": causal, "exp_engine": exp_engine,
                            "evict_engine": evict})
    res.notes.append(explain_attention(res, core))
    if execute:
        out = out_hbm.read().reshape(heads, seq_q, head_dim)
        res.output = out
        res.error = error_stats(reference_attention(q64, k64, v64, causal), out)
    return res


def reference_attention(q, k, v, causal=False) -> np.ndarray:
    """float64 softmax(q k^T / sqrt(d)) v for arrays (heads, seq, d)."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    s = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] <= np.arange(sq)[:, None], s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def explain_attention(res: Result, core: NeuronCore) -> str:
    """One sentence: which engine bounds the kernel and the modelled rates behind it."""
    busy = {e: res.busy[e].to("us").magnitude for e in ("tensor", "vector", "scalar", "dma")}
    bound = max(busy, key=busy.get)
    exp_rate = core.partitions * core.scalar_clock
    where = res.params["exp_engine"]
    if where == "vector":
        exp_rate = exp_rate * core.vector_exp_speedup
    return (f"{core.chip}: bound by {bound} ({busy[bound]:.1f} us busy of "
            f"{res.seconds.to('us').magnitude:.1f} us); exp on {where} at "
            f"{exp_rate.to('GHz').magnitude:.0f} G exp/s, VectorE clock "
            f"{core.vector_clock:~P}, TensorE {busy['tensor']:.1f} us, VectorE "
            f"{busy['vector']:.1f} us, ScalarE {busy['scalar']:.1f} us")


def _exp_rate(res: Result, core: NeuronCore) -> pint.Quantity:
    """Exponentials per second on the engine the kernel used for exp."""
    rate = core.partitions * core.scalar_clock
    if res.params["exp_engine"] == "vector":
        rate = rate * core.vector_exp_speedup
    return rate.to("GHz")


def compare_attention(old: Result, old_core: NeuronCore, new: Result, new_core: NeuronCore) -> str:
    """Why the same attention kernel runs faster (or slower) on ``new_core``, in one paragraph.

    Names the bounding engine of each run and traces the change of its busy time to the
    modelled differences between the cores: the VectorE clock and where the exponential
    runs and at what rate (ScalarE ``activation(exp)`` vs Trainium3's VectorE
    ``exponential`` at ``vector_exp_speedup`` times the ScalarE rate).
    """
    def busy(res, engine):
        return res.busy[engine].to("us").magnitude

    engines = ("tensor", "vector", "scalar", "dma")
    b_old = max(engines, key=lambda e: busy(old, e))
    b_new = max(engines, key=lambda e: busy(new, e))
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
    if t_old / t_new > busy(old, b_old) / busy(new, b_new) * 1.05:
        parts.append("The run gains more than its bounding engine: the dependency chain inside "
                     "each tile shortens too.")
    return " ".join(parts)
