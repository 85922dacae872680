"""Plan search: every parallelism plan for a chip count, those that fit in HBM, fastest first.

Candidates: powers of two for tp (up to the scale-up domain and the head count), pp (up to
the layer count), cp (up to 8) and ep (dividing the experts and dp x cp), ZeRO stages 1
and 3 (0 and 2 with ``all_zero``), the three recomputation levels, microbatches of 1, 2
and 4 sequences and, when pp > 1, the interleaved schedule with ``vpp`` of 1, 2, 4 and 8
virtual stages per chip (:data:`VPPS`; only where :meth:`Plan.problems` allows: ``pp x vpp``
within the layers and the microbatches a multiple of pp); dp fills the chips. Each candidate
is evaluated at the central inputs only (ranges come from
:func:`~trnkb.workload.training.train` on the chosen plan).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from trnkb.workload.models import Model
from trnkb.workload.plan import MEMORY_RECIPES, RECOMPUTE, Plan
from trnkb.workload.ranges import Input
from trnkb.workload.system import System
from trnkb.workload.training import central_values, step_breakdown

VPPS = (1, 2, 4, 8)  # virtual pipeline stages per chip the search tries when pp > 1


def _pow2(limit: int) -> list[int]:
    out, x = [], 1
    while x <= limit:
        out.append(x)
        x *= 2
    return out


def candidate_plans(model: Model, system: System, chips: int, sequences: float,
                    all_zero: bool = False) -> list[Plan]:
    """Every plan the search considers (valid for ``chips`` and the model)."""
    tps = [t for t in _pow2(min(system.domain_size, model.attention_heads, chips))
           if model.attention_heads % t == 0]
    pps = [p for p in _pow2(min(model.layers, chips))]
    cps = _pow2(min(8, chips))
    zeros = (0, 1, 2, 3) if all_zero else (1, 3)
    out = []
    for tp, pp, cp in itertools.product(tps, pps, cps):
        per = tp * pp * cp
        if chips % per:
            continue
        dp = chips // per
        eps = ([e for e in _pow2(dp * cp) if model.moe and model.experts % e == 0]
               if model.moe else [1])
        vpps = VPPS if pp > 1 else (1,)
        for ep, zero, rc, mb, vpp in itertools.product(eps, zeros, RECOMPUTE, (1, 2, 4), vpps):
            p = Plan(dp=dp, tp=tp, pp=pp, ep=ep, cp=cp, zero=zero, recompute=rc, microbatch=mb,
                     vpp=vpp)
            if not p.problems(model, chips, sequences):
                out.append(p)
    return out


def plans(model: Model, system: System, chips: int, tokens: float = 15e12,
          precision: str = "bf16", *, seq_len: int = 8192, batch_tokens: float = 4 * 2**20,
          recipe: str = "bf16-adam",
          assumptions: dict[str, Input] | None = None, top: int | None = 20,
          all_zero: bool = False, include_unfit: bool = False,
          flops_per_token: float | None = None,
          trainable: float | None = None,
          lora_targets: tuple[str, ...] = (),
          cp_comm: str = "ring") -> list[dict[str, Any]]:
    """Plans that fit, fastest first: ``[{"plan", "step_time" s, "days", "memory" B, "fits"}]``.

    ``flops_per_token``, ``trainable`` (LoRA's adapter parameters), ``lora_targets`` and
    ``cp_comm`` as in
    :func:`~trnkb.workload.training.step_breakdown`: a LoRA run's plans are ranked with only
    the adapters' gradients reduced.

    ``len(result)`` is capped by ``top``; ``result.evaluated`` is not available, see
    :func:`candidate_plans` for the candidate count.
    """
    inputs = central_values(system, precision, assumptions)
    v = {k: i.mid for k, i in inputs.items()}
    weight_bytes = MEMORY_RECIPES[recipe][0] if recipe != "fp8-adam" else 1.0
    rows: list[dict[str, Any]] = []
    f_tok = flops_per_token or model.training_flops_per_token(seq_len)
    for p in candidate_plans(model, system, chips, batch_tokens / seq_len, all_zero):
        s = step_breakdown(model, system, p, v, seq_len=seq_len, batch_tokens=batch_tokens,
                           recipe=recipe, weight_bytes=weight_bytes, budget=tokens,
                           flops_per_token=f_tok, trainable=trainable,
                           lora_targets=lora_targets, cp_comm=cp_comm)
        if s["fits"] or include_unfit:
            rows.append({"plan": p, "step_time": s["step_time"], "days": s["days"],
                         "memory": s["memory"], "fits": bool(s["fits"]),
                         "achieved_mfu": s["achieved_mfu"]})
    rows.sort(key=lambda r: (not r["fits"], r["step_time"], r["memory"], r["plan"].label))
    return rows[:top] if top else rows


def best_vpp(model: Model, system: System, base: Plan, tokens: float = 15e12,
             precision: str = "bf16", *, seq_len: int = 8192, batch_tokens: float = 4 * 2**20,
             recipe: str = "bf16-adam", assumptions: dict[str, Input] | None = None) -> Plan:
    """``base`` with the schedule depth the search would pick: the ``vpp`` in :data:`VPPS` whose
    plan is valid, fits and has the shortest central step time (``base`` if none does).

    For a published plan that gives tp, pp, cp and dp but not its virtual stages.
    """
    inputs = central_values(system, precision, assumptions)
    v = {k: i.mid for k, i in inputs.items()}
    weight_bytes = MEMORY_RECIPES[recipe][0] if recipe != "fp8-adam" else 1.0
    best, best_t = base, float("inf")
    for vpp in VPPS if base.pp > 1 else (base.vpp,):
        p = replace(base, vpp=vpp)
        if p.problems(model, base.chips, batch_tokens / seq_len):
            continue
        s = step_breakdown(model, system, p, v, seq_len=seq_len, batch_tokens=batch_tokens,
                           recipe=recipe, weight_bytes=weight_bytes, budget=tokens)
        if s["fits"] and s["step_time"] < best_t:
            best, best_t = p, s["step_time"]
    return best
