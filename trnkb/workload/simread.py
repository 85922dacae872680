"""Reading a simulated schedule: latency percentiles and throughput for any input values.

:mod:`~trnkb.workload.simulation` runs the scheduler once at the central inputs; this
module re-times that schedule for other values of the inputs (each step's time from
:func:`~trnkb.workload.stepcost.step_fn` over the recorded compositions, vectorised) and
reads off, per request, TTFT (first token minus arrival), TPOT ((last - first) / (output -
1)) and end-to-end latency, their p50/p90/p99, and the tokens per second of the steady
window: from 10% of the steps to the step that admits the last request under a steady load,
the whole run offline or when asked (``Setup.whole_run``: what a benchmark client such as
``benchmark_serving`` reports, every request from the start burst to the drain);
:func:`group_metrics` combines engine groups that serve different client counts. A
disaggregated run re-times its prefill trace first: each request's cache reaches its decode
instance at arrival + its prefill delay + the transfer (:func:`handoff_times`), which sets
the decode trace's arrivals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from trnkb.workload.cost import facility_watts, usd_per_chip_hour
from trnkb.workload.scheduler import SchedulerConfig, Trace
from trnkb.workload.stepcost import StepModel, step_fn


@dataclass
class Setup:
    """One simulated deployment: the engine's step model and limits, how many identical
    engines share the load (``units``), all its chips, and a prefill pool (step model, limits,
    engines, chips) when disaggregated."""

    sm: StepModel
    cfg: SchedulerConfig
    units: int
    chips_total: int
    prefill: tuple[StepModel, SchedulerConfig, int, int] | None = None
    notes: list[str] = field(default_factory=list)
    whole_run: bool = False  # read every request and the whole run (a benchmark's window)


@dataclass
class Run:
    """The traces (prefill first when disaggregated; the decoding engine's last) and, per
    request of the last trace, its index among all requests."""

    traces: list[Trace]
    requests: NDArray[np.int64]


def handoff_times(setup: Setup, ptr: Trace, v: dict[str, float], inp: NDArray[np.int64],
             arrivals: NDArray[np.float64] | None,
             pends: NDArray[np.float64]) -> NDArray[np.float64]:
    """Time each request's cache reaches its decode instance: its prefill delay (from the
    simulated prefill instance, request ``i`` taking the delay of the ``i // units``-th one
    there) plus the transfer."""
    assert setup.prefill is not None
    psm, _, p_units, p_chips = setup.prefill
    n = len(inp)
    arr = np.zeros(n) if arrivals is None else arrivals
    delay = pends[ptr.first_step] - ptr.arrival
    pick = np.minimum(np.arange(n) // p_units, len(delay) - 1)
    net = setup.sm.system.network
    chips = psm.layout.chips
    inside = setup.chips_total <= net.domain
    link = net.group(2).injection if inside else net.scaleout
    scale = (v["scaleup_bandwidth"] / setup.sm.system.scaleup_input.mid if inside
             else v["scaleout_bandwidth"] / setup.sm.system.scaleout_input.mid)
    kv = psm.model.kv_bytes(1.0, psm.kv_bytes)
    transfer = inp * kv / (chips * link * scale * v["collective_efficiency"]) \
        + (v["collective_latency"] if inside else v["scaleout_latency"])
    return arr + delay[pick] + transfer


def metrics(setup: Setup, run: Run, v: dict[str, float], inp: NDArray[np.int64],
            arrivals: NDArray[np.float64] | None) -> dict[str, float]:
    """Every metric of :data:`~trnkb.workload.simulation.SIM_METRICS` (and a few more for the
    breakdown) for the input values ``v`` (see the module docstring)."""
    dec = run.traces[-1]
    dt = step_fn(setup.sm, v)(dec.n_dec, dec.ctx_dec, dec.n_pre, dec.attn_pre)
    if setup.prefill is None:
        ends = dec.ends(dt)
        arr = dec.arrival if not dec.closed else _closed_arrivals(dec, ends)
        first_t = ends[dec.first_step]
    else:
        ptr, (psm, _, p_units, _) = run.traces[0], setup.prefill
        pends = ptr.ends(step_fn(psm, v)(ptr.n_dec, ptr.ctx_dec, ptr.n_pre, ptr.attn_pre))
        req = run.requests
        ends = dec.ends(dt, handoff_times(setup, ptr, v, inp, arrivals, pends)[req])
        arr = (np.zeros(len(inp)) if arrivals is None else arrivals)[req]
        delay = pends[ptr.first_step] - ptr.arrival
        first_t = arr + delay[np.minimum(req // p_units, len(delay) - 1)]
    last_t = ends[dec.last_step]
    k = dec.steps
    offline = (not dec.closed and not np.any(dec.arrival > 0)) or setup.whole_run
    if offline:
        k0, k1 = 0, k - 1
    else:
        k0 = int(0.1 * k)
        k1 = max(int(dec.admit_step.max()), k0)
    t0 = ends[k0 - 1] if k0 > 0 else (0.0 if offline else float(ends[0] - dt[0]))
    window = float(ends[k1] - t0)
    if setup.prefill is None:
        tok_step = dec.n_dec + np.bincount(dec.first_step, minlength=k)[:k]
        tokens = float(tok_step[k0:k1 + 1].sum())
    else:  # the first tokens come from the prefill pool, one per request
        mean_out = float(np.mean(dec.output_len))
        tokens = float(dec.n_dec[k0:k1 + 1].sum()) * mean_out / max(mean_out - 1, 1.0)
    sel = (dec.admit_step >= k0) & (dec.admit_step <= k1)
    if not sel.any():
        sel = np.ones(len(dec.admit_step), bool)
    many = (dec.output_len > 1) & sel
    tpot = ((last_t - first_t)[many] / (dec.output_len[many] - 1)) if many.any() \
        else np.array([math.nan])
    out: dict[str, float] = {}
    for name, xs in (("ttft", (first_t - arr)[sel]), ("tpot", tpot),
                     ("e2e", (last_t - arr)[sel])):
        p50, p90, p99 = percentiles(xs)
        out |= {f"{name}_p50": p50, f"{name}_p90": p90, f"{name}_p99": p99}
    system_tps = tokens / window * setup.units if window > 0 else math.nan
    out["tokens_per_s_system"] = system_tps
    out["tokens_per_s_per_chip"] = system_tps / setup.chips_total
    out["tokens_per_s_per_user"] = 1.0 / out["tpot_p50"]
    # requests completed per second in steady state: tokens produced over tokens a request
    # asks for (counting completions in a short window undercounts by the requests in flight)
    out["requests_per_s"] = system_tps / float(np.mean(dec.output_len))
    # requests arriving per second in the same window (the realised load, seeded)
    came = float(np.sum((arr >= t0) & (arr <= ends[k1])))
    out["offered_requests_per_s"] = (came / window * setup.units if not offline and window > 0
                                     else out["requests_per_s"])
    out["tokens_per_s_per_mw"] = out["tokens_per_s_per_chip"] / facility_watts(v) * 1e6
    out["tokens_per_usd"] = out["tokens_per_s_per_chip"] * 3600 / usd_per_chip_hour(v)
    out["usd_per_million_tokens"] = 1e6 / out["tokens_per_usd"]
    out["mean_decode_batch"] = float(dec.n_dec.mean())
    return out


def percentiles(xs: NDArray[np.float64]) -> tuple[float, float, float]:
    """p50, p90, p99 with linear interpolation (numpy's default method), one sort."""
    v = np.sort(xs)
    n = len(v)
    out = []
    for q in (0.5, 0.9, 0.99):
        h = (n - 1) * q
        lo = int(h)
        hi = min(lo + 1, n - 1)
        out.append(float(v[lo] + (h - lo) * (v[hi] - v[lo])))
    return out[0], out[1], out[2]


def _closed_arrivals(tr: Trace, ends: NDArray[np.float64]) -> NDArray[np.float64]:
    arr = np.zeros(len(tr.predecessor))
    has = tr.predecessor >= 0
    arr[has] = ends[tr.last_step[tr.predecessor[has]]]
    return arr


def group_metrics(setup: Setup, sims: list[tuple[int, Run]], v: dict[str, float],
                  inp: NDArray[np.int64], arrivals: NDArray[np.float64] | None
                  ) -> dict[str, float]:
    """The deployment's metrics from its engine groups (``(engines, run)``): throughputs add
    up; latency percentiles and the mean batch are the groups' values weighted by the
    requests each serves (the groups' batches differ by one sequence, so the mixture's
    percentile is close to this mean)."""
    if len(sims) == 1:
        count, run = sims[0]
        return metrics(setup if count == setup.units else replace(setup, units=count), run, v,
                       inp, arrivals)
    parts = [metrics(replace(setup, units=k), run, v, inp, arrivals) for k, run in sims]
    w = np.array([p["requests_per_s"] for p in parts])
    w = w / w.sum() if w.sum() > 0 else np.full(len(parts), 1 / len(parts))
    out = {k: float(sum(p[k] for p in parts)) for k in ADDITIVE}
    for k in parts[0]:
        if k not in out:
            out[k] = float(sum(wi * p[k] for wi, p in zip(w, parts, strict=True)))
    out["tokens_per_s_per_user"] = 1.0 / out["tpot_p50"]
    out["usd_per_million_tokens"] = 1e6 / out["tokens_per_usd"]
    return out


ADDITIVE = ("tokens_per_s_system", "tokens_per_s_per_chip", "requests_per_s",
            "offered_requests_per_s", "tokens_per_s_per_mw", "tokens_per_usd")
