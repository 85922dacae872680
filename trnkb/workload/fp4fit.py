"""4-bit GEMMs against 8-bit ones: the fraction of its (2x higher) peak an FP4 GEMM reaches,
relative to the fraction an FP8 GEMM of the same shape reaches.

Every efficiency the workload layer holds for GEMMs (``mfu``, the NVIDIA and AMD
``gemm_efficiency`` fits of :mod:`~trnkb.workload.gemmfit`) was read on 16- or 8-bit GEMMs;
charging an FP4 GEMM the same fraction of the FP4 peak over-credits it. ``fp4_gemm_efficiency``
is the ratio of the two fractions; training and the serving simulator multiply the GEMM
efficiency by it when the compute precision is a 4-bit one (:data:`FORMATS`).

Points (:data:`POINTS`): vLLM's CUTLASS kernels on one B200, the same shape (Llama-3.1-8B
QKV projection, M = 16,384, N = 6,144, K = 4,096: compute-bound), from the tables of two
pull requests (``benchmarks/kernels/bench_nvfp4_gemm.py`` / ``bench_fp8_gemm.py``):

* NVFP4: vllm-project/vllm pull request 20646 ("Basic tuned configs for NVFP4 CUTLASS dense
  GEMM", 2025-07-08), the "Before" table: 3,038.8 TFLOP/s with activation quantization,
  3,904.3 without (the table after the PR's tuning was not read; if the tuning raised the
  large-M figure, the factor is low by that much);
* FP8: vllm-project/vllm pull request 19566 ("Further tunings for SM100 FP8 CUTLASS
  kernel"): per-tensor scales 2,225.8 with quantization, 2,544.7 without; per-channel
  weights and per-token activations 2,248.8 and 2,447.0.

Against the B200's dense peaks in the knowledge base (``klockwood-b200``, HGX 1,000 W: FP4 9
PFLOP/s, FP8 4.5 PFLOP/s), each pair (NVFP4 and FP8 both with or both without activation
quantization, FP8 in both scalings) gives one ratio: 0.676, 0.683, 0.767, 0.798. Fit: the
central is their mean, the range their extremes; the residual is the spread around the mean.
One shape on one chip: a transfer to MXFP4 (AMD MI355X dense GEMMs) and to other Blackwell
parts is an estimate. AMD's fused-MoE fit (:mod:`~trnkb.workload.rocmfit`) is measured at
FP4 already and is not scaled.
"""

from __future__ import annotations

import functools
import math

from trnkb.workload.ranges import Input

__all__ = ["FORMATS", "POINTS", "factor_input", "fit", "format_inputs"]

FORMATS = ("fp4", "mxfp4")

# (pairing, NVFP4 TFLOP/s, FP8 TFLOP/s): B200, M = 16384, N = 6144, K = 4096
POINTS = (
    ("with activation quantization, FP8 per-tensor", 3038.844961, 2225.828721),
    ("with activation quantization, FP8 per-channel/per-token", 3038.844961, 2248.795494),
    ("without quantization, FP8 per-tensor", 3904.329097, 2544.683145),
    ("without quantization, FP8 per-channel/per-token", 3904.329097, 2447.031661),
)
FP4_PEAK = 9000.0  # TFLOP/s dense, B200 HGX (specs: klockwood-b200)
FP8_PEAK = 4500.0

SOURCE = ("vllm-project/vllm pull requests 20646 (NVFP4 CUTLASS, 'Before' table) and 19566 "
          "(FP8 CUTLASS), B200, M 16384 N 6144 K 4096")


@functools.cache
def fit() -> dict[str, float]:
    """``{"low", "central", "high", "rms_residual", "max_residual", "points"}`` of
    ``fp4_gemm_efficiency`` (dimensionless; residuals relative to the central)."""
    r = [(f4 / FP4_PEAK) / (f8 / FP8_PEAK) for _, f4, f8 in POINTS]
    mid = sum(r) / len(r)
    rel = [x / mid - 1 for x in r]
    return {"low": min(r), "central": mid, "high": max(r),
            "rms_residual": math.sqrt(sum(e * e for e in rel) / len(rel)),
            "max_residual": max(abs(e) for e in rel), "points": float(len(r))}


def factor_input() -> Input:
    """The ``fp4_gemm_efficiency`` input: :func:`fit`'s low, central and high."""
    f = fit()
    return Input("fp4_gemm_efficiency", f["low"], f["central"], f["high"], "", "fitted",
                 f"fraction of peak of a 4-bit GEMM over an 8-bit one's: {SOURCE}; "
                 f"{int(f['points'])} pairings (with/without activation quantization, two FP8 "
                 f"scalings) against 9 and 4.5 PFLOP/s: {f['low']:.3f}-{f['high']:.3f}, mean "
                 f"{f['central']:.3f} (rms residual {f['rms_residual']:.1%}, max "
                 f"{f['max_residual']:.1%}); one NVIDIA shape, an estimate for MXFP4 and "
                 "other chips (fp4fit)")


def format_inputs(precision: str) -> dict[str, Input]:
    """``{"fp4_gemm_efficiency": ...}`` when ``precision`` is a 4-bit format, else ``{}``."""
    return {"fp4_gemm_efficiency": factor_input()} if precision in FORMATS else {}
