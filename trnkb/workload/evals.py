"""Evaluations inside a training run: forward FLOPs per token of an evaluation and the
tokens a benchmark's evaluation schedule forwards within a budget (see
:mod:`trnkb.workload.training`, Time to train)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from trnkb.workload.models import Model

if TYPE_CHECKING:
    from trnkb.workload.lora import LoRA


def forward_flops_per_token(model: Model, seq_len: int, include_attention: bool,
                            flops_per_token: float | None, lora: LoRA | None) -> float:
    """Forward FLOPs per token of an evaluation: the model's (LoRA: base and adapters), or a
    third of an explicit ``flops_per_token`` (forward of ``6 N + 3 x attention``)."""
    if lora is not None:
        from trnkb.workload.lora import lora_forward_flops_per_token

        return lora_forward_flops_per_token(model, lora, seq_len, include_attention)
    if flops_per_token is not None:
        return flops_per_token / 3
    return (model.forward_flops_per_token(seq_len) if include_attention
            else 2.0 * model.active_params(False))


def benchmark_eval_tokens(extra: dict[str, Any], tokens: float, seq_len: int) -> float:
    """Tokens a benchmark's evaluations forward within a budget of ``tokens`` (tokens):
    ``floor(tokens / seq_len / eval_every) x eval_samples x seq_len``, from a training
    benchmark row's ``eval_every`` and ``eval_samples`` (sequences; ``Benchmark.extra``);
    0 when the row has no evaluation schedule. ``eval_every`` is ``value`` or, declared as
    ``derive: product``, the product of its ``factors`` (e.g. steps x batch x devices).
    MLPerf Training evaluates every ``eval_every`` training sequences and stops at the
    evaluation that reaches the target, so a budget that ends at convergence ends on one."""
    every, samples = extra.get("eval_every"), extra.get("eval_samples")
    if not every or not samples:
        return 0.0
    interval = (math.prod(float(x) for x in every["factors"].values())
                if every.get("derive") == "product" else float(every["value"]))
    return math.floor(tokens / seq_len / interval) * float(samples["value"]) * seq_len
