"""Decode-GEMM floor and weight-streaming rate on ROCm, fitted to AMD's tuned kernel tables.

aiter (the kernel library SGLang and vLLM call on AMD GPUs with ``SGLANG_USE_AITER=1`` /
``VLLM_ROCM_USE_AITER=1``) dispatches each FP8 block-scale GEMM by ``(gfx, cu_num, M, N,
K)`` from a tuned table whose rows record the winning kernel's measured time ``us``
(``aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv``: DeepSeek-V3 shapes,
tuned on the GPU, ROCm/aiter at e4048607, 2026-08-22; gfx942 rows with cu_num 304 are
MI300X/MI325X, gfx950 rows with cu_num 256 MI350X/MI355X). :data:`POINTS` keeps, per arch
and ``(N, K)``, the median ``us`` over the rows with ``M <= 32`` (decode batches; the rows
differ by a few percent across those M) and how many rows that median is of.

Fit, per arch: ``t = kernel_overhead + N x K bytes (fp8 weights) / rate``, the form
:mod:`~trnkb.workload.stepcost` charges (a floor per kernel of the layer's chain plus the
weights over ``HBM x hbm_efficiency``), least squares on relative time. gfx942: 3.67 us and
2.56 TB/s over 12 shapes (rms residual 34%, max 59%); gfx950: 3.69 us and 4.56 TB/s over 33
(rms 39%, max 80%). The largest residuals are the K = 7168 shapes with small N (kv_a, q_a
projections at TP 8: 8-23 us for 0.5-4 MB, split-K limited), which the line charges too
little.

:func:`rocm_decode_inputs` turns the fit into the step model's inputs for an AMD chip:
``hbm_efficiency`` = rate / the chip's HBM bandwidth (MI300X 0.48, MI325X 0.43, MI355X
0.57), range x(1 -+ rms residual); ``kernel_overhead`` central the fitted floor, range the
NVIDIA points' ends (:mod:`~trnkb.workload.kernelfit`). Nothing here is fitted to an
end-to-end run.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from trnkb.workload.ranges import Input

SOURCE = ("ROCm/aiter aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv at "
          "e4048607 (2026-08-22), tuned FP8 block-scale GEMM times, M <= 32")

# (gfx, N, K, median us over the rows with M <= 32, rows)
POINTS = (
    ("gfx942", 256, 7168, 10.82, 2), ("gfx942", 512, 7168, 11.52, 2),
    ("gfx942", 576, 7168, 11.43, 2), ("gfx942", 1536, 7168, 11.89, 2),
    ("gfx942", 2112, 7168, 12.34, 2), ("gfx942", 3072, 1536, 6.71, 6),
    ("gfx942", 4096, 512, 3.57, 4), ("gfx942", 4608, 7168, 15.84, 2),
    ("gfx942", 7168, 256, 3.34, 2), ("gfx942", 7168, 2048, 8.11, 5),
    ("gfx942", 7168, 2304, 9.02, 2), ("gfx942", 8192, 1536, 7.52, 2),
    ("gfx950", 64, 7168, 13.80, 2), ("gfx950", 128, 7168, 5.67, 7),
    ("gfx950", 512, 7168, 22.25, 6), ("gfx950", 576, 7168, 8.87, 2),
    ("gfx950", 1024, 7168, 22.81, 6), ("gfx950", 1536, 7168, 9.65, 2),
    ("gfx950", 2112, 7168, 22.44, 6), ("gfx950", 2240, 7168, 22.42, 6),
    ("gfx950", 3072, 1536, 6.55, 6), ("gfx950", 4096, 512, 3.36, 6),
    ("gfx950", 4096, 7168, 22.75, 6), ("gfx950", 4608, 7168, 22.74, 6),
    ("gfx950", 6144, 1536, 6.42, 7), ("gfx950", 7168, 256, 2.92, 6),
    ("gfx950", 7168, 512, 4.10, 6), ("gfx950", 7168, 2048, 8.24, 6),
    ("gfx950", 7168, 2304, 8.81, 6), ("gfx950", 7168, 4096, 10.00, 7),
    ("gfx950", 7168, 4608, 12.69, 7), ("gfx950", 7168, 16384, 50.68, 6),
    ("gfx950", 7168, 18432, 57.31, 6), ("gfx950", 8192, 512, 3.92, 21),
    ("gfx950", 8192, 1536, 6.33, 7), ("gfx950", 9216, 7168, 19.33, 7),
    ("gfx950", 11264, 1536, 6.58, 6), ("gfx950", 12288, 1536, 7.76, 6),
    ("gfx950", 14336, 1536, 8.09, 6), ("gfx950", 16384, 512, 4.68, 6),
    ("gfx950", 20480, 1536, 8.80, 6), ("gfx950", 24576, 1536, 9.45, 6),
    ("gfx950", 32768, 512, 5.33, 6), ("gfx950", 32768, 1536, 11.15, 6),
    ("gfx950", 36864, 7168, 52.32, 6),
)

# the chips of each arch the tables were tuned on (cu_num 304: MI300X/MI325X; 256: MI35x)
ARCH = {"mi300x": "gfx942", "mi325x": "gfx942", "mi350x": "gfx950", "mi355x": "gfx950"}


@functools.cache
def fit(gfx: str) -> dict[str, float]:
    """``{"kernel_overhead": s, "rate": B/s, "rms_residual", "max_residual", "points"}`` of
    ``t = kernel_overhead + N x K / rate`` over :data:`POINTS` of ``gfx`` (least squares on
    relative time; residuals model / measured - 1)."""
    pts = [(n * k, us * 1e-6) for g, n, k, us, _ in POINTS if g == gfx]
    if not pts:
        raise KeyError(f"no tuned GEMM points for {gfx}")
    x = np.array([p[0] for p in pts], float)
    y = np.array([p[1] for p in pts], float)
    A = np.vstack([1 / y, x / y]).T
    (a, inv_rate), *_ = np.linalg.lstsq(A, np.ones_like(y), rcond=None)
    rel = (a + x * inv_rate) / y - 1
    return {"kernel_overhead": float(a), "rate": float(1 / inv_rate),
            "rms_residual": float(math.sqrt(float(np.mean(rel ** 2)))),
            "max_residual": float(np.max(np.abs(rel))), "points": float(len(pts))}


def rocm_decode_inputs(chip: str, hbm_bandwidth: float,
                       kernel_overhead: Input | None = None) -> dict[str, Input]:
    """``hbm_efficiency`` (and, given the NVIDIA-fitted ``kernel_overhead`` input, its ROCm
    central) for an AMD ``chip`` of ``hbm_bandwidth`` B/s; ``{}`` for a chip of no tuned arch."""
    gfx = ARCH.get(chip)
    if gfx is None or not hbm_bandwidth > 0:
        return {}
    f = fit(gfx)
    e = min(f["rate"] / hbm_bandwidth, 1.0)
    r = f["rms_residual"]
    basis = (f"fit of t = floor + N x K / rate to {SOURCE} ({gfx}, {int(f['points'])} "
             f"DeepSeek-V3 shapes): floor {f['kernel_overhead'] * 1e6:.2f} us, rate "
             f"{f['rate'] / 1e12:.2f} TB/s, rms residual {r:.0%}, max "
             f"{f['max_residual']:.0%} (rocmfit)")
    out = {"hbm_efficiency": Input("hbm_efficiency", e * (1 - r), e, min(e * (1 + r), 1.0),
                                   "", "fitted",
                                   f"{basis}: {f['rate'] / 1e9:,.0f} of "
                                   f"{hbm_bandwidth / 1e9:,.0f} GB/s HBM, range x(1 -+ rms)")}
    if kernel_overhead is not None:
        k = f["kernel_overhead"]
        out["kernel_overhead"] = Input("kernel_overhead", min(kernel_overhead.lo, k), k,
                                       max(kernel_overhead.hi, k), "s", "fitted",
                                       f"{basis}; range the NVIDIA points' ends (kernelfit)")
    return out
