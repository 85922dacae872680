"""The simulator's inputs for one model on one system: what each step's cost reads.

:func:`sim_inputs` gathers, for :func:`~trnkb.workload.simulation.simulate`, the system's
rates at the compute format, the serving and simulator assumptions (:data:`SIM_ASSUMPTIONS`),
the host floor of an eager MLA prefill step (``prefillhost``), the fitted constants of the
chip's stack (GEMM efficiency and rows, ``gemmfit``, times
``fp4_gemm_efficiency`` at a 4-bit format, ``fp4fit``; collective
latency, ``collfit``; a MoE/MLA layer's kernel chain, ``kernelfit``; AMD decode GEMMs and
FP8 fused MoE, ``rocmfit``; Trainium weight streaming, ``gemmfit``), the attention peaks
(the cache's format for decode; bf16 for an MLA prefill, which the stacks run as MHA on K/V
up-projected from the latent in 16 bits: vLLM ``v1/attention/backends/mla/common.py``,
SGLang's MHA path) and the cost inputs; the caller's ``assumptions`` override any input they name.
"""

from __future__ import annotations

from dataclasses import replace

from trnkb.workload.collfit import latency_inputs, stack_of
from trnkb.workload.cost import cost_inputs
from trnkb.workload.fp4fit import format_inputs
from trnkb.workload.gemmfit import (
    cuda_inputs,
    hbm_efficiency_input,
    m_half_input,
    rocm_inputs,
)
from trnkb.workload.kernelfit import kernel_inputs
from trnkb.workload.models import Model
from trnkb.workload.neuronx import prefill_inputs
from trnkb.workload.prefillhost import eager_prefill_input
from trnkb.workload.ranges import Input, assumption
from trnkb.workload.rocmfit import rocm_decode_inputs, rocm_moe_inputs
from trnkb.workload.serving import SERVE_ASSUMPTIONS
from trnkb.workload.system import System
from trnkb.workload.training import TRAIN_ASSUMPTIONS

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

_COMM = {k: TRAIN_ASSUMPTIONS[k] for k in ("collective_efficiency", "scaleout_latency")}


def sim_inputs(model: Model, system: System, cp: str, kvp: str, pricing: str,
               assumptions: dict[str, Input] | None,
               stack: str | None = None,
               tp: int | None = None) -> tuple[dict[str, Input], set[str]]:
    """``(inputs, cost_keys)`` of ``model`` on ``system`` computing at ``cp`` with a ``kvp``
    cache (see the module docstring), under the serving ``stack`` when one is named (its
    prefill rules, :mod:`~trnkb.workload.neuronx`), ``tp`` the caller's tensor-parallel width
    if given (the expert slice a fused-MoE fit is picked for); ``cost_keys`` name the inputs
    that price, not time."""
    costs = cost_inputs(system, pricing)
    cost_keys = set(costs) | {"chip_power", "pue", "capex_per_chip"}
    gemm: dict[str, Input] = {"gemm_m_half": m_half_input(system.chip)}
    if stack_of(system.vendor, system.chip) == "nccl":
        gemm = cuda_inputs()
    elif system.vendor.lower() == "amd":
        gemm |= rocm_inputs(system.chip, cp)
    gemm |= format_inputs(cp, system.vendor)  # the fits above: 8- or 16-bit GEMMs (fp4fit)
    kernels = {} if "layer_overhead" in (assumptions or {}) else kernel_inputs(model)
    inputs = {**system.inputs(cp), **SERVE_ASSUMPTIONS, **_COMM, **SIM_ASSUMPTIONS, **gemm,
              **latency_inputs(system.vendor, system.chip), **kernels, **costs,
              **prefill_inputs(system.chip, stack), **eager_prefill_input(model),
              **(assumptions or {})}
    if kernels:
        inputs.pop("layer_overhead")  # a MoE/MLA layer's floor is its kernel chain's
    for k in ("compute_efficiency", "prefill_mfu"):
        inputs.pop(k, None)  # the formula's scalars; the simulator costs shapes
    att = system.fallback_precision(kvp if kvp in ("bf16", "fp8") else "bf16")
    if att != cp:  # QK^T and AV run at the cache's format (FlashAttention/FlashMLA), not fp4
        inputs["attention_peak_flops"] = replace(system.peak_input(att),
                                                 name="attention_peak_flops")
    # MLA prefill runs as MHA on K/V up-projected from the latent in 16 bits (vLLM
    # v1/attention/backends/mla/common.py, "compute friendly approach"; SGLang's MHA path)
    pre_att = system.fallback_precision("bf16") if model.attention == "mla" else att
    if pre_att != att:
        inputs["prefill_attention_peak_flops"] = replace(
            system.peak_input(pre_att), name="prefill_attention_peak_flops")
    engine_hbm = hbm_efficiency_input(system.chip, system.hbm_bandwidth.mid)
    if engine_hbm is not None and "hbm_efficiency" not in (assumptions or {}):
        inputs["hbm_efficiency"] = engine_hbm
    if system.vendor.lower() == "amd":  # aiter's tuned decode GEMMs (rocmfit)
        rocm = rocm_decode_inputs(system.chip, system.hbm_bandwidth.mid,
                                  inputs.get("kernel_overhead"))
        inputs |= {k: i for k, i in rocm.items() if k in inputs and k not in (assumptions or {})}
        if model.moe and cp in ("fp8", "fp4"):  # aiter's tuned fused MoE
            inter = (model.expert_ffn_size or 0) // tp if tp else None
            moe = rocm_moe_inputs(system.chip, cp, system.peak_input(cp).mid, inter)
            inputs |= {k: i for k, i in moe.items() if k not in (assumptions or {})}
    return inputs, cost_keys
