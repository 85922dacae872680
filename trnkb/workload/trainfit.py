"""Refusing a training plan that does not fit: the memory per chip it needs, by part."""

from __future__ import annotations

from trnkb.workload.models import Model
from trnkb.workload.plan import Plan, memory_per_chip
from trnkb.workload.ranges import Input
from trnkb.workload.system import System


def refuse_unfit(model: Model, system: System, plan: Plan, inputs: dict[str, Input],
                  seq_len: int, batch_tokens: float, recipe: str,
                  trainable: float | None) -> None:
    """Raise when ``plan`` does not fit at the central inputs, saying what it needs."""
    v = {k: i.mid for k, i in inputs.items()}
    mem = memory_per_chip(model, plan, recipe, seq_len,
                          batch_tokens / seq_len / (plan.dp * plan.microbatch))
    if trainable is not None:
        mem["adapters"] = trainable * 16.0 / (plan.tp * plan.pp)
        mem["total"] += mem["adapters"]
    usable = v["hbm_capacity"] * v["usable_hbm"]
    if mem["total"] <= usable:
        return
    parts = ", ".join(f"{k} {b / 1e9:.1f}" for k, b in mem.items() if k != "total" and b > 0)
    raise ValueError(f"plan {plan.label} does not fit {model.id} on {system.chip}: it needs "
                     f"{mem['total'] / 1e9:.1f} GB per chip ({parts} GB) and "
                     f"{v['hbm_capacity'] / 1e9:.0f} GB x usable_hbm {v['usable_hbm']:g} = "
                     f"{usable / 1e9:.1f} GB is usable; use more chips, more tp/pp/ZeRO, "
                     f"full recomputation or a smaller microbatch")
