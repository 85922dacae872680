"""Per-step costs outside the microbatch loop: the optimizer step; the data-parallel windows.

The optimizer step runs once per training step, after the data-parallel gradient reduction
ends and before the next forward (Megatron-core's ``optimizer.step()``; NVIDIA's MLPerf
Training v5.1 Llama 3.1 8B configurations state ``OVERLAP_PARAM_GATHER_WITH_OPTIM_STEP=False``,
``config_common_8b.sh``), so nothing hides it. Adam is elementwise and memory-bound: per
parameter of the rank's optimizer shard it reads the gradient (``g`` bytes), reads and writes
the optimizer state (``o`` bytes: fp32 master weight, momentum and variance) and writes the
updated weight (``w`` bytes), ``g + 2 o + w`` bytes (28 for mixed-precision Adam, bf16
weights and gradients), at the chip's HBM bandwidth. The shard is the optimizer memory per
chip over ``o`` (ZeRO >= 1 / Megatron's distributed optimizer shards it over the
data-parallel x context-parallel ranks); LoRA updates only the adapters (``16`` bytes of
state each: bf16 weight and gradient, fp32 Adam), split over ``tp x pp``.
"""

from __future__ import annotations

_LORA = (2.0, 2.0, 12.0)  # bf16 adapter weights and gradients, fp32 master, m and v


def optimizer_bytes(optimizer_memory: float, recipe: tuple[float, float, float],
                    adapters: float | None = None) -> float:
    """HBM bytes one chip's optimizer step moves.

    ``optimizer_memory``: bytes of optimizer state on the chip; ``recipe``: bytes per
    parameter of (weights, gradients, optimizer state); ``adapters``: with LoRA, the chip's
    adapter parameters (then the base, frozen, is not updated)."""
    if adapters is not None:
        w, g, o = _LORA
        return adapters * (g + 2 * o + w)
    w, g, o = recipe
    if o <= 0:
        return 0.0
    return optimizer_memory / o * (g + 2 * o + w)


def optimizer_seconds(optimizer_memory: float, recipe: tuple[float, float, float],
                      hbm_bandwidth: float, adapters: float | None = None) -> float:
    """Seconds of one optimizer step: :func:`optimizer_bytes` / ``hbm_bandwidth`` (B/s)."""
    return optimizer_bytes(optimizer_memory, recipe, adapters) / hbm_bandwidth


def dp_exposed(reduce: float, gather: float, overlap: float, compute: float,
               forward_share: float, zero3: bool = False) -> float:
    """Exposed seconds of the data-parallel communication of one step.

    ``reduce``, ``gather``: seconds of the gradient reduction and of the weight all-gathers;
    ``overlap``: the fraction hidden (``dp_overlap``); ``compute``: seconds of the step's
    compute, of which ``forward_share`` is forward. Megatron-core overlaps the reduction with
    the backward (``overlap_grad_reduce``) and the weight all-gather with the next forward
    (``overlap_param_gather``), so each hides under its own phase only. Under ZeRO-3 the
    gathers run in the forward and the backward: the whole compute is the one window."""
    if zero3:
        t = reduce + gather
        return t - min(t * overlap, compute)
    fwd, bwd = compute * forward_share, compute * (1.0 - forward_share)
    return (reduce - min(reduce * overlap, bwd)) + (gather - min(gather * overlap, fwd))
