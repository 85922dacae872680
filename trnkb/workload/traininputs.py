"""Inputs of a training run and the compute-time arithmetic :mod:`~trnkb.workload.training`
charges with them: the assumptions (MFU, overlaps, latencies), the system's and the shape
inputs (:mod:`~trnkb.workload.stepshape`), FLOPs to seconds at a peak and an MFU."""

from __future__ import annotations

from dataclasses import replace

from trnkb.workload.fp4fit import format_inputs
from trnkb.workload.ranges import Input, assumption
from trnkb.workload.stepshape import shape_inputs
from trnkb.workload.system import System

TRAIN_ASSUMPTIONS = {
    "mfu": assumption("mfu", 0.2, 0.45, 0.65, "", "model-FLOPs utilisation of the compute phases; "
                      "llama-3-herd-paper measured 38-43% BF16 end to end on 8-16K H100, "
                      "scaling-book uses 40%, MaxText recipes reach 52-65% on TPU v5p and first "
                      "PyTorch runs of MoE models on Trainium3 20-30% "
                      "(specs/claims/measured.yaml)"),
    "collective_efficiency": assumption("collective_efficiency", 0.6, 0.75, 0.9, "",
                                        "achieved fraction of link bandwidth in collectives"),
    "dp_overlap": assumption("dp_overlap", 0.5, 0.8, 1.0, "",
                             "gradient reduction hidden under backward"),
    "tp_overlap": assumption("tp_overlap", 0.0, 0.2, 0.5, "", "tensor-parallel collectives hidden "
                             "(async/collective matmul)"),
    "ep_overlap": assumption("ep_overlap", 0.0, 0.3, 0.6, "",
                             "expert all-to-all hidden (dual-batch overlap)"),
    "cp_overlap": assumption("cp_overlap", 0.5, 0.8, 1.0, "", "ring-attention KV exchange hidden"),
    "pp_overlap": assumption("pp_overlap", 0.0, 0.2, 0.5, "", "pipeline sends hidden"),
    "usable_hbm": assumption("usable_hbm", 0.85, 0.9, 0.95, "",
                             "HBM usable after runtime reserve and fragmentation"),
    "step_latency": assumption("step_latency", 1e-6, 2e-6, 5e-6, "s", "software and link latency "
                               "per collective step (launch, synchronisation)"),
    "hop_latency": assumption("hop_latency", 2e-7, 5e-7, 1e-6, "s",
                              "latency per switch or forwarding chip"),
    "scaleout_latency": assumption("scaleout_latency", 5e-6, 1e-5, 2e-5, "s",
                                   "latency per scale-out step"),
}

def compute_seconds(flops: float, attention_flops: float, chips: int,
                     v: dict[str, float], gemm_factor: float = 1.0) -> float:
    """Seconds of ``flops`` (FLOP) of which ``attention_flops`` run at
    ``v["attention_peak_flops"]`` (FLOP/s per chip; the GEMM peak ``v["peak_flops"]`` when
    absent) and the rest at ``v["peak_flops"]``, on ``chips`` chips at ``v["mfu"]``; at a
    4-bit precision the GEMM peak is scaled by ``v["fp4_gemm_efficiency"]`` (``fp4fit``);
    ``gemm_factor`` scales the GEMMs' time (their rows, ``stepshape.gemm_rows_factor``)."""
    peak = v["peak_flops"] * v.get("fp4_gemm_efficiency", 1.0)
    attn_peak = v.get("attention_peak_flops", peak)
    return ((flops - attention_flops) * gemm_factor / peak
            + attention_flops / attn_peak) / (chips * mfu_of(v))


def mfu_of(v: dict[str, float]) -> float:
    """``mfu`` x ``mfu_stack_ratio`` (ROCm stacks, :mod:`~trnkb.workload.stepshape`)."""
    return v["mfu"] * v.get("mfu_stack_ratio", 1.0)


def central_values(system: System, precision: str,
                   overrides: dict[str, Input] | None = None,
                   attention_precision: str | None = None) -> dict[str, Input]:
    """Every input of a training run: the system's, the assumptions, then the caller's overrides.

    ``attention_precision`` (when it differs from ``precision``) adds ``attention_peak_flops``,
    the system's peak at that precision, at which the attention FLOPs run. A 4-bit
    ``precision`` adds ``fp4_gemm_efficiency`` (:mod:`~trnkb.workload.fp4fit`)."""
    inputs = {**system.inputs(precision), **TRAIN_ASSUMPTIONS,
              **shape_inputs(system.vendor, system.chip, precision),
              **format_inputs(precision, system.vendor)}
    if attention_precision and attention_precision != precision:
        inputs["attention_peak_flops"] = replace(system.peak_input(attention_precision),
                                                 name="attention_peak_flops")
    inputs.update(overrides or {})
    return inputs


def eval_seconds(eval_tokens: float, forward_flops_per_token: float,
                  attention_flops_per_token: float, chips: int, v: dict[str, float],
                  gemm_factor: float = 1.0) -> float:
    """Seconds of forward-only evaluation: ``eval_tokens`` (tokens) x
    ``forward_flops_per_token`` (FLOP/token, of which ``attention_flops_per_token`` at the
    attention peak) / (``chips`` x peak (FLOP/s per chip) x ``mfu``)."""
    return compute_seconds(eval_tokens * forward_flops_per_token,
                            eval_tokens * attention_flops_per_token, chips, v, gemm_factor)
