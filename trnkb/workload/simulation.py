"""Serving by simulation: requests through a continuous-batching scheduler, each step costed.

:func:`simulate` answers "at this load, what throughput and what latency": it draws the
requests (lengths from a :class:`Lengths`, seeded), runs them through one engine
(:mod:`~trnkb.workload.scheduler`: one attention group of the layout, its share of the load)
with step times from :mod:`~trnkb.workload.stepcost`, and reads TTFT, TPOT and end-to-end
latency percentiles and throughput off the trace. Load is one of: offline (every request
at t=0, as MLPerf Offline), a Poisson ``rate`` (requests/s over the whole deployment, as
MLPerf Server) or a closed loop of ``concurrency`` clients (as serving dashboards sweep).

Ranges: the schedule is simulated once at the central inputs; every other input value
re-times that schedule (vectorised), so a ranged answer costs one simulation. Under a
Poisson load the schedule itself would shift a little with the step times; the ranges do
not include that.

Layouts (:class:`~trnkb.workload.stepcost.Layout`): ``tp``, attention data parallelism
``dp`` (with a MoE model, experts over all ``tp x dp`` chips: DEP), ``pp`` (``pp``
micro-batches in flight, each a full pass of ``pp`` stages) and ``replicas``; the load is
split evenly over ``replicas x dp x pp`` identical engines. Disaggregated prefill/decode
(``disagg=(x, y, prefill_layout)``): ``x`` prefill instances, ``y`` decode instances; a
request's cache moves from its prefill instance to its decode instance over the fabric
(scale-up when both pools fit in one domain, else each prefill chip's NIC).

Throughput is measured, for a steady load, between 10% of the steps and the step that
admits the last request (warm-up and drain excluded); offline over the whole run.
Latencies over the same requests. ``tokens_per_s_per_user`` is ``1 / tpot_p50``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trnkb.workload.collfit import latency_inputs
from trnkb.workload.cost import cost_inputs, facility_watts, usd_per_chip_hour
from trnkb.workload.gemmfit import m_half_input
from trnkb.workload.models import WEIGHT_BYTES, Model
from trnkb.workload.ranges import Input, assumption, user_value
from trnkb.workload.result import WorkloadResult, check_positive
from trnkb.workload.scheduler import SchedulerConfig, Trace, run_scheduler
from trnkb.workload.serving import SERVE_ASSUMPTIONS, default_kv_precision, layout
from trnkb.workload.stepcost import Layout, StepModel, step_fn
from trnkb.workload.system import System
from trnkb.workload.training import TRAIN_ASSUMPTIONS

__all__ = ["SIM_ASSUMPTIONS", "SIM_METRICS", "Lengths", "simulate"]

SIM_ASSUMPTIONS = {
    "gemm_efficiency": assumption("gemm_efficiency", 0.55, 0.75, 0.9, "",
                                  "achieved fraction of peak FLOP/s of a large GEMM inside a "
                                  "serving step (the reference engine's ideal kernel reaches "
                                  "0.99, gemmfit; clocks under power limits, kernel tails and "
                                  "epilogues take the rest)"),
    "attention_efficiency": assumption("attention_efficiency", 0.35, 0.5, 0.75, "",
                                       "fraction of peak FLOP/s of attention kernels; "
                                       "FlashAttention-3 reports up to 75% of H100 BF16 peak "
                                       "in the forward pass (Shah et al. 2024), decode "
                                       "kernels less"),
    "moe_imbalance": assumption("moe_imbalance", 1.0, 1.25, 1.6, "",
                                "tokens on the busiest chip's experts over the mean under "
                                "real routing (1 = uniform; expert-load balancers such as "
                                "DeepSeek's EPLB replicate hot experts to bring it down)"),
    "step_overhead": assumption("step_overhead", 2e-4, 1e-3, 3e-3, "s",
                                "per-step host work not hidden under the device: scheduling, "
                                "sampling, input preparation, graph launch"),
    "layer_overhead": assumption("layer_overhead", 0.0, 2e-6, 1e-5, "s",
                                 "per-layer kernel-launch gaps a captured graph does not hide"),
}

SIM_METRICS = {"tokens_per_s_per_chip": "1/s", "tokens_per_s_per_user": "1/s",
               "tokens_per_s_system": "1/s", "requests_per_s": "1/s",
               "ttft_p50": "s", "ttft_p90": "s", "ttft_p99": "s",
               "tpot_p50": "s", "tpot_p90": "s", "tpot_p99": "s",
               "e2e_p50": "s", "e2e_p90": "s", "e2e_p99": "s",
               "tokens_per_s_per_mw": "1/s/MW", "tokens_per_usd": "1/USD",
               "usd_per_million_tokens": "USD"}
_COMM = {k: TRAIN_ASSUMPTIONS[k] for k in ("collective_efficiency", "scaleout_latency")}
_MAX_REQUESTS = 100_000


@dataclass(frozen=True)
class Lengths:
    """Token-length distribution: ``mean`` with optional ``std`` (normal, clipped to
    ``[lo, hi]``, rounded; std 0 is a fixed length)."""

    mean: float
    std: float = 0.0
    lo: int = 1
    hi: int | None = None

    def sample(self, n: int, rng: np.random.Generator) -> NDArray[np.int64]:
        if self.std <= 0:
            x = np.full(n, self.mean)
        else:
            x = rng.normal(self.mean, self.std, n)
        hi = self.hi if self.hi is not None else math.inf
        out: NDArray[np.int64] = np.clip(np.rint(x), self.lo, hi).astype(np.int64)
        return out


@dataclass
class _Setup:
    sm: StepModel
    cfg: SchedulerConfig
    units: int
    chips_total: int
    prefill: tuple[StepModel, SchedulerConfig, int, int] | None = None
    notes: list[str] = field(default_factory=list)


def _lengths(x: int | Lengths) -> Lengths:
    return x if isinstance(x, Lengths) else Lengths(float(x))


def simulate(model: Model, system: System, chips: int, *, input_len: int | Lengths = 2048,
             output_len: int | Lengths = 512, precision: str = "bf16",
             kv_precision: str | None = None, compute_precision: str | None = None,
             tp: int | None = None, dp: int | None = None, pp: int = 1, replicas: int = 1,
             rate: float | None = None, concurrency: int | None = None,
             requests: int | None = None, max_seqs: int | None = None,
             max_tokens: int = 8192, chunked_prefill: bool = True,
             disagg: tuple[int, int, Layout] | None = None,
             assumptions: dict[str, Input] | None = None, seed: int = 0,
             pricing: str = "tco") -> WorkloadResult:
    """Serve ``model`` on ``replicas`` replicas of ``chips`` chips of ``system`` under a load
    (offline unless ``rate`` requests/s or ``concurrency`` clients; see the module docstring).

    ``input_len``/``output_len``: tokens, fixed or a :class:`Lengths`. ``tp``/``dp``/``pp``:
    the layout of one replica (default: ``pp`` 1, ``tp`` the largest power of two up to 8
    dividing the chips and the heads, doubled until the weights fit, ``dp`` the rest).
    ``max_seqs`` per attention group (default: what the KV cache holds at the mean lengths,
    at most 1024); ``max_tokens`` per step.
    ``disagg=(x, y, prefill_layout)``: ``x`` prefill instances of ``prefill_layout`` and
    ``y`` decode instances of the replica layout (``replicas`` is then ignored).

    Metrics (``SIM_METRICS``): tokens/s per chip and per user, TTFT, TPOT and end-to-end
    latency p50/p90/p99 (s), per MW and per dollar, each a range.
    """
    check_positive(chips=chips, pp=pp, replicas=replicas, max_tokens=max_tokens)
    if rate is not None and concurrency is not None:
        raise ValueError("give a rate or a concurrency, not both")
    if rate is not None:
        check_positive(rate=rate)
    if concurrency is not None:
        check_positive(concurrency=concurrency)
    for name, fmt in (("precision", precision), ("kv_precision", kv_precision)):
        if fmt is not None and fmt not in WEIGHT_BYTES:
            raise ValueError(f"{name} {fmt!r} is not one of {', '.join(WEIGHT_BYTES)}")
    ins, outs = _lengths(input_len), _lengths(output_len)
    kvp = kv_precision or default_kv_precision(precision)
    cp = compute_precision or system.fallback_precision(precision)
    inputs = {**system.inputs(cp), **SERVE_ASSUMPTIONS, **_COMM, **SIM_ASSUMPTIONS,
              "gemm_m_half": m_half_input(system.chip),
              **latency_inputs(system.vendor, system.chip), **cost_inputs(system, pricing),
              **(assumptions or {})}
    for k in ("compute_efficiency", "prefill_mfu"):
        inputs.pop(k, None)  # the formula's scalars; the simulator costs shapes
    mid = {k: i.mid for k, i in inputs.items()}
    lay = _layout(model, system, chips, tp, dp, pp, replicas, WEIGHT_BYTES[precision],
                  WEIGHT_BYTES[kvp], mid, ins.mean + outs.mean)
    setup = _setup(model, system, lay, WEIGHT_BYTES[precision], WEIGHT_BYTES[kvp], mid, ins,
                   outs, max_seqs, max_tokens, chunked_prefill, disagg, precision)
    n = requests or _default_requests(setup, concurrency, rate, mid, ins, outs)
    if not 1 <= n <= _MAX_REQUESTS:
        raise ValueError(f"requests must be 1 to {_MAX_REQUESTS}, not {n}")
    rng = np.random.default_rng(seed)
    inp, out = ins.sample(n, rng), outs.sample(n, rng)
    arrivals = None
    if rate is not None:
        arrivals = np.cumsum(rng.exponential(1.0 / rate, n))
        arrivals -= arrivals[0]
    if disagg is not None and concurrency is not None:
        raise ValueError("a disaggregated layout takes an offline load or a --rate")
    traces = _simulate(setup, mid, inp, out, arrivals, concurrency)

    def run(v: dict[str, float]) -> dict[str, float]:
        return _metrics(setup, traces, v, inp, out, arrivals)

    settings = {"input_len": _len_dict(ins), "output_len": _len_dict(outs),
                "kv_precision": kvp, "compute_precision": cp, "layout": lay.label,
                "tp": lay.tp, "attention_dp": lay.dp, "pp": lay.pp, "replicas": lay.replicas,
                "chips_total": setup.chips_total,
                "load": ("offline" if rate is None and concurrency is None else
                         f"rate={rate:g}/s" if rate is not None else f"concurrency={concurrency}"),
                "requests": n, "max_seqs": setup.cfg.max_seqs, "max_tokens": max_tokens,
                "chunked_prefill": chunked_prefill, "seed": seed, "pricing": pricing}
    if disagg is not None:
        settings["disagg"] = f"{disagg[0]}P{disagg[1]}D prefill {disagg[2].label}"
    res = WorkloadResult.build("serve-sim", model, system, chips, precision, inputs, run,
                               SIM_METRICS, settings=settings)
    dec = traces[-1]
    res.breakdown["preemptions"] = float(dec.preemptions)
    res.breakdown["steps"] = float(dec.steps)
    res.breakdown["mean_decode_batch"] = float(dec.n_dec.mean()) if dec.steps else 0.0
    res.breakdown["kv_capacity_tokens"] = setup.cfg.kv_capacity
    _, parts = step_fn(setup.sm, mid)(dec.n_dec, dec.ctx_dec, dec.n_pre, dec.attn_pre, True)
    total = float(dec.dt.sum()) or 1.0
    for k, x in parts.items():  # share of the engine's busy time (comm: before overlap)
        res.breakdown[f"share_{k}"] = float(np.sum(np.broadcast_to(x, dec.dt.shape))) / total
    res.notes += setup.notes
    if cp != precision and compute_precision is None:
        res.notes.append(f"{system.chip} has no {precision} peak in the knowledge base; compute "
                         f"at {cp}")
    if dec.preemptions:
        res.notes.append(f"{dec.preemptions} preemptions: the KV cache was full")
    return res


def _len_dict(x: Lengths) -> dict[str, Any]:
    return {"mean": x.mean, "std": x.std, "min": x.lo, "max": x.hi}


def _layout(model: Model, system: System, chips: int, tp: int | None, dp: int | None, pp: int,
            replicas: int, wb: float, kvb: float, mid: dict[str, float],
            seq_tokens: float) -> Layout:
    """The caller's layout, or the default: tensor parallel within 8 chips (the width serving
    stacks run attention at: larger groups pay a collective latency per layer that grows with
    the ranks) and the rest attention data parallel, tp doubled until the weights and one
    sequence's cache fit."""
    if chips % pp:
        raise ValueError(f"pp={pp} must divide the {chips} chips")
    if model.layers % pp:
        raise ValueError(f"pp={pp} must divide the {model.layers} layers")
    stage = chips // pp
    if dp is not None:
        if stage % dp:
            raise ValueError(f"dp={dp} must divide the {stage} chips of a stage")
        tp = tp or stage // dp
    if tp is None:
        t = 1
        while stage % (t * 2) == 0 and model.attention_heads % (t * 2) == 0 and t < 8:
            t *= 2
        while True:
            cand = Layout(t, stage // t, pp, replicas)
            sm = StepModel(model, system, cand, wb, kvb)
            room = sm.kv_capacity_tokens(mid["hbm_capacity"], mid["workspace_fraction"])
            if room >= seq_tokens or stage % (t * 2) or model.attention_heads % (t * 2):
                return cand
            t *= 2
    t, d = layout(model, stage, tp)
    if dp is not None and d != dp:
        raise ValueError(f"tp={t} x dp={dp} x pp={pp} is not {chips} chips")
    return Layout(t, d, pp, replicas)


def _setup(model: Model, system: System, lay: Layout, wb: float, kvb: float,
           mid: dict[str, float], ins: Lengths, outs: Lengths, max_seqs: int | None,
           max_tokens: int, chunked: bool, disagg: tuple[int, int, Layout] | None,
           precision: str) -> _Setup:
    sm = StepModel(model, system, lay, wb, kvb)
    notes: list[str] = []
    cap = sm.kv_capacity_tokens(mid["hbm_capacity"], mid["workspace_fraction"])
    need = sm.weights_per_chip() / (1 - mid["workspace_fraction"])
    if cap < ins.mean + outs.mean:
        raise ValueError(f"{model.id} in {precision} on {lay.label} needs "
                         f"{need / 1e9:.1f} GB per chip for its weights plus a KV cache of "
                         f"{(ins.mean + outs.mean) * sm.kv_bytes_per_token_chip() / 1e9:.2f} GB "
                         f"per sequence; {system.chip} has {mid['hbm_capacity'] / 1e9:.0f} GB: "
                         f"use more chips or a smaller format")
    fit_seqs = max(int(cap // (ins.mean + outs.mean)), 1)
    seqs = max_seqs or min(fit_seqs, 1024)
    if max_seqs and max_seqs > fit_seqs:
        notes.append(f"max_seqs {max_seqs} exceeds the {fit_seqs} sequences of mean length the "
                     f"KV cache holds: expect preemptions")
    role = "mixed" if disagg is None else "decode"
    cfg = SchedulerConfig(seqs, max_tokens, cap, chunked, role)
    units = lay.replicas * lay.dp * lay.pp
    chips_total = lay.chips * lay.replicas
    pre = None
    if disagg is not None:
        x, y, play = disagg
        check_positive(prefill_instances=x, decode_instances=y)
        psm = StepModel(model, system, play, wb, kvb)
        pcap = psm.kv_capacity_tokens(mid["hbm_capacity"], mid["workspace_fraction"])
        if pcap < ins.mean:
            raise ValueError(f"the prefill layout {play.label} holds no prompt of "
                             f"{ins.mean:g} tokens next to the weights")
        pcfg = SchedulerConfig(1024, max_tokens, pcap, True, "prefill")
        units = y * lay.dp * lay.pp
        pre = (psm, pcfg, x * play.dp * play.pp, x * play.chips)
        chips_total = y * lay.chips + x * play.chips
    return _Setup(sm, cfg, units, chips_total, pre, notes)


def _default_requests(setup: _Setup, concurrency: int | None, rate: float | None,
                      mid: dict[str, float], ins: Lengths, outs: Lengths) -> int:
    """Requests to simulate: enough for steady percentiles, at most ~10,000 steps per engine
    (steps ~ requests x output / batch)."""
    if concurrency is None and rate is None:
        batch = float(setup.cfg.max_seqs)
        want = 3 * batch
    elif concurrency is not None:
        batch = max(concurrency / setup.units, 1.0)
        want = max(6 * batch, 100)
    else:
        assert rate is not None
        tpot0 = float(step_fn(setup.sm, mid)(1.0, ins.mean + outs.mean / 2, 0.0, 0.0))
        e2e0 = outs.mean * tpot0
        batch = min(max(rate / setup.units * e2e0, 1.0), float(setup.cfg.max_seqs))
        want = max(6 * batch, 100)
    cap = 10_000 * batch / max(outs.mean, 1.0)
    n_unit = int(max(min(want, cap, 4000), min(want, 20)))
    return n_unit * setup.units


def _share(n: int, units: int) -> NDArray[np.int64]:
    return np.arange(0, n, units, dtype=np.int64)


def _simulate(setup: _Setup, mid: dict[str, float], inp: NDArray[np.int64],
              out: NDArray[np.int64], arrivals: NDArray[np.float64] | None,
              concurrency: int | None) -> list[Trace]:
    n = len(inp)
    if setup.prefill is None:
        idx = _share(n, setup.units)
        fn = step_fn(setup.sm, mid)
        conc = None if concurrency is None else max(1, round(concurrency / setup.units))
        arr = None if arrivals is None else arrivals[idx]
        return [run_scheduler(setup.cfg, inp[idx], out[idx], fn, arrivals=arr,
                              concurrency=conc)]
    psm, pcfg, p_units, _ = setup.prefill
    pidx = _share(n, p_units)
    parr = np.zeros(len(pidx)) if arrivals is None else arrivals[pidx]
    ptr = run_scheduler(pcfg, inp[pidx], out[pidx], step_fn(psm, mid), arrivals=parr)
    handoff = _handoff(setup, ptr, mid, inp, arrivals, ptr.ends(ptr.dt))
    didx = _share(n, setup.units)
    order = np.argsort(handoff[didx], kind="stable")
    dtr = run_scheduler(setup.cfg, inp[didx][order], out[didx][order], step_fn(setup.sm, mid),
                        arrivals=handoff[didx][order])
    return [ptr, dtr]


def _handoff(setup: _Setup, ptr: Trace, v: dict[str, float], inp: NDArray[np.int64],
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


def _metrics(setup: _Setup, traces: list[Trace], v: dict[str, float], inp: NDArray[np.int64],
             out: NDArray[np.int64], arrivals: NDArray[np.float64] | None) -> dict[str, float]:
    dec = traces[-1]
    dt = step_fn(setup.sm, v)(dec.n_dec, dec.ctx_dec, dec.n_pre, dec.attn_pre)
    if setup.prefill is None:
        ends = dec.ends(dt)
        arr = dec.arrival if not dec.closed else _closed_arrivals(dec, ends)
        first_t = ends[dec.first_step]
    else:
        ptr = traces[0]
        psm = setup.prefill[0]
        pdt = step_fn(psm, v)(ptr.n_dec, ptr.ctx_dec, ptr.n_pre, ptr.attn_pre)
        pends = ptr.ends(pdt)
        handoff = _handoff(setup, ptr, v, inp, arrivals, pends)
        didx = _share(len(inp), setup.units)
        hd = handoff[didx]
        order = np.argsort(dec.arrival, kind="stable")  # the trace's request order
        del order
        ends = dec.ends(dt, _sorted_like(dec, hd))
        n_all = len(inp)
        base = np.zeros(n_all) if arrivals is None else arrivals
        sel = np.argsort(hd, kind="stable")
        arr = base[didx][sel]
        delay = pends[ptr.first_step] - ptr.arrival
        pick = np.minimum(didx[sel] // setup.prefill[2], len(delay) - 1)
        first_t = arr + delay[pick]
    last_t = ends[dec.last_step]
    k = dec.steps
    offline = not dec.closed and not np.any(dec.arrival > 0)
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
    sel_req = (dec.admit_step >= k0) & (dec.admit_step <= k1)
    if not sel_req.any():
        sel_req = np.ones(len(dec.admit_step), bool)
    ttft = (first_t - arr)[sel_req]
    many = (dec.output_len > 1) & sel_req
    tpot = ((last_t - first_t)[many] / (dec.output_len[many] - 1)) if many.any() \
        else np.array([math.nan])
    e2e = (last_t - arr)[sel_req]
    per_unit = tokens / window if window > 0 else math.nan
    system_tps = per_unit * setup.units
    out_d: dict[str, float] = {}
    for name, xs in (("ttft", ttft), ("tpot", tpot), ("e2e", e2e)):
        p50, p90, p99 = _percentiles(xs)
        out_d |= {f"{name}_p50": float(p50), f"{name}_p90": float(p90), f"{name}_p99": float(p99)}
    out_d["tokens_per_s_system"] = system_tps
    out_d["tokens_per_s_per_chip"] = system_tps / setup.chips_total
    out_d["tokens_per_s_per_user"] = 1.0 / out_d["tpot_p50"]
    # requests completed per second in steady state: tokens produced over tokens a request
    # asks for (counting completions in a short window undercounts by the requests in flight)
    out_d["requests_per_s"] = system_tps / float(np.mean(dec.output_len))
    # requests arriving per second in the same window (the realised load, seeded)
    came = float(np.sum((arr >= t0) & (arr <= ends[k1]))) if window > 0 else math.nan
    out_d["offered_requests_per_s"] = (came / window * setup.units if not offline and window > 0
                                       else out_d["requests_per_s"])
    fw = facility_watts(v)
    out_d["tokens_per_s_per_mw"] = out_d["tokens_per_s_per_chip"] / fw * 1e6
    usd = usd_per_chip_hour(v)
    out_d["tokens_per_usd"] = out_d["tokens_per_s_per_chip"] * 3600 / usd
    out_d["usd_per_million_tokens"] = 1e6 / out_d["tokens_per_usd"]
    out_d["mean_decode_batch"] = float(dec.n_dec.mean())
    return out_d


def _percentiles(xs: NDArray[np.float64]) -> tuple[float, float, float]:
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


def _sorted_like(dec: Trace, hd: NDArray[np.float64]) -> NDArray[np.float64]:
    """The decode trace's requests are in handoff order; re-timed handoffs, same order."""
    return np.sort(hd, kind="stable")


def _closed_arrivals(tr: Trace, ends: NDArray[np.float64]) -> NDArray[np.float64]:
    arr = np.zeros(len(tr.predecessor))
    has = tr.predecessor >= 0
    arr[has] = ends[tr.last_step[tr.predecessor[has]]]
    return arr


def user_layout(tp: int, dp: int = 1, pp: int = 1) -> Layout:
    """A :class:`Layout` from the caller's numbers (checked positive)."""
    check_positive(tp=tp, dp=dp, pp=pp)
    return Layout(tp, dp, pp)


_ = user_value  # re-exported name kept for callers of this module's inputs
