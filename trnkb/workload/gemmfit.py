"""GEMM efficiency against its row count M: fitted constants as data, with source and residual.

``gemm_eff(M) = gemm_efficiency x M / (M + gemm_m_half)``: a GEMM of M rows fills
``M / (M + m_half)`` of what a large one does (tile rows it leaves empty, the fixed cost of a
pass over the weights); :mod:`~trnkb.workload.stepcost` charges small-M decode GEMMs and
routed experts at their real M with it.

Fit: least squares of ``1 / utilization = a + b / M`` over compute-bound operator points
(``gemm_efficiency = 1/a``, ``gemm_m_half = b/a``), never over end-to-end runs.

* Trainium2 and Trainium3: the reference engine (``trnkb.engine.gemm``, bf16, one
  NeuronCore, K = N = 4096 and 8192, M = 256...4096; the points it calls tensor-bound),
  recorded below from trnkb commit 0a4574d. The engine is an ideal kernel (no clock
  throttling, no host gaps): its ``gemm_efficiency`` is an upper end, so only ``m_half`` is
  taken from it; the achieved fraction stays the ``gemm_efficiency`` assumption.
* NVIDIA (CUDA stacks): DeepGEMM's FP8 sweep on H800 SXM (the H100 SXM's tensor cores and
  HBM3, 1,979 TFLOP/s dense FP8, 3.35 TB/s), :data:`CUDA_POINTS`: 18 shapes, M = 64, 128,
  4096, each with DeepGEMM's TFLOP/s and its speedup over CUTLASS 3.6 (so both kernels'
  times). Fitted with the roofline the step model uses, ``max(FLOPs x (M + m_half) / (M x
  peak x e), bytes / (HBM x hbm_e))``, least squares on relative time over a grid
  (:func:`cuda_fit`: efficiency, ``m_half`` and the HBM fraction together; the small-M rows
  are memory-bound and set the last). Serving stacks (TensorRT-LLM, vLLM) run CUTLASS/cuBLAS
  kernels: the CUTLASS fit is the compute central, DeepGEMM's the fast end. The streaming
  rate's central is DeepGEMM's fit (0.67 of HBM; the small-M kernels SGLang and TensorRT-LLM
  run for DeepSeek-style blockwise FP8 are of its class), CUTLASS 3.6's (0.435) the slow end,
  the sweep's best row (0.80) the fast end: a best point as the central would charge every
  decode step at the sweep's best case. Other NVIDIA chips (Blackwell)
  take the Hopper FP8 fit: no Blackwell sweep is in the knowledge base; at a 4-bit format
  the simulator multiplies it by ``fp4_gemm_efficiency`` (:mod:`~trnkb.workload.fp4fit`).
* AMD (ROCm stacks): AMD's own hipBLASLt measurements (:data:`ROCM_MAF`, :data:`ROCM_TAF`):
  the Max-Achievable FLOP/s of MI300X and MI325X (the best of a size sweep) and the
  Typical Attained FLOP/s of MI325X (FLOP-weighted over 10 DeepSeek-V3 GEMM shapes, M = 32
  and 32,768). :func:`rocm_inputs`: the chip's MAF fraction of peak is the fast end, times
  TAF/MAF (what workload shapes attain) the central; chips without a MAF row take MI325X's
  fractions. ``gemm_m_half`` stays the tile assumption (TAF mixes its two M values).
* Other chips: no operator-level GEMM sweep in the knowledge base yet (public ones exist for
  TPU v7 through vendor kernel libraries; they are the rows to add), so ``gemm_m_half`` is
  an assumption: CUTLASS and the TPU MXU tile at 64-256 rows.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from trnkb.workload.ranges import Input, assumption

# (chip, M, K = N, utilization of peak) from trnkb.engine.gemm(core, M, K, N, "bf16",
# execute=False).utilization at trnkb commit 0a4574d (tensor-bound points only)
ENGINE_POINTS = (
    ("trainium2", 512, 4096, 0.9678),
    ("trainium2", 768, 4096, 0.9776),
    ("trainium2", 1024, 4096, 0.9826),
    ("trainium2", 1536, 4096, 0.9876),
    ("trainium2", 2048, 4096, 0.9901),
    ("trainium2", 3072, 4096, 0.9927),
    ("trainium2", 4096, 4096, 0.9939),
    ("trainium2", 384, 8192, 0.9745),
    ("trainium2", 512, 8192, 0.9760),
    ("trainium2", 768, 8192, 0.9379),
    ("trainium2", 1024, 8192, 0.9927),
    ("trainium2", 1536, 8192, 0.9937),
    ("trainium2", 2048, 8192, 0.9876),
    ("trainium2", 3072, 8192, 0.9881),
    ("trainium2", 4096, 8192, 0.9990),
    ("trainium3", 384, 4096, 0.8868),
    ("trainium3", 512, 4096, 0.9126),
    ("trainium3", 768, 4096, 0.9400),
    ("trainium3", 1024, 4096, 0.9543),
    ("trainium3", 1536, 4096, 0.9691),
    ("trainium3", 2048, 4096, 0.9766),
    ("trainium3", 3072, 4096, 0.9843),
    ("trainium3", 4096, 4096, 0.9882),
    ("trainium3", 256, 8192, 0.9850),
    ("trainium3", 384, 8192, 0.9523),
    ("trainium3", 512, 8192, 0.9948),
    ("trainium3", 768, 8192, 0.9966),
    ("trainium3", 1024, 8192, 0.9974),
    ("trainium3", 1536, 8192, 0.9983),
    ("trainium3", 2048, 8192, 0.9985),
    ("trainium3", 3072, 8192, 0.9990),
    ("trainium3", 4096, 8192, 0.9991),
)


# Weight streaming of decode GEMVs on the reference engine: (chip, M, K, N, bytes per second
# per NeuronCore = operand bytes / trnkb.engine.gemm(...).seconds, NeuronCores per chip), all
# DMA-bound, at trnkb commit 0a4574d.
ENGINE_STREAM = (
    ("trainium2", 1, 8192, 8192, 344.6e9, 8), ("trainium2", 1, 8192, 28672, 353.8e9, 8),
    ("trainium2", 8, 8192, 8192, 345.2e9, 8),
    ("trainium3", 1, 8192, 8192, 500.3e9, 8), ("trainium3", 1, 8192, 28672, 514.9e9, 8),
    ("trainium3", 8, 8192, 8192, 501.1e9, 8),
)


def hbm_efficiency_input(chip: str, hbm_bandwidth: float) -> Input | None:
    """``hbm_efficiency`` from the engine's weight streaming (per-core rate x cores over the
    chip's HBM bandwidth, mean of :data:`ENGINE_STREAM`), or None where the engine does not
    model the chip. The engine streams one GEMM alone, with no other traffic: its fraction
    is the high end and the central; the low end stays the assumption's 0.5."""
    pts = [r * cores for c, _, _, _, r, cores in ENGINE_STREAM if c == chip]
    if not pts or not hbm_bandwidth > 0:
        return None
    e = min(float(np.mean(pts)) / hbm_bandwidth, 1.0)
    spread = (max(pts) - min(pts)) / float(np.mean(pts))
    return Input("hbm_efficiency", min(0.5, e), e, e, "", "fitted",
                 f"trnkb.engine.gemm decode GEMVs on {chip} (M 1-8, K 8192, N 8192-28672, "
                 f"{len(pts)} points, spread {spread:.1%}): {np.mean(pts) / 1e9:,.0f} GB/s of "
                 f"{hbm_bandwidth / 1e9:,.0f} GB/s HBM; low end 0.5 for contention the engine "
                 "does not model (gemmfit)")


def fit(chip: str) -> dict[str, float]:
    """``{"gemm_efficiency", "gemm_m_half", "rms_residual", "max_residual", "points"}``
    of the engine points of ``chip`` (residuals relative, on utilization)."""
    pts = [(m, u) for c, m, _, u in ENGINE_POINTS if c == chip]
    if not pts:
        raise KeyError(f"no GEMM sweep points for {chip}")
    M = np.array([p[0] for p in pts], float)
    u = np.array([p[1] for p in pts], float)
    A = np.vstack([np.ones_like(M), 1 / M]).T
    (a, b), *_ = np.linalg.lstsq(A, 1 / u, rcond=None)
    e, h = 1 / a, b / a
    rel = e * M / (M + h) / u - 1
    return {"gemm_efficiency": float(e), "gemm_m_half": float(h),
            "rms_residual": float(math.sqrt(float(np.mean(rel ** 2)))),
            "max_residual": float(np.max(np.abs(rel))), "points": float(len(pts))}


def m_half_input(chip: str) -> Input:
    """The ``gemm_m_half`` input of ``chip``: the engine fit (range +-50%) where the engine
    models the chip, else the tile assumption."""
    if any(c == chip for c, *_ in ENGINE_POINTS):
        f = fit(chip)
        h = f["gemm_m_half"]
        return Input("gemm_m_half", 0.5 * h, h, 2.0 * h, "", "fitted",
                     f"fit of trnkb.engine.gemm on {chip} ({int(f['points'])} tensor-bound "
                     f"points, bf16, K = N = 4096 and 8192): m_half {h:.1f} rows, rms "
                     f"residual {f['rms_residual']:.1%}, max {f['max_residual']:.1%}; range "
                     "x0.5 to x2 for other shapes and kernels (gemmfit module)")
    return assumption("gemm_m_half", 32.0, 64.0, 128.0, "",
                      "rows at which a GEMM reaches half its large-M efficiency; no operator "
                      "sweep of this chip in the knowledge base: 64-256-row MMA tiles "
                      "(CUTLASS, TPU MXU 128/256) put it at 32-128")


# DeepGEMM README.md "Normal GEMMs for dense models" at deepseek-ai/DeepGEMM commit 55ab91f
# (2025-03-25): H800 SXM, FP8 e4m3 inputs, BF16 output; (M, N, K, DeepGEMM TFLOP/s, speedup
# over CUTLASS 3.6)
CUDA_POINTS = (
    (64, 2112, 7168, 206, 2.7), (64, 24576, 1536, 289, 1.7), (64, 32768, 512, 219, 1.8),
    (64, 7168, 16384, 336, 1.4), (64, 4096, 7168, 287, 1.4), (64, 7168, 2048, 295, 1.7),
    (128, 2112, 7168, 352, 2.4), (128, 24576, 1536, 535, 1.6), (128, 32768, 512, 358, 1.5),
    (128, 7168, 16384, 645, 1.4), (128, 4096, 7168, 533, 2.0), (128, 7168, 2048, 510, 1.7),
    (4096, 2112, 7168, 1009, 1.1), (4096, 24576, 1536, 1125, 1.1),
    (4096, 32768, 512, 751, 1.1), (4096, 7168, 16384, 1426, 1.3),
    (4096, 4096, 7168, 1265, 1.2), (4096, 7168, 2048, 1168, 1.2),
)
_H800_FP8 = 1979e12  # FLOP/s dense (the H100 SXM's tensor cores)
_H800_HBM = 3.35e12  # B/s
_CUDA_SOURCE = ("deepseek-ai/DeepGEMM README.md at 55ab91f (2025-03-25), 'Normal GEMMs for "
                "dense models', H800 SXM FP8")


@functools.cache
def cuda_fit(kernel: str = "cutlass") -> dict[str, float]:
    """``{"gemm_efficiency", "gemm_m_half", "hbm_efficiency", "rms_residual", "max_residual",
    "points"}``: the roofline of the step model fitted to :data:`CUDA_POINTS` for
    ``kernel`` ``cutlass`` (CUTLASS 3.6: DeepGEMM's time x its speedup) or ``deepgemm``.
    Efficiency, ``m_half`` and the HBM fraction are fitted together by grid (0.30-0.99 by
    0.01, 0-800 rows by 4, 0.30-0.95 by 0.005, searched every 0.05 and then around the
    best), least squares on the relative time: the
    small-M points are memory-bound, so they set the HBM fraction and the large-M points the
    efficiency. ``hbm_best`` is the sweep's highest streaming rate (DeepGEMM's GB/s over
    3.35 TB/s), the fast end."""
    if kernel not in ("cutlass", "deepgemm"):
        raise KeyError(f"no GEMM sweep for kernel {kernel!r} (cutlass, deepgemm)")
    p = np.array(CUDA_POINTS, float)
    m, n, k, tflops, speedup = p.T
    flops = 2 * m * n * k
    nbytes = m * k + n * k + 2 * m * n  # fp8 operands, bf16 output
    t_deep = flops / (tflops * 1e12)
    best = float(np.max(nbytes / t_deep)) / _H800_HBM
    t = t_deep * (speedup if kernel == "cutlass" else 1.0)
    e = np.arange(0.30, 0.99, 0.01)[:, None, None]
    h = np.arange(0.0, 800.0, 4.0)[None, :, None]
    compute = flops * (m + h) / (m * _H800_FP8 * e) / t  # relative to the measured time
    memory = nbytes / _H800_HBM / t

    def grid(he: float) -> tuple[float, float, int, int, np.ndarray]:
        """The best (efficiency, m_half) at one HBM fraction."""
        rel = np.maximum(compute, memory / he) - 1
        rms = np.sqrt(np.mean(rel ** 2, axis=-1))
        i, j = np.unravel_index(int(np.argmin(rms)), rms.shape)
        return float(rms[i, j]), float(he), int(i), int(j), rel[i, j]

    # the HBM fractions 0.30-0.95 by 0.005: every tenth first, then the steps around the best
    fractions = [float(x) for x in np.arange(0.30, 0.95, 0.005)]
    coarse = min(range(0, len(fractions), 10), key=lambda k: grid(fractions[k])[0])
    fit_ = min((grid(fractions[k]) for k in range(max(coarse - 10, 0),
                                                  min(coarse + 11, len(fractions)))),
               key=lambda f: f[0])
    r, he, bi, bj, rel = fit_
    return {"gemm_efficiency": float(e[bi, 0, 0]), "gemm_m_half": float(h[0, bj, 0]),
            "hbm_efficiency": he, "hbm_best": best, "rms_residual": r,
            "max_residual": float(np.max(np.abs(rel))), "points": float(len(t))}


def cuda_inputs() -> dict[str, Input]:
    """``gemm_efficiency`` and ``gemm_m_half`` for a chip of a CUDA stack: the CUTLASS fit
    central, DeepGEMM's fit the fast end, the slow end 0.8 x CUTLASS (other GPUs, power-
    limited clocks; see the module docstring); ``hbm_efficiency`` central DeepGEMM's fitted
    streaming rate, CUTLASS's the slow end, the sweep's best point the fast end."""
    c, d = cuda_fit("cutlass"), cuda_fit("deepgemm")
    basis = (f"fit to {_CUDA_SOURCE} ({int(c['points'])} shapes, M 64-4096): CUTLASS 3.6 "
             f"efficiency {c['gemm_efficiency']:.3f}, m_half {c['gemm_m_half']:.0f} rows "
             f"(rms residual {c['rms_residual']:.0%}, max {c['max_residual']:.0%}); DeepGEMM "
             f"{d['gemm_efficiency']:.3f}, {d['gemm_m_half']:.0f} rows (rms "
             f"{d['rms_residual']:.0%}); Hopper FP8 applied to every NVIDIA chip (gemmfit)")
    e_c, e_d = c["gemm_efficiency"], d["gemm_efficiency"]
    h_c, h_d = c["gemm_m_half"], d["gemm_m_half"]
    he_c, he_d, best = c["hbm_efficiency"], d["hbm_efficiency"], d["hbm_best"]
    return {"gemm_efficiency": Input("gemm_efficiency", 0.8 * e_c, e_c, max(e_d, e_c), "",
                                     "fitted", basis),
            "gemm_m_half": Input("gemm_m_half", min(h_d, h_c), h_c, 1.5 * h_c, "", "fitted",
                                 basis),
            "gemm_m_min": Input("gemm_m_min", 64.0, 64.0, 64.0, "", "fitted",
                                f"{_CUDA_SOURCE}: the sweep's smallest M; below it the "
                                "m_half waste ramps to 0 (GEMV kernels; no operator data)"),
            "hbm_efficiency": Input("hbm_efficiency", min(he_c, he_d), he_d, max(best, he_d),
                                    "", "fitted",
                                    f"{_CUDA_SOURCE}: streaming rate fitted with the roofline "
                                    f"(the small-M points are memory-bound): DeepGEMM "
                                    f"{he_d:.3f} of 3,350 GB/s central (the kernel class "
                                    f"serving stacks run at small M), CUTLASS 3.6 {he_c:.3f} "
                                    f"the slow end, the sweep's best point {best:.3f} (M = 64, "
                                    "K = 16,384) the fast end (gemmfit)")}


# AMD Max-Achievable FLOP/s, hipBLASLt, one GPU: (chip, format) -> (TFLOP/s measured, TFLOP/s
# dense peak, source). MI300X: ROCm/rocm-blogs measuring-max-achievable-flops-part2 README
# (Table 1; 750 W, trig_float inputs, Feb 2025). MI325X: ROCm/rocm-blogs taf-blog README
# (footnote 1; 1,000 W, normal-distribution inputs, Sep 2026: the MAF the TAF is read against)
ROCM_MAF = {
    ("mi300x", "bf16"): (708.0, 1307.4, "rocm-blogs MAF part 2, Table 1"),
    ("mi300x", "fp8"): (1273.0, 2614.9, "rocm-blogs MAF part 2, Table 1"),
    ("mi325x", "bf16"): (831.40, 1300.0, "rocm-blogs TAF blog, footnote 1"),
    ("mi325x", "fp8"): (1408.06, 2610.0, "rocm-blogs TAF blog, footnote 1"),
}
# AMD Typical Attained FLOP/s, MI325X (rocm-blogs TAF blog, Table 1): format -> TFLOP/s
ROCM_TAF = {"bf16": 616.0, "fp8": 1143.0}


def rocm_inputs(chip: str, precision: str) -> dict[str, Input]:
    """``gemm_efficiency`` for a chip of a ROCm stack computing at ``precision`` (see the
    module docstring): fast end the chip's MAF / peak (MI325X's where the chip has no
    row), central that times TAF / MAF, slow end 0.8 x the central. Formats other than bf16
    take the fp8 rows (the narrow formats' GEMMs)."""
    fmt = "bf16" if precision in ("bf16", "fp16") else "fp8"
    own = ROCM_MAF.get((chip, fmt))
    maf, peak, where = own or ROCM_MAF[("mi325x", fmt)]
    frac = maf / peak
    ratio = ROCM_TAF[fmt] / ROCM_MAF[("mi325x", fmt)][0]
    mid = frac * ratio
    proxy = "" if own else f"MI325X, no row for {chip}; "
    basis = (f"AMD hipBLASLt measurements ({where}): {proxy}"
             f"MAF {maf:,.0f} of {peak:,.0f} TFLOP/s {fmt} = {frac:.3f}; x TAF/MAF "
             f"{ratio:.3f} (MI325X, 10 DeepSeek-V3 shapes) = {mid:.3f} central (gemmfit)")
    return {"gemm_efficiency": Input("gemm_efficiency", 0.8 * mid, mid, frac, "", "fitted",
                                     basis)}
