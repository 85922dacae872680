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
Poisson load, where the schedule itself moves with the step times (a slower server queues),
the slow and the fast ends are simulated again (the first combination of inputs on each
side that a range asks for) and every combined end re-times the schedule of its side; the
one-input-at-a-time sensitivities stay re-timed on the central schedule.

Layouts (:class:`~trnkb.workload.stepcost.Layout`): ``tp``, attention data parallelism
``dp`` (with a MoE model, experts over all ``tp x dp`` chips: DEP), ``pp`` (``pp``
micro-batches in flight, each a full pass of ``pp`` stages) and ``replicas``; the load is
split evenly over ``replicas x dp x pp`` identical engines (a closed loop's clients whole:
``concurrency mod engines`` engines run one client more, and with fewer clients than
engines the rest idle; each group is simulated once and the throughputs add up).
Disaggregated prefill/decode (``disagg=(x, y, prefill_layout)``): ``x`` prefill instances,
``y`` decode instances; a request's cache moves from its prefill instance to its decode
instance over the fabric (scale-up when both pools fit in one domain, else each prefill chip's NIC).

Throughput is measured, for a steady load, between 10% of the steps and the step that
admits the last request (warm-up and drain excluded); offline over the whole run.
Latencies over the same requests. ``tokens_per_s_per_user`` is ``1 / tpot_p50``.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from trnkb.workload.collfit import stack_of
from trnkb.workload.lengths import Lengths, as_lengths, len_dict
from trnkb.workload.models import WEIGHT_BYTES, Model
from trnkb.workload.neuronx import n_positions_input, neuronx_version
from trnkb.workload.ranges import Input
from trnkb.workload.result import WorkloadResult, check_positive
from trnkb.workload.scheduler import SchedulerConfig, run_scheduler
from trnkb.workload.serving import default_kv_precision, layout
from trnkb.workload.siminputs import sim_inputs
from trnkb.workload.simread import Run, Setup, group_metrics, handoff_times
from trnkb.workload.stepcost import Layout, StepModel, padded_layout, step_fn
from trnkb.workload.system import System

SIM_METRICS = {"tokens_per_s_per_chip": "1/s", "tokens_per_s_per_user": "1/s",
               "tokens_per_s_system": "1/s", "requests_per_s": "1/s",
               "ttft_p50": "s", "ttft_p90": "s", "ttft_p99": "s",
               "tpot_p50": "s", "tpot_p90": "s", "tpot_p99": "s",
               "e2e_p50": "s", "e2e_p90": "s", "e2e_p99": "s",
               "tokens_per_s_per_mw": "1/s/MW", "tokens_per_usd": "1/USD",
               "usd_per_million_tokens": "USD"}
_MAX_REQUESTS = 100_000
# default tensor-parallel width on Trainium: one instance's 16 chips, as the Neuron docs'
# samples shard (Transformers NeuronX tp_degree 32 on trn1.32xlarge; NxD Inference
# tp_degree 64 logical cores on trn2.48xlarge); also docs/workload-validation.md's Trn1 runs
# (latency_data_decoder.csv, TP Degree 32)
_NEURON_TP = 16


def simulate(model: Model, system: System, chips: int, *, input_len: int | Lengths = 2048,
             output_len: int | Lengths = 512, precision: str = "bf16",
             kv_precision: str | None = None, compute_precision: str | None = None,
             tp: int | None = None, dp: int | None = None, pp: int = 1, replicas: int = 1,
             rate: float | None = None, concurrency: int | None = None,
             requests: int | None = None, max_seqs: int | None = None,
             max_tokens: int = 8192, chunked_prefill: bool = True,
             batching: str = "continuous", disagg: tuple[int, int, Layout] | None = None,
             assumptions: dict[str, Input] | None = None, seed: int = 0,
             pricing: str = "tco", ranged: bool = True, stack: str | None = None,
             recv_interval: int = 1, recv_after_prefill: bool = True,
             mixed: bool = True, window: str = "steady",
             arrival_lag: int = 0) -> WorkloadResult:
    """Serve ``model`` on ``replicas`` replicas of ``chips`` chips of ``system`` under a load
    (offline unless ``rate`` requests/s or ``concurrency`` clients; see the module docstring).

    ``input_len``/``output_len``: tokens, fixed or a :class:`Lengths`. ``tp``/``dp``/``pp``:
    the layout of one replica (default: ``pp`` 1, ``tp`` the largest power of two up to 8
    dividing the chips and the heads, 1 for MLA, doubled until the weights fit, ``dp`` the
    rest).
    ``max_seqs`` per attention group (default: what the KV cache holds at the mean lengths,
    at most 1024); ``max_tokens`` per step. ``batching``: ``continuous`` (vLLM, SGLang,
    TensorRT-LLM) or ``static`` (a compiled batch encoded together and decoded to its end
    before the next is admitted, as Transformers NeuronX runs without vLLM; see
    :mod:`~trnkb.workload.scheduler`).
    ``stack``: the serving software where its prefill differs from a flash-attention kernel
    (``"Transformers NeuronX (Neuron 2.18.0)"``: :mod:`~trnkb.workload.neuronx`).
    ``recv_interval``: SGLang's ``--scheduler-recv-interval`` (new requests are taken in
    every that many decode steps; ``recv_after_prefill=False``: prefill steps count too, as
    TensorRT-LLM's attention-DP balance timeout; ``mixed=False``: prefill steps without
    decodes, SGLang's default; ``arrival_lag``: steps a closed loop's next request joins late
    under an overlap scheduler, 2 for SGLang's and TensorRT-LLM's;
    :mod:`~trnkb.workload.scheduler`). ``window``:
    ``steady`` (module docstring) or ``all`` (every request, start to drain, as a benchmark
    client reports).
    ``disagg=(x, y, prefill_layout)``: ``x`` prefill instances of ``prefill_layout`` and
    ``y`` decode instances of the replica layout (``replicas`` is then ignored).

    Metrics (``SIM_METRICS``): tokens/s per chip and per user, TTFT, TPOT and end-to-end
    latency p50/p90/p99 (s), per MW and per dollar, each a range (``ranged=False``: central
    values only, for searches).
    """
    check_positive(chips=chips, pp=pp, replicas=replicas, max_tokens=max_tokens,
                   recv_interval=recv_interval)
    if window not in ("steady", "all"):
        raise ValueError(f"window {window!r} is not one of steady, all")
    if batching not in ("continuous", "static"):
        raise ValueError(f"batching {batching!r} is not one of continuous, static")
    if stack is not None and neuronx_version(stack) is None:
        raise ValueError(f"stack {stack!r} has no prefill rules here: the one stack with rules is "
                         "Transformers NeuronX with its Neuron release, e.g. "
                         "'Transformers NeuronX (Neuron 2.18.0)'; other stacks need no --stack")
    if rate is not None and concurrency is not None:
        raise ValueError("give a rate or a concurrency, not both")
    if rate is not None:
        check_positive(rate=rate)
    if concurrency is not None:
        check_positive(concurrency=concurrency)
    for name, fmt in (("precision", precision), ("kv_precision", kv_precision)):
        if fmt is not None and fmt not in WEIGHT_BYTES:
            raise ValueError(f"{name} {fmt!r} is not one of {', '.join(WEIGHT_BYTES)}")
    ins, outs = as_lengths(input_len), as_lengths(output_len)
    kvp = kv_precision or default_kv_precision(precision)
    cp = compute_precision or system.fallback_precision(precision)
    inputs, cost_keys = sim_inputs(model, system, cp, kvp, pricing, assumptions, stack, tp)
    if neuronx_version(stack) is not None:  # its token buckets (neuronx rule 5)
        inputs = {**n_positions_input(_longest(ins) + _longest(outs)), **inputs}
    mid = {k: i.mid for k, i in inputs.items()}
    lay = _layout(model, system, chips, tp, dp, pp, replicas, WEIGHT_BYTES[precision],
                  WEIGHT_BYTES[kvp], mid, ins.mean + outs.mean, stack)
    setup = _setup(model, system, lay, WEIGHT_BYTES[precision], WEIGHT_BYTES[kvp], mid, ins,
                   outs, max_seqs, max_tokens, chunked_prefill, disagg, precision)
    setup = replace(setup, cfg=replace(setup.cfg, static=batching == "static",
                                       recv_interval=recv_interval,
                                       recv_after_prefill=recv_after_prefill, mixed=mixed,
                                       arrival_lag=arrival_lag),
                    whole_run=window == "all")
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
    sims = _simulate(setup, mid, inp, out, arrivals, concurrency)
    traces = sims[0][1].traces

    # under a Poisson load the schedule itself moves with the step times (queues grow or
    # drain): the first slow and the first fast combination of inputs the range asks for are
    # simulated again, and every combination re-times the schedule of its side (slow when a
    # reference decode step takes longer than at the central inputs)
    timing = [k for k in mid if k not in cost_keys]
    dec0 = traces[-1]
    ref_batch = float(max(dec0.n_dec.mean(), 1.0))
    ref_ctx = ref_batch * (ins.mean + outs.mean / 2)

    def ref_step(v: dict[str, float]) -> float:
        return float(step_fn(setup.sm, v)(ref_batch, ref_ctx, 0.0, 0.0))

    ref_mid = ref_step(mid)
    rerun: dict[bool, tuple[Setup, list[tuple[int, Run]]] | None] = {}

    def run(v: dict[str, float]) -> dict[str, float]:
        if rate is not None and sum(v[k] != mid[k] for k in timing) > 1:
            slow = ref_step(v) > ref_mid
            if slow not in rerun:
                try:
                    s2 = _setup(model, system, lay, WEIGHT_BYTES[precision], WEIGHT_BYTES[kvp],
                                v, ins, outs, max_seqs, max_tokens, chunked_prefill, disagg,
                                precision)
                    s2 = replace(s2, cfg=replace(s2.cfg, static=setup.cfg.static,
                                                 recv_interval=recv_interval,
                                                 recv_after_prefill=recv_after_prefill,
                                                 mixed=mixed, arrival_lag=arrival_lag),
                                 whole_run=setup.whole_run)
                    rerun[slow] = (s2, _simulate(s2, v, inp, out, arrivals, concurrency))
                except ValueError:  # nothing fits at these values: re-time instead
                    rerun[slow] = None
            hit = rerun[slow]
            if hit is not None:
                return group_metrics(hit[0], hit[1], v, inp, arrivals)
        return group_metrics(setup, sims, v, inp, arrivals)

    if not ranged:
        inputs = {k: replace(i, lo=i.mid, hi=i.mid) if i.spread else i
                  for k, i in inputs.items()}

    settings = {"input_len": len_dict(ins), "output_len": len_dict(outs),
                "kv_precision": kvp, "compute_precision": cp, "layout": lay.label,
                "tp": lay.tp, "attention_dp": lay.dp, "pp": lay.pp, "replicas": lay.replicas,
                "chips_total": setup.chips_total,
                "load": ("offline" if rate is None and concurrency is None else
                         f"rate={rate:g}/s" if rate is not None else f"concurrency={concurrency}"),
                "requests": n, "max_seqs": setup.cfg.max_seqs, "max_tokens": max_tokens,
                "chunked_prefill": chunked_prefill, "batching": batching, "seed": seed,
                "recv_interval": recv_interval, "mixed": mixed, "window": window,
                "arrival_lag": arrival_lag,
                "pricing": pricing}
    if stack is not None:
        settings["stack"] = stack
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


def _layout(model: Model, system: System, chips: int, tp: int | None, dp: int | None, pp: int,
            replicas: int, wb: float, kvb: float, mid: dict[str, float],
            seq_tokens: float, stack: str | None = None) -> Layout:
    """The caller's layout, or the default: tensor parallel within 8 chips (the width GPU
    serving stacks run attention at: larger groups pay a collective latency per layer that
    grows with the ranks; an MLA model starts at 1), within 16 on Trainium (the Neuron
    samples shard a model over one instance: ``tp_degree`` 32 NeuronCores on trn1.32xlarge,
    64 logical cores on trn2.48xlarge, 16 chips each; :data:`_NEURON_TP`) and the rest
    attention data parallel, tp doubled until the weights and one sequence's cache fit.
    Under Transformers NeuronX (``stack``) tp need not divide the heads: it pads them to a
    multiple of its NeuronCores (tp x ``neuronx_cores_per_chip``), and the layout carries the
    padded counts (:func:`~trnkb.workload.neuronx.padded_heads`)."""
    pads = neuronx_version(stack) is not None
    cores = int(mid.get("neuronx_cores_per_chip", 1.0)) if pads else 0

    def heads_ok(t: int) -> bool:
        return pads or model.attention_heads % t == 0
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
        # an MLA latent is not split by head (tensor parallelism replicates it): attention
        # data parallel from tp = 1 (DEP), as SGLang and TensorRT-LLM serve DeepSeek
        while (model.attention != "mla" and stage % (t * 2) == 0
               and heads_ok(t * 2)
               and t < (_NEURON_TP if stack_of(system.vendor, system.chip) == "neuron" else 8)):
            t *= 2
        while True:
            cand = padded_layout(model, Layout(t, stage // t, pp, replicas), cores)
            sm = StepModel(model, system, cand, wb, kvb)
            room = sm.kv_capacity_tokens(mid["hbm_capacity"], mid["workspace_fraction"])
            if room >= seq_tokens or stage % (t * 2) or not heads_ok(t * 2):
                return cand
            t *= 2
    t, d = layout(model, stage, tp, stack)
    if dp is not None and d != dp:
        raise ValueError(f"tp={t} x dp={dp} x pp={pp} is not {chips} chips")
    return padded_layout(model, Layout(t, d, pp, replicas), cores)


def _setup(model: Model, system: System, lay: Layout, wb: float, kvb: float,
           mid: dict[str, float], ins: Lengths, outs: Lengths, max_seqs: int | None,
           max_tokens: int, chunked: bool, disagg: tuple[int, int, Layout] | None,
           precision: str) -> Setup:
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
    return Setup(sm, cfg, units, chips_total, pre, notes)


def _longest(lengths: Lengths) -> int:
    """The most tokens a request draws from ``lengths`` (its ``hi``, else the fixed length)."""
    return int(lengths.hi) if lengths.hi else math.ceil(lengths.mean)


def _default_requests(setup: Setup, concurrency: int | None, rate: float | None,
                      mid: dict[str, float], ins: Lengths, outs: Lengths) -> int:
    """Requests to simulate: enough for steady percentiles, at most ~10,000 steps per engine
    (steps ~ requests x output / batch)."""
    if concurrency is None and rate is None:
        batch = float(setup.cfg.max_seqs)
        want = 3 * batch
    elif concurrency is not None:
        batch = float(math.ceil(concurrency / setup.units))
        want = max(6 * batch, 100)
    else:
        assert rate is not None
        tpot0 = float(step_fn(setup.sm, mid)(1.0, ins.mean + outs.mean / 2, 0.0, 0.0))
        e2e0 = outs.mean * tpot0
        batch = min(max(rate / setup.units * e2e0, 1.0), float(setup.cfg.max_seqs))
        want = max(6 * batch, 100)
    cap = 10_000 * batch / max(outs.mean, 1.0)
    n_unit = int(max(min(want, cap, 4000), min(want, 20)))
    return max(min(n_unit, _MAX_REQUESTS // setup.units), 1) * setup.units


def _share(n: int, units: int, offset: int = 0) -> NDArray[np.int64]:
    return np.arange(min(offset, n - 1), n, units, dtype=np.int64)


def _clients(concurrency: int, units: int) -> list[tuple[int, int]]:
    """``(engines, clients per engine)`` for ``concurrency`` clients over ``units`` engines,
    the total conserved: ``concurrency mod units`` engines take one client more (a load
    balancer's least-loaded placement); engines left without a client are idle."""
    q, r = divmod(concurrency, units)
    return [(k, c) for k, c in ((r, q + 1), (units - r, q)) if k > 0 and c > 0]


def _simulate(setup: Setup, mid: dict[str, float], inp: NDArray[np.int64],
              out: NDArray[np.int64], arrivals: NDArray[np.float64] | None,
              concurrency: int | None) -> list[tuple[int, Run]]:
    """``[(engines, run)]``: one group of identical engines, or under a closed loop whose
    clients do not divide evenly, two (:func:`_clients`), each simulated once."""
    n = len(inp)
    if setup.prefill is None:
        fn = step_fn(setup.sm, mid)
        if concurrency is not None:
            groups = []
            for off, (k, c) in enumerate(_clients(concurrency, setup.units)):
                idx = _share(n, setup.units, off)
                groups.append((k, Run([run_scheduler(setup.cfg, inp[idx], out[idx], fn,
                                                     concurrency=c)], idx)))
            return groups
        idx = _share(n, setup.units)
        arr = None if arrivals is None else arrivals[idx]
        return [(setup.units, Run([run_scheduler(setup.cfg, inp[idx], out[idx], fn,
                                                 arrivals=arr)], idx))]
    psm, pcfg, p_units, _ = setup.prefill
    pidx = _share(n, p_units)
    parr = np.zeros(len(pidx)) if arrivals is None else arrivals[pidx]
    ptr = run_scheduler(pcfg, inp[pidx], out[pidx], step_fn(psm, mid), arrivals=parr)
    handoff = handoff_times(setup, ptr, mid, inp, arrivals, ptr.ends(ptr.dt))
    didx = _share(n, setup.units)
    req = didx[np.argsort(handoff[didx], kind="stable")]  # the decode engine's arrival order
    dtr = run_scheduler(setup.cfg, inp[req], out[req], step_fn(setup.sm, mid),
                        arrivals=handoff[req])
    return [(setup.units, Run([ptr, dtr], req))]
