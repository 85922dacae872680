"""Training: FLOPs, memory per chip under a plan, step time, time to train a token budget.

Step time (seconds) is composed, per chip, of named parts:

* ``compute``: model FLOPs of the step / (chips x peak x ``mfu``), times 4/3 with full
  recomputation (one more forward); at least the step's HBM traffic / HBM bandwidth. At a
  4-bit precision (fp4, mxfp4) the GEMM FLOPs run at peak x ``mfu`` x ``fp4_gemm_efficiency``
  (per vendor, fitted to FP4 and FP8 GEMM benchmarks of its kernels: NVIDIA 0.68-0.73-0.80,
  CUTLASS on B200; AMD 0.79-1.11-1.31, aiter on MI355X; :mod:`~trnkb.workload.fp4fit`).
  ``mfu`` is the model-FLOPs utilisation of the compute phases (an assumption, default
  0.45, range 0.20-0.65, the low end covering the 20-30% of first PyTorch MoE runs the basis
  names: the Llama 3 paper measured 38-43% end to end on 16K H100, the
  scaling book uses 40%, MaxText reaches 52-65% on TPU v5p, first MoE runs on Trainium3
  20-30%); bubbles and exposed communication come on top, so the achieved MFU the result
  reports is lower.
* what the MFU does not scale (:mod:`~trnkb.workload.stepshape`): the GEMMs' time x their
  rows factor (``gemm_rows_factor``, ``mb x seq / cp`` rows against the MFU's 8,192), kernel
  floors per layer and microbatch (``kernel_floors``), LoRA's adapters (``adapter_kernels``)
  and, for LoRA, the full step's non-GEMM work kept (only the base's weight-gradient GEMMs
  go); on ROCm ``mfu`` x ``mfu_stack_ratio``.
* ``optimizer``: the optimizer step, memory-bound and serial (:mod:`~trnkb.workload.stepextras`):
  its bytes are taken out of the HBM floor above and charged apart.
* ``bubble``: ``(pp - 1) / (n_micro x vpp)`` of the compute (1F1B schedule, interleaved over
  ``vpp`` virtual stages per chip: Narayanan et al. 2021, section 2.2.2, and the Llama 3
  paper, section 3.3.2, give ``(pp - 1) / (vpp x n_micro)``).
* communication, each over :class:`~trnkb.workload.collectives.Network`: data-parallel
  gradient reduction (all-reduce without ZeRO, reduce-scatter with it) and weight all-gathers
  (after the optimizer step; per microbatch forward and backward under ZeRO-3); tensor
  parallel, 4 all-reduces per layer per microbatch (6 with full recomputation) of the
  microbatch activations; expert parallel, 4 all-to-alls per MoE layer per microbatch of
  the routed tokens; context parallel, the ring exchange of KV (3 all-gathers per layer per
  microbatch); pipeline sends (``pp_bytes`` per chip per step: one microbatch's activations,
  ``microbatch x seq / cp x d_model x 2`` bytes / tp with sequence parallelism, forward and
  its gradient backward, per microbatch and per chunk boundary, so ``2 x n_micro x vpp``
  sends: the interleaved schedule multiplies the communication by ``vpp``, Narayanan et al.
  2021 section 2.2.2; each over the scale-out fabric when the stages sit in different
  domains, else over a pair of scale-up neighbours). Each has an *overlap* assumption: the
  fraction hidden under compute (``dp_overlap`` 0.5-1.0, ``tp_overlap`` 0-0.5,
  ``ep_overlap`` 0-0.6, ``cp_overlap`` 0.5-1.0, ``pp_overlap`` 0-0.5); what is hidden cannot
  exceed the compute (the gradient reduction the backward, the weight gathers the forward).

HBM traffic per step: the local weights read three times per microbatch (forward, two
backward matmuls), weights, gradients and optimizer state read and written once, saved
activations written and read once.

Time to train (``days``) is the steps of the token budget plus the run's evaluations
(``eval_time``, seconds): ``eval_tokens`` (evaluations x samples per evaluation x sequence,
as a benchmark states them; MLPerf Training's time-to-train, run_start to run_stop, includes
every evaluation) x forward FLOPs per token (``2 N + attention``; with LoRA the frozen base
still runs forward, ``2 N + 2 P + attention``) / (chips x peak x ``mfu``): the compute
phases' efficiency and precision of the training step, with no backward, no gradient
reduction, no pipeline bubble and no HBM floor. ``eval_share`` is its share of the total.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from trnkb.workload.evals import forward_flops_per_token
from trnkb.workload.models import Model
from trnkb.workload.plan import (
    LORA_RECIPES,
    MEMORY_RECIPES,
    Plan,
    first_stage_in_flight,
    memory_per_chip,
    min_chips,
    stage_layers,
)
from trnkb.workload.ranges import Input, check_assumptions
from trnkb.workload.stepextras import dp_exposed, optimizer_bytes
from trnkb.workload.stepshape import (
    BASE_WGRAD_GEMMS,
    CP_COMMS,
    a2a_cp_bytes,
    adapter_bytes_per_token,
    adapter_kernels_per_layer,
    frozen_gather_params,
    gemm_rows_factor,
    kernel_seconds,
    lora_compute_scale,
)
from trnkb.workload.system import System
from trnkb.workload.trainfit import refuse_unfit
from trnkb.workload.traininputs import TRAIN_ASSUMPTIONS as TRAIN_ASSUMPTIONS
from trnkb.workload.traininputs import central_values as central_values
from trnkb.workload.traininputs import compute_seconds, eval_seconds, mfu_of

if TYPE_CHECKING:
    from trnkb.workload.lora import LoRA
    from trnkb.workload.result import WorkloadResult

COMM_PARTS = ("dp", "tp", "ep", "cp", "pp")


def _buckets(params: float, dp: int) -> int:
    """Gradient buckets of ``params`` local parameters over ``dp`` data-parallel ranks:
    Megatron-core's default bucket of ``max(40e6, 1e6 x dp)`` parameters (its
    ``DistributedDataParallelConfig.bucket_size``: "larger DP sizes need larger buckets to
    ensure collectives do not become latency-bound"); each bucket is one collective."""
    return max(1, math.ceil(params / max(40e6, 1e6 * dp)))


def _exposed(t: float, overlap: float, window: float) -> float:
    hidden = min(t * overlap, window)
    return t - hidden


def step_breakdown(model: Model, system: System, plan: Plan, v: dict[str, float], *, seq_len: int,
                   batch_tokens: float, recipe: str, weight_bytes: float,
                   include_attention: bool = True,
                   budget: float | None = None,
                   flops_per_token: float | None = None,
                   trainable: float | None = None,
                   lora_targets: tuple[str, ...] = (),
                   cp_comm: str = "ring") -> dict[str, float]:
    """Every part of one training step for the input values ``v`` (floats; see ranges.propagate).

    ``trainable``: LoRA's adapter parameters (the base frozen, recipe ``bf16-lora``): only
    they are reduced across data-parallel ranks and carry gradients and optimizer state
    (16 bytes each, split over ``tp x pp``: ``memory_adapters``); full recomputation adds one
    forward of the base to a step whose backward skips the weight gradients; ``lora_targets``
    (the adapted matrices) adds the adapters' kernels (:mod:`~trnkb.workload.stepshape`).
    ``cp_comm``: ``ring`` (KV exchange) or ``a2a`` (Q, K, V and O all-to-all, not hidden).

    Returns seconds for ``compute``, ``bubble``, ``optimizer``, ``<part>_comm`` (raw) and
    ``<part>_exposed``, ``step_time``; bytes ``memory`` and its parts; ``fits`` (1.0/0.0);
    ``hbm_traffic`` and ``pp_bytes`` (pipeline sends per chip) bytes; ``flops_per_step``;
    with ``budget`` tokens also ``days``.
    """
    chips = plan.chips
    sequences = batch_tokens / seq_len
    n_micro = sequences / (plan.dp * plan.microbatch)
    mem = memory_per_chip(model, plan, recipe, seq_len, n_micro)
    if trainable is not None:
        mem["adapters"] = trainable * 16.0 / (plan.tp * plan.pp)
        mem["total"] += mem["adapters"]
    f_tok = (flops_per_token if flops_per_token is not None
             else model.training_flops_per_token(seq_len, include_attention))
    flops_step = f_tok * batch_tokens
    peak = v["peak_flops"]
    attn = min(3 * model.attention_flops_per_token(seq_len) if include_attention else 0.0, f_tok)
    rows = gemm_rows_factor(plan.microbatch * seq_len / plan.cp, v.get("gemm_m_half", 0.0))
    compute = compute_seconds(flops_step, attn * batch_tokens, chips, v, rows)
    if trainable is not None:  # the full step's non-GEMM work stays; only the wgrad goes
        compute *= lora_compute_scale(model.active_params(False), f_tok, mfu_of(v),
                                      v.get("train_gemm_efficiency", 0.0),
                                      v.get("gemm_m_half", 0.0))
    recompute_factor = 1.0
    if plan.recompute == "full":
        if trainable is None:
            recompute_factor = 4 / 3
        else:  # one more forward of the base over a 4N (not 6N) step
            fwd = 2.0 * model.active_params(False) + (
                model.attention_flops_per_token(seq_len) if include_attention else 0.0)
            recompute_factor = 1 + fwd / f_tok
        compute *= recompute_factor
    # HBM traffic
    w, g, o, _ = MEMORY_RECIPES[recipe]
    local_w = mem["weights"] if plan.zero < 3 else mem["weights"] * plan.dp * plan.cp
    traffic = 3 * n_micro * local_w + 2 * (mem["weights"] + mem["gradients"] + mem["optimizer"]) \
        + 2 * mem["activations"] * max(n_micro / first_stage_in_flight(plan, n_micro), 1)
    adapters = None if trainable is None else trainable / (plan.tp * plan.pp)
    opt_bytes = optimizer_bytes(mem["optimizer"], (w, g, o), adapters)  # serial, apart
    compute = max(compute, (traffic - opt_bytes) / v["hbm_bandwidth"])
    layers = stage_layers(model, plan)
    kernels = v.get("train_kernels_per_layer", 0.0) + (adapter_kernels_per_layer(
        model, lora_targets) - BASE_WGRAD_GEMMS if trainable is not None else 0.0)
    floors = recompute_factor * kernel_seconds(kernels, layers, n_micro,
                                               v.get("kernel_overhead", 0.0))
    adapters_s = (adapter_bytes_per_token(model, lora_targets) * batch_tokens / chips
                  / v["hbm_bandwidth"])
    compute += floors + adapters_s
    bubble = compute * (plan.pp - 1) / (max(n_micro, 1) * plan.vpp)

    net = system.network
    kw = {"efficiency": v["collective_efficiency"], "step_latency": v["step_latency"],
          "hop_latency": v["hop_latency"], "scaleout_latency": v["scaleout_latency"],
          "scaleup_scale": v["scaleup_bandwidth"] / system.scaleup_input.mid,
          "scaleout_scale": v["scaleout_bandwidth"] / system.scaleout_input.mid}
    p = model.params()
    dense_local = (p["total"] - p["routed_experts"]) / (plan.tp * plan.pp)
    expert_local = p["routed_experts"] / (plan.ep * plan.tp * plan.pp)
    grad_bytes = g if g else 2.0
    data = plan.dp * plan.cp
    # ZeRO >= 1 reduce-scatters gradients to their optimizer shard, then all-gathers the updated
    # weights (once per step; per microbatch forward and backward under ZeRO-3); ZeRO-0 all-reduces
    red = "reduce-scatter" if plan.zero >= 1 else "all-reduce"
    frozen = (0.0, 0.0)  # a LoRA base sharded by ZeRO-3 is gathered as a trained one is
    if trainable is not None:  # only the adapters' gradients and weights move
        if plan.zero >= 3:
            frozen = frozen_gather_params(model, plan.tp, plan.pp, plan.ep)
        dense_local, expert_local, weight_bytes = trainable / (plan.tp * plan.pp), 0.0, 2.0
    edata = max(data // plan.ep, 1)

    def bucketed(kind: str, params: float, per: float, g: int, stride: int) -> float:
        n = _buckets(params, g)
        return n * net.time(kind, params * per / n, g, stride, **kw)

    t_red = bucketed(red, dense_local, grad_bytes, data, plan.tp)
    if (plan.ep > 1 or model.moe) and expert_local > 0:
        t_red += bucketed(red, expert_local, grad_bytes, edata, plan.tp * plan.ep)
    gathers = 2 * max(n_micro, 1) if plan.zero >= 3 else (1 if plan.zero >= 1 else 0)
    t_gather = gathers * (bucketed("all-gather", dense_local, weight_bytes, data, plan.tp)
                          + bucketed("all-gather", expert_local, weight_bytes, edata,
                                     plan.tp * plan.ep)
                          + bucketed("all-gather", frozen[0], w, data, plan.tp)
                          + bucketed("all-gather", frozen[1], w, edata, plan.tp * plan.ep))
    t_dp = t_red + t_gather
    tokens_mb = plan.microbatch * seq_len / plan.cp
    act = tokens_mb * model.d_model * 2.0
    n_tp = 6 if plan.recompute == "full" else 4
    t_tp = n_micro * layers * n_tp * net.time("all-reduce", act, plan.tp, 1, **kw)
    moe_layers = math.ceil(model.moe_layers / plan.pp)
    routed = tokens_mb / plan.tp * model.active_experts * model.d_model * 2.0
    t_ep = (n_micro * moe_layers * 4 * net.time("all-to-all", routed, plan.ep, plan.tp, **kw)
            if plan.ep > 1 else 0.0)
    kv_chunk = tokens_mb * model.kv_elements_per_token() / model.layers * 2.0
    if plan.cp > 1 and cp_comm == "a2a":  # forward and backward, Q/K/V then O (stepshape)
        t_cp = n_micro * layers * 2 * sum(
            net.time("all-to-all", tokens_mb * b / plan.tp, plan.cp, plan.tp, **kw)
            for b in a2a_cp_bytes(model))
    else:
        t_cp = n_micro * layers * 3 * net.time("all-gather", kv_chunk * plan.cp, plan.cp,
                                               plan.tp, **kw) if plan.cp > 1 else 0.0
    crosses = plan.tp * plan.cp * plan.dp >= net.domain
    pp_bytes = 2 * n_micro * plan.vpp * act / plan.tp if plan.pp > 1 else 0.0
    pp_scale = kw["scaleout_scale"] if crosses else kw["scaleup_scale"]
    t_pp = (net.p2p(pp_bytes, crosses, v["collective_efficiency"]) / pp_scale
            if plan.pp > 1 else 0.0)
    comm = {"dp": t_dp, "tp": t_tp, "ep": t_ep, "cp": t_cp, "pp": t_pp}
    out = {"compute": compute, "bubble": bubble, "hbm_traffic": traffic, "pp_bytes": pp_bytes,
           "flops_per_step": flops_step, "flops_per_token": f_tok, "microbatches": n_micro,
           "gemm_rows_factor": rows, "kernel_floors": floors, "adapter_kernels": adapters_s}
    out["optimizer"] = opt_bytes / v["hbm_bandwidth"]
    step = compute + bubble + out["optimizer"]
    fwd_share = (0.5 if trainable is not None else 1 / 3) / recompute_factor
    for k, t in comm.items():
        out[f"{k}_comm"] = t
        e = (dp_exposed(t_red, t_gather, v["dp_overlap"], compute, fwd_share, plan.zero >= 3)
             if k == "dp"
             else _exposed(t, 0.0 if k == "cp" and cp_comm == "a2a" else v[f"{k}_overlap"],
                           compute))
        out[f"{k}_exposed"] = e
        step += e
    out["step_time"] = step
    for k, b in mem.items():
        out[f"memory_{k}"] = b
    out["memory"] = mem["total"]
    out["fits"] = 1.0 if mem["total"] <= v["hbm_capacity"] * v["usable_hbm"] else 0.0
    out["achieved_mfu"] = flops_step / (chips * peak * step)
    if budget is not None:
        out["days"] = budget / batch_tokens * step / 86400
        out["total_flops"] = f_tok * budget
    return out


# -- the public entry point ---------------------------------------------------------------

TRAIN_METRICS = {"step_time": "s", "days": "day", "achieved_mfu": "", "memory": "B",
                 "min_chips": "",
                 "tokens_per_s": "1/s", "tokens_per_s_per_chip": "1/s",
                 "tokens_per_s_per_mw": "1/s/MW",
                 "tokens_per_usd": "1/USD", "usd_per_chip_hour": "USD/h", "cost_usd": "USD",
                 "energy_mwh": "MWh", "facility_mw": "MW", "eval_time": "s", "eval_share": ""}


def train(model: Model, system: System, chips: int, plan: Plan | str | None = None,
          tokens: float = 15e12, precision: str = "bf16", *, seq_len: int = 8192,
          batch_tokens: float = 4 * 2**20, recipe: str = "bf16-adam",
          assumptions: dict[str, Input] | None = None, include_attention: bool = True,
          flops_per_token: float | None = None, pricing: str = "tco",
          allow_unfit: bool = False, lora: LoRA | None = None,
          eval_tokens: float = 0.0,
          attention_precision: str | None = None, cp_comm: str = "ring") -> WorkloadResult:
    """Train ``model`` on ``chips`` chips of ``system`` for ``tokens`` tokens.

    ``precision`` sets the peak of the GEMMs; ``attention_precision`` (default: the same) the
    peak of the attention FLOPs (``3 x attention`` per token; forward only in evaluations),
    e.g. NVIDIA's NVFP4 recipes: ``precision="fp4", attention_precision="fp8"``.

    ``eval_tokens``: tokens the run's evaluations forward in all (evaluations x samples per
    evaluation x sequence; 0 for none); their time (``eval_time``, see the module docstring)
    is part of ``days``, the cost and the energy, not of the tokens/s; the ``eval_time`` and
    ``eval_share`` metrics are reported when ``eval_tokens`` > 0 (the breakdown always has them).

    An explicit ``plan`` whose memory per chip exceeds the usable HBM at the central inputs
    is refused (``ValueError`` with the bytes it needs by part) unless ``allow_unfit``.
    ``lora``: fine-tune adapters on a frozen base (:mod:`~trnkb.workload.lora`; recipe
    ``bf16-lora``, ``4N + 6P + 3 x attention`` FLOPs per token).

    ``plan`` is a :class:`Plan`, its text form (``"tp=4,pp=2"``, dp fills the chips) or
    None for the fastest plan that fits (:func:`trnkb.workload.search.plans`).
    ``assumptions`` overrides any input by name (e.g. ``{"mfu": user_value("mfu", 0.4, "")}``).
    ``pricing`` is ``tco`` (the TCO model) or ``cloud`` (the KB's public price per chip-hour).
    Returns a :class:`~trnkb.workload.result.WorkloadResult` whose metrics are ranges.
    """
    from trnkb.workload.cost import cost_inputs, facility_watts, usd_per_chip_hour
    from trnkb.workload.result import WorkloadResult, check_positive
    from trnkb.workload.search import plans as search_plans

    check_positive(chips=chips, tokens=tokens, seq_len=seq_len, batch_tokens=batch_tokens)
    if not eval_tokens >= 0:
        raise ValueError(f"eval_tokens must be >= 0, not {eval_tokens!r}")
    if cp_comm not in CP_COMMS:
        raise ValueError(f"cp_comm must be one of {', '.join(CP_COMMS)}, not {cp_comm!r}")
    trainable: float | None = None
    targets = lora.targets if lora is not None else ()
    if lora is not None:
        from trnkb.workload.lora import adapter_params, lora_flops_per_token

        recipe = "bf16-lora" if recipe == "bf16-adam" else recipe
        if recipe not in LORA_RECIPES:
            raise ValueError(f"LoRA trains with the {' or '.join(LORA_RECIPES)} recipe, not "
                             f"{recipe!r}")
        trainable = float(adapter_params(model, lora))
        if flops_per_token is None:
            flops_per_token = lora_flops_per_token(model, lora, seq_len, include_attention)
    elif recipe in LORA_RECIPES:
        raise ValueError(f"the {recipe} recipe needs lora=LoRA(rank, targets)")
    if recipe not in MEMORY_RECIPES:
        raise ValueError(f"unknown memory recipe {recipe!r}; choose from "
                         f"{', '.join(MEMORY_RECIPES)}")
    inputs = {**central_values(system, precision, attention_precision=attention_precision),
              **cost_inputs(system, pricing)}
    assumptions = check_assumptions(assumptions, inputs)
    inputs.update(assumptions)
    weight_bytes = MEMORY_RECIPES[recipe][0] if recipe != "fp8-adam" else 1.0
    chosen: Plan
    if plan is None:
        found = search_plans(model, system, chips, tokens, precision, seq_len=seq_len,
                             batch_tokens=batch_tokens, recipe=recipe, assumptions=assumptions,
                             top=1, flops_per_token=flops_per_token, trainable=trainable,
                             lora_targets=targets, cp_comm=cp_comm)
        if not found:
            raise ValueError(f"no plan fits {model.id} on {chips} chips of {system.id}")
        chosen = found[0]["plan"]
    elif isinstance(plan, str):
        chosen = Plan.parse(plan, chips)
    else:
        chosen = plan
    bad = chosen.problems(model, chips, batch_tokens / seq_len)
    if bad:
        raise ValueError(f"plan {chosen.label}: " + "; ".join(bad))
    if plan is not None and not allow_unfit:
        refuse_unfit(model, system, chosen, inputs, seq_len, batch_tokens, recipe,
                      trainable)

    f_fwd = forward_flops_per_token(model, seq_len, include_attention, flops_per_token, lora)
    a_fwd = min(model.attention_flops_per_token(seq_len) if include_attention else 0.0, f_fwd)

    def run(v: dict[str, float]) -> dict[str, float]:
        s = step_breakdown(model, system, chosen, v, seq_len=seq_len, batch_tokens=batch_tokens,
                           recipe=recipe, weight_bytes=weight_bytes,
                           include_attention=include_attention,
                           budget=tokens, flops_per_token=flops_per_token,
                           trainable=trainable, lora_targets=targets, cp_comm=cp_comm)
        s["eval_time"] = eval_seconds(eval_tokens, f_fwd, a_fwd, chips, v,
                                       s["gemm_rows_factor"])
        s["days"] += s["eval_time"] / 86400
        s["eval_share"] = s["eval_time"] / (s["days"] * 86400)
        hours = s["days"] * 24
        s["min_chips"] = min_chips(model, recipe, seq_len, v["hbm_capacity"] * v["usable_hbm"])
        s["tokens_per_s"] = batch_tokens / s["step_time"]
        s["tokens_per_s_per_chip"] = s["tokens_per_s"] / chips
        s["usd_per_chip_hour"] = usd_per_chip_hour(v)
        s["tokens_per_usd"] = s["tokens_per_s_per_chip"] * 3600 / s["usd_per_chip_hour"]
        s["cost_usd"] = s["usd_per_chip_hour"] * chips * hours
        s["facility_mw"] = facility_watts(v) * chips / 1e6
        s["tokens_per_s_per_mw"] = s["tokens_per_s"] / s["facility_mw"]
        s["energy_mwh"] = s["facility_mw"] * hours
        return s

    metrics = TRAIN_METRICS if eval_tokens else {  # no evaluations: no rows of zeros
        k: u for k, u in TRAIN_METRICS.items() if not k.startswith("eval_")}
    result = WorkloadResult.build("train", model, system, chips, precision, inputs, run,
                                  metrics,
                                  plan=chosen, settings={"tokens": tokens, "seq_len": seq_len,
                                                       "batch_tokens": batch_tokens,
                                                       "recipe": recipe,
                                                       "include_attention": include_attention,
                                                       "pricing": pricing,
                                                       "lora": lora.label if lora else None,
                                                       "eval_tokens": eval_tokens,
                                                       "attention_precision":
                                                           attention_precision or precision,
                                                       "cp_comm": cp_comm})
    return result
