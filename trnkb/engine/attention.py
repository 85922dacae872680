"""Flash-attention forward on a NeuronCore: any sequence lengths, GQA/MQA, causal, long KV.

Per 128-query tile and key tile of up to 512 (1024 on Trainium3): S = QK^T on TensorE
(fp32 PSUM; a head_dim above 128 contracts in passes of 128); the row max on VectorE;
P = exp((S - m) / sqrt(d)) with its row sum on ScalarE (``activation``) or, where the core
has it, the VectorE ``exponential`` (Trainium3); P transposed on TensorE and evacuated to
SBUF; PV on TensorE; the running sum and output rescaled by exp(m_old - m_new) (online softmax).

Schedule (documented mechanisms, :mod:`trnkb.engine.attention_kernel`): the next key
tile's QK^T is issued before the current P is transposed, so exp overlaps it; PSUM
buffers are double-buffered as far as the 8 banks allow; two query tiles are in flight,
their key steps issued in three stages in turn (software pipelining across Q groups).

K and V of one KV head stay resident in SBUF when they fit (loaded once, shared by the
query heads of a GQA group); otherwise they stream through SBUF one key chunk at a time
(re-read per query tile), so SBUF never overflows whatever the KV length.

Causal masking is aligned bottom-right (FlashAttention, PyTorch SDPA ``is_causal`` with
a KV cache): query i sees keys j <= i + seq_kv - seq_q. A query with no visible key
(only when seq_q > seq_kv) outputs 0, as FlashAttention does.

The instruction stream is in :mod:`trnkb.engine.attention_kernel` (its public names are
importable from here too); this module checks the arguments, prepares the inputs, runs
the kernel, and computes the float64 reference and the explanations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from trnkb.engine.attention_kernel import (
    Progress,
    attention_program,
    choose_evict_engine,
    drain,
)
from trnkb.engine.limits import EXP_ENGINES, attention_limits, choice
from trnkb.engine.model import NeuronCore
from trnkb.engine.numerics_formats import error_stats, round_to
from trnkb.engine.result import Result
from trnkb.engine.timeline import Timeline
from trnkb.units.qtypes import Quantity

MAX_HEAD_DIM = 512  # PV output [128, d] in fp32 must fit one PSUM bank (2 KiB per partition)


def _check(seq_q: int, seq_kv: int, head_dim: int, heads: int, heads_kv: int) -> None:
    for name, v in (("seq_q", seq_q), ("seq_kv", seq_kv), ("heads", heads)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}={v!r} must be an integer >= 1")
    if not isinstance(head_dim, (int, np.integer)) or not 1 <= head_dim <= MAX_HEAD_DIM:
        raise ValueError(f"head_dim={head_dim!r} must be an integer from 1 to {MAX_HEAD_DIM} "
                         f"(one fp32 PSUM bank holds 512 values of a PV output row)")
    if heads_kv < 1 or heads % heads_kv:
        raise ValueError(f"heads_kv={heads_kv} must divide heads={heads} (GQA/MQA)")


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
    attention_limits(seq_q, seq_kv, head_dim, heads, execute, seed)  # the CLI's limits
    if exp_engine is not None:
        choice(exp_engine, EXP_ENGINES, "exp_engine")
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
    q64: NDArray[Any] | None = None
    k64: NDArray[Any] | None = None
    v64: NDArray[Any] | None = None
    args: tuple[NDArray[Any] | None, NDArray[Any] | None, NDArray[Any] | None] = (None, None,
                                                                                 None)
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
    out_hbm = drain(prog)
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
        assert q64 is not None and k64 is not None and v64 is not None
        res.error = error_stats(reference_attention(q64, k64, v64, causal), out)
    return res


def reference_attention(q: NDArray[Any], k: NDArray[Any], v: NDArray[Any],
                        causal: bool = False) -> NDArray[np.float64]:
    """float64 softmax(q k^T / sqrt(d)) v for q (heads, seq_q, d) and k, v (heads_kv, seq_kv, d).

    GQA: query head h uses KV head h // (heads / heads_kv). Causal is bottom-right
    aligned; a query with no visible key gives 0.
    """
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    heads, sq, d = q.shape
    hk, sk = k.shape[:2]
    # the query heads of a KV head as one axis that broadcasts over it: no repeated K/V
    qg = q.reshape(hk, heads // hk, sq, d)
    s = qg @ k[:, None].transpose(0, 1, 3, 2) / np.sqrt(d)
    if causal:
        keep = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
        s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    den = p.sum(axis=-1, keepdims=True)
    pv = p @ v[:, None]
    out: NDArray[np.float64] = np.divide(pv, den, out=np.zeros_like(pv), where=den > 0).reshape(
        heads, sq, v.shape[-1])
    return out


def explain_attention(res: Result, core: NeuronCore) -> str:
    """One sentence: which engine bounds the kernel (critical path) and the modelled rates."""
    busy = {e: res.busy[e].to("us").magnitude for e in ("tensor", "vector", "scalar", "dma")}
    bound = res.bound_by
    crit = res.critical.get(bound, 0.0) * 1e6
    where = res.params["exp_engine"]
    total = res.seconds.to("us").magnitude
    return (f"{core.chip}: bound by {bound} ({crit:.1f} us of the {total:.1f} us "
            f"critical path; busiest {res.busiest}); exp on {where} at "
            f"{_exp_rate(res, core).magnitude:.0f} G exp/s, VectorE clock "
            f"{core.vector_clock:~P}, busy: TensorE {busy['tensor']:.1f} us, VectorE "
            f"{busy['vector']:.1f} us, ScalarE {busy['scalar']:.1f} us, DMA {busy['dma']:.1f} us")


def _exp_rate(res: Result, core: NeuronCore) -> Quantity:
    """Exponentials per second on the engine the kernel used for exp."""
    rate = core.partitions * core.scalar_clock
    if res.params["exp_engine"] == "vector":
        rate = rate * core.vector_exp_speedup
    q: Quantity = rate.to("GHz")
    return q


def compare_attention(old: Result, old_core: NeuronCore, new: Result, new_core: NeuronCore) -> str:
    """Why the same attention kernel runs faster (or slower) on ``new_core``, in one paragraph.

    Names what bounds each run (its critical path) and traces the change to the modelled
    differences between the cores: the VectorE clock and where the exponential runs.
    """
    def busy(res: Result, engine: str) -> float:
        us: float = res.busy[engine].to("us").magnitude
        return us

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
