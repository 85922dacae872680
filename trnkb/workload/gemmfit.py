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
* Other chips: no operator-level GEMM sweep in the knowledge base yet (public ones exist for
  TPU v7 and H100/B200 through vendor kernel libraries; they are the rows to add), so
  ``gemm_m_half`` is an assumption: CUTLASS and the TPU MXU tile at 64-256 rows.
"""

from __future__ import annotations

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
