"""The whole chip: a kernel sharded over the NeuronCores, all contending for HBM.

Each core runs its shard on its own engines and DMA queues (its DMA engines at the
per-core DMA rate); every transfer also needs time on the chip's one HBM link
(``hbm_bandwidth``, shared). The cores are simulated together: the core whose schedule
is furthest behind issues next, so transfers claim the HBM link roughly in time order.

* GEMM: split over M (rows of A and C) or N (columns of B and C), whichever is larger;
  the numerics are those of the one-core kernel (sharding changes no accumulation order).
* Attention: split over heads (whole GQA groups when there are enough) or else over
  query tiles, interleaved so causal work balances.

Chip figures: makespan, achieved FLOP/s against the derived chip peak (cores x the
FLOPs calculator's core peak) and AWS's published chip peak, and HBM bandwidth use
(bytes moved / (makespan x hbm_bandwidth)).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from trnkb.engine.attention import attention_flops, explain_attention
from trnkb.engine.attention_decode import MAX_ROWS, decode_program
from trnkb.engine.attention_kernel import attention_program, choose_evict_engine
from trnkb.engine.gemm import gemm_notes
from trnkb.engine.gemm_kernel import gemm_program
from trnkb.engine.gemm_plan import GemmPlan, plan_gemm
from trnkb.engine.gemm_reference import Operand, gemm_numerics, gemm_operands
from trnkb.engine.model import NeuronCore
from trnkb.engine.numerics_formats import error_stats
from trnkb.engine.result import ENGINES, Result
from trnkb.engine.timeline import Link, Timeline


def _run(cores: list[Timeline], programs: list[Iterator[object]]) -> None:
    """Advance the core programs together: always the one whose schedule is furthest behind."""
    live = list(range(len(programs)))
    while live:
        i = min(live, key=lambda c: cores[c].now)
        try:
            next(programs[i])
        except StopIteration:
            live.remove(i)


def _merge(core: NeuronCore, tls: list[Timeline], kernel: str, dtype: str, flops: float,
           hbm: Link, params: dict[str, Any]) -> Result:
    recs = [t.records() for t in tls]
    merged: dict[str, Any] = {k: (sum((r[k] for r in recs), []) if k == "op"
                  else np.concatenate([r[k] for r in recs])) for k in recs[0]}
    busy = {e: sum(t._busy[e] for t in tls) for e in ENGINES}
    by = {k: sum(t.bytes[k] for t in tls) for k in tls[0].bytes}
    n = len(tls)
    res = Result.from_records(kernel=kernel, core=core, dtype=dtype, flops=flops, busy=busy,
                              bytes=by, records=merged, cores=n, params=params)
    secs = res.seconds.to("s").magnitude
    published = core.published_peak(dtype)
    hbm_rate = hbm.rate
    res.chip_figures = {
        "cores": n,
        "makespan_s": secs,
        "achieved_flops_per_s": res.achieved.to("FLOPS").magnitude,
        "derived_chip_peak_flops_per_s": core.peak_flops(dtype, n).to("FLOPS").magnitude,
        "published_chip_peak_flops_per_s": (published.to("FLOPS").magnitude
                                            if published is not None else None),
        "utilization_of_derived_peak": res.utilization,
        "utilization_of_published_peak": (res.achieved / published).to("").magnitude
        if published is not None else None,
        "hbm_bytes": by["hbm"],
        "hbm_bandwidth_B_per_s": hbm_rate,
        "hbm_utilization": by["hbm"] / (secs * hbm_rate) if secs else 0.0,
    }
    return res


def _chip_link(core: NeuronCore, lnc: int | None = None) -> Link:
    """The chip's HBM link, or with ``lnc`` the share one logical core's bank gets."""
    if core.hbm_bandwidth is None:
        raise ValueError(f"{core.chip} has no hbm_bandwidth in specs/chips.yaml; a chip run "
                         f"needs it")
    rate = core.hbm_bandwidth if lnc is None else core.lnc_hbm_share(lnc)
    assert rate is not None
    return Link(rate.to("B/s").magnitude)


def chip_gemm(core: NeuronCore, m: int, k: int, n: int, dtype: str = "bf16",
              cores: int | None = None,
              execute: bool = False, a: Operand = None, b: Operand = None, seed: int = 0,
              weight_dtype: str | None = None, quantize_activations: bool | None = None,
              max_groups: int | None = None, lnc: int | None = None) -> Result:
    """C = A B sharded over ``cores`` NeuronCores of one chip (default: all of them).

    ``lnc``: the cores form one logical NeuronCore of ``lnc`` physical cores (``cores`` is
    then ``lnc``) and share the HBM bandwidth of its bank (:meth:`NeuronCore.lnc_hbm_share`)
    instead of the whole chip's.
    """
    cores = (lnc if lnc is not None else core.cores_per_chip) if cores is None else cores
    if not 1 <= cores <= core.cores_per_chip:
        raise ValueError(f"cores={cores}: {core.chip} has {core.cores_per_chip} NeuronCores")
    split = "m" if m >= n else "n"
    size = m if split == "m" else n
    step = math.ceil(size / cores)
    hbm = _chip_link(core, lnc)
    tls: list[Timeline] = []
    progs: list[Iterator[object]] = []
    plans: list[GemmPlan] = []
    budget = max_groups if max_groups is not None else None
    for c in range(cores):
        lo, hi = c * step, min(size, (c + 1) * step)
        if lo >= hi:
            continue
        mm, nn = (hi - lo, n) if split == "m" else (m, hi - lo)
        plan = plan_gemm(core, mm, k, nn, dtype, weight_dtype, quantize_activations,
                         max_groups=budget, tune=False)
        tl = Timeline(core, execute=False, hbm=hbm, core_id=c)
        tls.append(tl)
        plans.append(plan)
        progs.append(gemm_program(tl, plan))
    ops = gemm_operands(m, k, n, dtype, weight_dtype, a, b, seed) if execute else None
    _run(tls, progs)
    res = _merge(core, tls, "gemm", dtype, 2.0 * m * n * k, hbm,
                 {"m": m, "k": k, "n": n, "cores": cores, "split": split,
                  "weight_dtype": weight_dtype})
    res.notes.append(f"sharded over {len(tls)} cores along {split} ({step} per core); "
                     + gemm_notes(core, plans[0], dtype)[0])
    res.notes += gemm_notes(core, plans[0], dtype)[1:]
    if ops is not None:
        out = gemm_numerics(ops, plans[0].k_step)
        res.output = out
        res.error = error_stats(ops.reference(), out)
    return res


def chip_attention(core: NeuronCore, seq_q: int, seq_kv: int, head_dim: int, heads: int = 1,
                   causal: bool = False, cores: int | None = None, heads_kv: int | None = None,
                   exp_engine: str | None = None, lnc: int | None = None) -> Result:
    """Flash-attention forward sharded over ``cores`` NeuronCores (cost only).

    Split over heads when there are at least as many heads as cores, else over query
    tiles (round-robin, so a causal mask's work balances); a GQA decode is folded (see
    :func:`_fold_split`). ``lnc``: the cores are one logical core sharing its HBM bank.
    """
    cores = core.cores_per_chip if cores is None else cores
    if not 1 <= cores <= core.cores_per_chip:
        raise ValueError(f"cores={cores}: {core.chip} has {core.cores_per_chip} NeuronCores")
    heads_kv = heads if heads_kv is None else heads_kv
    if heads_kv < 1 or heads % heads_kv:
        raise ValueError(f"heads_kv={heads_kv} must divide heads={heads} (GQA/MQA)")
    if exp_engine is None:
        exp_engine = "vector" if core.vector_exp_speedup else "scalar"
    evict = choose_evict_engine(core, seq_kv, head_dim, exp_engine)
    hbm = _chip_link(core, lnc)
    tls: list[Timeline] = []
    progs: list[Iterator[object]] = []
    group = heads // heads_kv
    P = core.partitions
    # GQA/MQA with few queries: a group's query heads share one pass over their KV head
    # (stacked in one query tile), exactly as the one-core kernel folds them
    fold = group > 1 and group * seq_q <= P and (not causal or seq_q == 1)
    if fold:
        split = _fold_split(heads_kv, seq_kv, cores)
        decode = group * seq_q <= MAX_ROWS
        for c, (hs, lo, hi) in enumerate(split):
            tl = Timeline(core, execute=False, hbm=hbm, core_id=c)
            tls.append(tl)
            if decode:  # keys on partitions (attention_decode)
                progs.append(decode_program(tl, group * seq_q, hi - lo, head_dim, heads_kv,
                                            head_range=hs, exp_engine=exp_engine))
                continue
            progs.append(attention_program(tl, group * seq_q, hi - lo, head_dim, heads_kv,
                                           heads_kv, False, exp_engine, evict, head_range=hs))
        how = ("KV heads" if all(hi - lo == seq_kv for _, lo, hi in split)
               else "KV heads and key ranges (partial softmax per core, merged)")
    else:
        by_heads = heads >= cores
        how = "heads" if by_heads else "query tiles"
        q_tiles = list(range(0, seq_q, P))
        for c in range(cores):
            if by_heads:
                hs = range(c * heads // cores, (c + 1) * heads // cores)
                qs = None
            else:
                hs, qs = range(heads), q_tiles[c::cores]
            if not len(hs) or (qs is not None and not qs):
                continue
            tl = Timeline(core, execute=False, hbm=hbm, core_id=c)
            tls.append(tl)
            progs.append(attention_program(tl, seq_q, seq_kv, head_dim, heads, heads_kv,
                                           causal, exp_engine, evict, head_range=hs,
                                           q_tiles=qs))
    _run(tls, progs)
    res = _merge(core, tls, "attention", "bf16",
                 attention_flops(seq_q, seq_kv, head_dim, heads, causal), hbm,
                 {"seq_q": seq_q, "seq_kv": seq_kv, "head_dim": head_dim, "heads": heads,
                  "heads_kv": heads_kv, "causal": causal, "cores": cores,
                  "split": how, "gqa_folded": fold, "exp_engine": exp_engine,
                  "evict_engine": evict})
    res.notes.append(explain_attention(res, core))
    return res


def _fold_split(heads_kv: int, seq_kv: int, cores: int) -> list[tuple[range, int, int]]:
    """Per core: (KV heads, first key, end key) of a folded GQA decode.

    Whole KV heads when there are at least as many as cores; otherwise each KV head's keys
    are cut into ``cores // heads_kv`` ranges (flash-decoding: each core keeps a partial
    max, sum and output; merging them is a few vector operations on [group, d], not
    modelled), so every core reads a disjoint part of K and V.
    """
    if heads_kv >= cores:
        return [(range(c * heads_kv // cores, (c + 1) * heads_kv // cores), 0, seq_kv)
                for c in range(cores) if (c + 1) * heads_kv // cores > c * heads_kv // cores]
    per = cores // heads_kv
    out = []
    for h in range(heads_kv):
        for i in range(per):
            lo, hi = i * seq_kv // per, (i + 1) * seq_kv // per
            if hi > lo:
                out.append((range(h, h + 1), lo, hi))
    return out
