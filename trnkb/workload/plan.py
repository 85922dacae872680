"""Parallelism plans and the training-memory model.

A :class:`Plan` splits ``chips = dp x tp x pp x cp`` ways; expert parallelism ``ep`` is
carved out of the ``dp x cp`` data-parallel ranks (Megatron's convention). Rank order is
tensor innermost, then context, data, pipeline outermost, so a tensor-parallel group is a
packed group of ``tp`` neighbouring chips and a data-parallel group has stride ``tp``.

Memory per chip (bytes; ZeRO paper for the states, Korthikanti et al. for activations)
--------------------------------------------------------------------------------------
* weights, gradients, optimizer states: parameters x bytes of the recipe
  (:data:`MEMORY_RECIPES`), non-expert parameters divided by ``tp x pp``, routed-expert
  parameters by ``ep x tp x pp``; ZeRO stage 1 also shards optimizer states over the
  data-parallel ranks, stage 2 gradients too, stage 3 (FSDP) weights too.
* activations per token per layer, bf16, flash attention (no score matrix), divided by
  ``tp`` (sequence parallel): ``none`` keeps ``18*d + 6*f`` bytes (attention 11d, norms
  4d, FFN input 2d + gate/up/activation outputs 3 x 2f, masks d; ``f`` = FFN width times
  the experts a token uses); ``selective`` keeps the matmul inputs only, ``10*d + 2*f``;
  ``full`` keeps the layer input, ``2*d`` x checkpoints per layer, plus one layer's full set
  while it is recomputed. Tokens in flight on the first pipeline stage
  (:func:`first_stage_in_flight`): ``min(pp, n_micro)`` microbatches of the stage's layers
  with 1F1B; with the interleaved schedule (``vpp`` > 1) ``pp + (pp - 1) / vpp`` (at most
  ``n_micro``), i.e. ``L x (1 + (pp - 1) / (pp x vpp))`` layers' worth, Korthikanti et al.
  2022 section 4.2.3. fp32 logits of one microbatch on the last stage: ``4 x vocab`` per
  token / tp.

Interleaved 1F1B (Narayanan et al. 2021, section 2.2.2): each chip holds ``vpp`` chunks of
``ceil(L / (pp x vpp))`` layers; Megatron-LM asserts that the number of microbatches is a
multiple of ``pp`` with this schedule (its README and ``schedules.py``), and :meth:`Plan.problems`
applies that rule (Meta's Llama 3 schedule, section 3.3.2, relaxes it; we do not model that).
Megatron also wants the layers divisible into ``pp x vpp`` chunks; Llama 3 ran 126 layers
with uneven first and last stages, so we only require ``pp x vpp <= L`` and round each chunk
up (as ``pp`` alone already is).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

from trnkb.workload.models import Model

# bytes per parameter: (weights, gradients, optimizer states, basis)
MEMORY_RECIPES = {
    "bf16-adam": (2.0, 2.0, 12.0, "zero-paper: mixed-precision Adam, bf16 weights and gradients, "
                                 "fp32 master weights, momentum and variance (16 bytes/parameter)"),
    "fp8-adam": (3.0, 2.0, 12.0, "bf16-adam plus an fp8 copy of the weights for the fp8 matmuls"),
    "scaling-book": (2.0, 0.0, 8.0, "scaling-book part 6: bf16 parameters and fp32 Adam state; "
                                    "gradients not counted"),
    "bf16-lora": (2.0, 0.0, 0.0, "LoRA (Hu et al. 2021): frozen bf16 base weights, no gradients "
                                 "or optimizer state for them; the adapters' own state "
                                 "(bf16 weights and gradients, fp32 Adam: 16 bytes each) is "
                                 "added by train()"),
    "fp8-lora": (1.0, 0.0, 0.0, "bf16-lora with the frozen base held in fp8 only (NeMo's "
                                "fp8_params, set with FP8=True by NVIDIA's and AMD's MLPerf "
                                "Training Llama 2 70B LoRA configurations)"),
}
LORA_RECIPES = ("bf16-lora", "fp8-lora")
RECOMPUTE = ("none", "selective", "full")


@dataclass(frozen=True)
class Plan:
    """Degrees of data, tensor, pipeline, expert and context parallelism, and memory choices."""

    dp: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    cp: int = 1
    zero: int = 1
    recompute: str = "selective"
    microbatch: int = 1
    checkpoints_per_layer: int = 1
    vpp: int = 1  # virtual pipeline stages per chip (interleaved 1F1B)

    @property
    def chips(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def label(self) -> str:
        return (f"dp={self.dp},tp={self.tp},pp={self.pp},ep={self.ep},cp={self.cp},"
                f"zero={self.zero},"
                f"recompute={self.recompute},mb={self.microbatch}"
                + (f",vpp={self.vpp}" if self.vpp > 1 else ""))

    _KEYS = {"dp": "dp", "tp": "tp", "pp": "pp", "ep": "ep", "cp": "cp", "zero": "zero",
             "mb": "microbatch", "microbatch": "microbatch", "recompute": "recompute",
             "ckpt": "checkpoints_per_layer", "vpp": "vpp"}

    @classmethod
    def parse(cls, text: str, chips: int | None = None) -> Plan:
        """``"tp=4,pp=2,ep=8,zero=3,recompute=full,mb=1"``; ``dp`` defaults to fill ``chips``."""
        kw: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            m = re.fullmatch(r"([a-z]+)\s*=\s*([a-z0-9]+)", part)
            if not m or m.group(1) not in cls._KEYS:
                raise ValueError(f"bad plan item {part!r}; write e.g. tp=4,pp=2,ep=8,zero=1,"
                                 f"recompute=selective,mb=1 (keys: {', '.join(sorted(cls._KEYS))})")
            key, val = cls._KEYS[m.group(1)], m.group(2)
            if key == "recompute":
                if val not in RECOMPUTE:
                    raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE)}, not "
                                     f"{val!r}")
                kw[key] = val
            elif not val.isdigit() or (int(val) < 1 and key != "zero") or int(val) > 1_000_000:
                raise ValueError(f"plan {m.group(1)} must be a positive integer, not {val!r}")
            else:
                kw[key] = int(val)
        plan = cls(**kw)
        if chips is not None and "dp" not in kw:
            per = plan.tp * plan.pp * plan.cp
            if chips % per:
                raise ValueError(f"{chips} chips are not divisible by tp x pp x cp = {per}")
            plan = replace(plan, dp=chips // per)
        return plan

    def problems(self, model: Model, chips: int, sequences: float) -> list[str]:
        """Why this plan cannot run (empty when it can)."""
        out = []
        if self.chips != chips:
            out.append(f"dp x tp x pp x cp = {self.chips}, not {chips} chips")
        if self.zero not in (0, 1, 2, 3):
            out.append("zero must be 0, 1, 2 or 3")
        if self.pp * self.vpp > model.layers:
            out.append(f"pp x vpp = {self.pp * self.vpp} exceeds the {model.layers} layers")
        if self.vpp > 1:
            n_micro = sequences / (self.dp * self.microbatch)
            if self.pp < 2:
                out.append(f"vpp={self.vpp} needs pipeline parallelism (pp > 1)")
            elif n_micro < self.pp or abs(n_micro / self.pp - round(n_micro / self.pp)) > 1e-9:
                out.append(f"the interleaved schedule (vpp={self.vpp}) needs the microbatches "
                           f"per step ({n_micro:g}) to be a multiple of pp={self.pp} (Megatron-LM)")
        if model.attention_heads % self.tp:
            out.append(f"tp={self.tp} does not divide {model.attention_heads} attention heads")
        if self.ep > 1 and (not model.moe or model.experts % self.ep
                            or (self.dp * self.cp) % self.ep):
            out.append(f"ep={self.ep} must divide the experts and dp x cp")
        if sequences < self.dp * self.microbatch:
            out.append(f"the batch has {sequences:g} sequences, fewer than dp x microbatch")
        return out


def _ffn_width(model: Model) -> float:
    if model.moe:
        return (model.active_experts + model.shared_experts) * (model.expert_ffn_size or 0)
    return float(model.ffn_size or 0)


def activation_bytes_per_token_layer(model: Model, recompute: str, checkpoints: int = 1) -> float:
    """Saved activation bytes per token per layer before tensor-parallel sharding."""
    d, f = model.d_model, _ffn_width(model)
    if recompute == "none":
        return 18.0 * d + 6.0 * f
    if recompute == "selective":
        return 10.0 * d + 2.0 * f
    return 2.0 * d * checkpoints


def stage_layers(model: Model, plan: Plan) -> int:
    """Layers on one chip: ``ceil(L / pp)``, or ``vpp`` chunks of ``ceil(L / (pp x vpp))``."""
    if plan.vpp <= 1:
        return math.ceil(model.layers / plan.pp)
    return plan.vpp * math.ceil(model.layers / (plan.pp * plan.vpp))


def first_stage_in_flight(plan: Plan, n_micro: float) -> float:
    """Microbatches of a whole stage whose activations the first stage holds at its peak.

    1F1B: ``min(pp, n_micro)``. Interleaved (``vpp`` > 1): Megatron-LM's schedule runs
    ``2 (pp - 1) + (vpp - 1) pp`` warm-up chunk forwards on the first stage and holds one
    more, ``pp x vpp + pp - 1`` chunks of ``1 / vpp`` of a stage = ``pp + (pp - 1) / vpp``
    stage-microbatches, i.e. the factor ``1 + (pp - 1) / (pp x vpp)`` over 1F1B of
    Korthikanti et al. 2022 (section 4.2.3); the warm-up never exceeds all ``n_micro``.
    """
    n = max(n_micro, 1)
    if plan.vpp <= 1:
        return min(plan.pp, n)
    return min(plan.pp + (plan.pp - 1) / plan.vpp, n)


def memory_per_chip(model: Model, plan: Plan, recipe: str, seq_len: int,
                    n_micro: float) -> dict[str, float]:
    """Bytes per chip by part (``total`` included); see the module docstring."""
    w, g, o, _ = MEMORY_RECIPES[recipe]
    p = model.params()
    experts = p["routed_experts"]
    dense = p["total"] - experts
    data = plan.dp * plan.cp
    dense_shard = dense / (plan.tp * plan.pp)
    expert_shard = experts / (plan.ep * plan.tp * plan.pp)
    expert_data = max(data // plan.ep, 1)

    def state(bytes_per_param: float, sharded: bool) -> float:
        if not sharded:
            return (dense_shard + expert_shard) * bytes_per_param
        return (dense_shard / data + expert_shard / expert_data) * bytes_per_param

    tokens_mb = plan.microbatch * seq_len / plan.cp
    layers = stage_layers(model, plan)
    in_flight = first_stage_in_flight(plan, n_micro)
    per = activation_bytes_per_token_layer(model, plan.recompute, plan.checkpoints_per_layer)
    act = per * layers * tokens_mb * in_flight / plan.tp
    if plan.recompute == "full":
        act += activation_bytes_per_token_layer(model, "none") * tokens_mb / plan.tp
    out = {"weights": state(w, plan.zero >= 3), "gradients": state(g, plan.zero >= 2),
           "optimizer": state(o, plan.zero >= 1), "activations": act,
           "logits": 4.0 * model.vocabulary * tokens_mb / plan.tp}
    out["total"] = sum(out.values())
    return out


def training_state_bytes(model: Model, recipe: str, tokens: float, recompute: str = "full",
                         checkpoints_per_layer: int = 1,
                         params: float | None = None) -> dict[str, float]:
    """Whole-job memory, every token of the batch in flight (the scaling book's minimum-chips sum).

    ``params`` overrides the parameter count (to reproduce a source that rounds it).
    """
    w, g, o, _ = MEMORY_RECIPES[recipe]
    n = model.total_params if params is None else params
    act = (activation_bytes_per_token_layer(model, recompute, checkpoints_per_layer)
           * model.layers * tokens)
    out = {"weights": n * w, "gradients": n * g, "optimizer": n * o, "activations": act}
    out["total"] = sum(out.values())
    return out


def min_chips(model: Model, recipe: str, seq_len: int, usable_bytes: float) -> float:
    """Fewest chips whose HBM holds the training state: weights, gradients and optimizer fully
    sharded (ZeRO-3), full recomputation, one sequence per data-parallel rank, tensor
    parallelism 1 to 64 to split that sequence's activations. ``inf`` if nothing fits."""
    w, g, o, _ = MEMORY_RECIPES[recipe]
    states = model.total_params * (w + g + o)
    best = math.inf
    tp = 1
    while tp <= 64:
        one = memory_per_chip(model, Plan(tp=tp, zero=3, recompute="full"), recipe, seq_len, 1)
        per_chip_fixed = one["activations"] + one["logits"]
        if usable_bytes > per_chip_fixed:
            n = math.ceil(states / (usable_bytes - per_chip_fixed))
            best = min(best, math.ceil(n / tp) * tp)
        tp *= 2
    return float(best)
