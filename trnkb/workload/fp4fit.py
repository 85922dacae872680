"""4-bit GEMMs against 8-bit ones: the fraction of its (2x higher) peak an FP4 GEMM reaches,
relative to the fraction an FP8 GEMM of the same shape reaches.

Every efficiency the workload layer holds for GEMMs (``mfu``, the NVIDIA and AMD
``gemm_efficiency`` fits of :mod:`~trnkb.workload.gemmfit`) was read on 16- or 8-bit GEMMs;
charging an FP4 GEMM the same fraction of the FP4 peak over-credits it. ``fp4_gemm_efficiency``
is the ratio of the two fractions, per vendor (its kernels); training and the serving
simulator multiply the GEMM efficiency by it when the compute precision is a 4-bit one
(:data:`FORMATS`).

NVIDIA points (:data:`POINTS`): vLLM's CUTLASS kernels on one B200, the same shape
(Llama-3.1-8B QKV projection, M = 16,384, N = 6,144, K = 4,096: compute-bound), from the
tables of two pull requests (``benchmarks/kernels/bench_nvfp4_gemm.py`` / ``bench_fp8_gemm.py``):

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
One shape on one chip: a transfer to other Blackwell parts is an estimate.

AMD (:data:`AMD_SOURCE`): aiter, the kernel library SGLang and vLLM call on ROCm, records
for each tuned GEMM the winner's time and TFLOP/s on the GPU (gfx950, 256 CUs: MI355X). Its
MXFP4 table (``a4w4_blockscale_tuned_gemm.csv`` and the DeepSeek-V3 one, per-1x32 scales)
and its FP8 block-scale table (``a8w8_blockscale_tuned_gemm.csv`` and
``a8w8_blockscale_tuned_gemm_ds_v3.csv``, 1x128x128 scales) share 61 shapes with M >= 4096
(compute-bound; M 4096-65536, N 512-32768, K 512-18432); against MI355X's dense peaks (MXFP4
10, FP8 5 PFLOP/s, ``rocm-blog-matrix-cores``) each shape gives one ratio. Fit: central the
median (1.11), range the quartiles (0.79-1.31); the 10th-90th percentiles and the ends are
reported as the residual. aiter's MXFP4 kernels reach a higher fraction of their peak than
its FP8 block-scale ones (up to 5.47 of 10 PFLOP/s against 2.31 of 5), the opposite of
CUTLASS on B200: the factor is per vendor. The FP8 baseline the AMD ``gemm_efficiency`` is
read on is hipBLASLt's per-tensor FP8 (:func:`~trnkb.workload.gemmfit.rocm_inputs`); the
ratio here is block-scaled FP8 in the same library as the MXFP4 kernels, so it is an
estimate of the per-tensor ratio. AMD's fused-MoE fit (:mod:`~trnkb.workload.rocmfit`) is
measured at FP4 already and is not scaled.

Other vendors (Trainium3, TPU, Maia, MTIA, Ascend with a 4-bit peak): no operator data; the
NVIDIA fit's central with the range stretched to the AMD central (an estimate).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from trnkb.workload.ranges import Input

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


# AMD: aiter at ROCm/aiter e4048607 (2026-08-22); gfx950 rows with cu_num 256, M >= 4096
AMD_SOURCE = ("ROCm/aiter aiter/configs/a4w4_blockscale_tuned_gemm.csv, "
              "model_configs/dsv3_a4w4_blockscale_tuned_gemm.csv (MXFP4), "
              "a8w8_blockscale_tuned_gemm.csv and "
              "model_configs/a8w8_blockscale_tuned_gemm_ds_v3.csv "
              "(FP8 block-scale) at e4048607, gfx950 (MI355X), shapes in both with M >= 4096")
MI355X_FP4_PEAK = 10000.0  # TFLOP/s dense MXFP4 (specs: rocm-blog-matrix-cores)
MI355X_FP8_PEAK = 5000.0
AMD_M_MIN = 4096
# (M, N, K, MXFP4 TFLOP/s, FP8 block-scale TFLOP/s) of the winners, as the tables record them
AMD_POINTS = (
    (4096, 512, 7168, 1101.12, 781.98), (4096, 1536, 7168, 2684.11, 1043.64),
    (4096, 3072, 1536, 1347.96, 915.13), (4096, 3072, 6144, 3475.27, 1210.54),
    (4096, 4608, 7168, 2063.05, 1562.38), (4096, 7168, 2048, 1551.04, 1000.51),
    (4096, 7168, 2304, 1673.12, 1285.03), (4096, 7168, 4608, 3591.41, 1429.82),
    (4096, 7168, 16384, 4878.74, 1845.16), (4096, 7168, 18432, 4948.02, 1228.04),
    (4096, 9216, 7168, 3998.13, 1827.38), (4096, 12288, 1536, 2703.08, 1014.76),
    (4096, 16384, 512, 1500.31, 661.13), (4096, 24576, 1536, 2913.7, 1094.15),
    (4096, 32768, 512, 1519.61, 663.58), (8192, 512, 7168, 1616.51, 1049.89),
    (8192, 1536, 7168, 3688.48, 1187.35), (8192, 3072, 1536, 1538.32, 939.12),
    (8192, 3072, 6144, 3593.84, 1375.08), (8192, 4608, 7168, 2375.86, 1848.52),
    (8192, 7168, 2048, 1769.05, 1086.21), (8192, 7168, 2304, 1863.89, 1381.61),
    (8192, 7168, 4608, 3832.3, 1765.01), (8192, 7168, 16384, 5110.94, 2185.35),
    (8192, 7168, 18432, 5165.16, 2177.75), (8192, 9216, 7168, 4577.72, 2060.24),
    (8192, 12288, 1536, 2889.03, 1082.14), (8192, 16384, 512, 1586.57, 735.79),
    (8192, 24576, 1536, 2963.59, 1115.98), (8192, 32768, 512, 1590.98, 744.92),
    (16384, 512, 7168, 1989.53, 1209.81), (16384, 1536, 7168, 3829.41, 1405.71),
    (16384, 3072, 1536, 1583.34, 994.03), (16384, 3072, 6144, 4356.92, 1494.03),
    (16384, 4608, 7168, 2382.64, 2079.01), (16384, 7168, 2048, 1785.31, 1141.16),
    (16384, 7168, 2304, 1872.91, 1466.22), (16384, 7168, 4608, 4401.23, 1931.07),
    (16384, 7168, 16384, 5468.86, 2286.68), (16384, 7168, 18432, 5469.79, 2305.82),
    (16384, 9216, 7168, 4796.91, 2103.81), (16384, 12288, 1536, 2990.1, 978.89),
    (16384, 16384, 512, 1758.67, 778.04), (16384, 24576, 1536, 3092.73, 1122.36),
    (16384, 32768, 512, 1592.37, 774.78), (20480, 512, 7168, 2070.64, 1101.89),
    (20480, 1536, 7168, 2258.82, 1525.79), (20480, 3072, 1536, 1632.48, 1034.3),
    (20480, 4608, 7168, 2363.08, 1933.79), (20480, 7168, 2048, 1803.17, 1144.97),
    (20480, 7168, 2304, 1905.33, 1529.13), (32768, 1536, 7168, 4450.46, 1875.95),
    (32768, 2112, 7168, 3385.88, 1854.76), (32768, 3072, 6144, 4532.72, 1556.91),
    (32768, 7168, 16384, 5439.73, 2278.17), (32768, 7168, 18432, 5457.63, 2313.78),
    (32768, 12288, 1536, 3090.36, 1122.32), (32768, 16384, 512, 1722.64, 788.96),
    (32768, 24576, 1536, 3088.58, 1128.65), (32768, 32768, 512, 1650.29, 793.74),
    (65536, 2112, 7168, 3447.0, 1891.71),
)


@functools.cache
def fit() -> dict[str, float]:
    """``{"low", "central", "high", "rms_residual", "max_residual", "points"}`` of
    ``fp4_gemm_efficiency`` on NVIDIA (dimensionless; residuals relative to the central)."""
    r = [(f4 / FP4_PEAK) / (f8 / FP8_PEAK) for _, f4, f8 in POINTS]
    mid = sum(r) / len(r)
    rel = [x / mid - 1 for x in r]
    return {"low": min(r), "central": mid, "high": max(r),
            "rms_residual": math.sqrt(sum(e * e for e in rel) / len(rel)),
            "max_residual": max(abs(e) for e in rel), "points": float(len(r))}


@functools.cache
def amd_fit() -> dict[str, float]:
    """``{"low", "central", "high", "p10", "p90", "min", "max", "points"}``: the median and
    quartiles (and 10th/90th percentiles, ends) of the per-shape ratios of :data:`AMD_POINTS`,
    (MXFP4 TFLOP/s / 10,000) / (FP8 TFLOP/s / 5,000)."""
    p = np.array(AMD_POINTS, float)
    r = (p[:, 3] / MI355X_FP4_PEAK) / (p[:, 4] / MI355X_FP8_PEAK)
    q = np.percentile(r, [10, 25, 50, 75, 90])
    return {"low": float(q[1]), "central": float(q[2]), "high": float(q[3]),
            "p10": float(q[0]), "p90": float(q[4]), "min": float(r.min()),
            "max": float(r.max()), "points": float(len(r))}


def factor_input(vendor: str = "nvidia") -> Input:
    """The ``fp4_gemm_efficiency`` input of a chip of ``vendor`` (see the module docstring)."""
    f, a = fit(), amd_fit()
    nv = (f"{SOURCE}; {int(f['points'])} pairings (with/without activation quantization, two "
          f"FP8 scalings) against 9 and 4.5 PFLOP/s: {f['low']:.3f}-{f['high']:.3f}, mean "
          f"{f['central']:.3f} (rms residual {f['rms_residual']:.1%}, max "
          f"{f['max_residual']:.1%})")
    amd = (f"{AMD_SOURCE}: {int(a['points'])} shapes against 10 and 5 PFLOP/s, median "
           f"{a['central']:.3f}, quartiles {a['low']:.3f}-{a['high']:.3f} (10th-90th "
           f"percentile {a['p10']:.2f}-{a['p90']:.2f}, ends {a['min']:.2f}-{a['max']:.2f})")
    head = "fraction of peak of a 4-bit GEMM over an 8-bit one's: "
    v = vendor.lower()
    if v == "nvidia":
        return Input("fp4_gemm_efficiency", f["low"], f["central"], f["high"], "", "fitted",
                     head + nv + "; one shape, an estimate for other Blackwell parts (fp4fit)")
    if v == "amd":
        return Input("fp4_gemm_efficiency", a["low"], a["central"], a["high"], "", "fitted",
                     head + amd + "; block-scaled FP8 as the baseline, an estimate for "
                     "per-tensor FP8 (fp4fit)")
    return Input("fp4_gemm_efficiency", f["low"], f["central"], a["central"], "", "fitted",
                 head + f"no operator data for {vendor}; NVIDIA's central and low end, "
                 f"AMD's central the high end ({nv}; {amd}) (fp4fit)")


def format_inputs(precision: str, vendor: str = "nvidia") -> dict[str, Input]:
    """``{"fp4_gemm_efficiency": ...}`` of a chip of ``vendor`` when ``precision`` is a 4-bit
    format, else ``{}``."""
    return {"fp4_gemm_efficiency": factor_input(vendor)} if precision in FORMATS else {}
