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
NVIDIA points' ends (:mod:`~trnkb.workload.kernelfit`).

Fused MoE, the same way: aiter's tuned fused-MoE tables for DeepSeek-V3 (FP8 block-scale:
``aiter/configs/model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv``; MXFP4:
``dsv3_fp4_tuned_fmoe.csv``; same commit; the shared expert fused as the 257th or 33rd,
top-k 9) record the time of a whole MoE layer at a token count. :data:`MOE_POINTS` keeps
their compute-bound rows (256 tokens and more): on gfx950 the tensor-parallel slices SGLang
and ATOM run at EP 1 (inter 256 per rank at TP 8, inter 512 at TP 4; the FP8 TP 8 rows stop
at 1,024 tokens: above that the table repeats the 1,024 row), on gfx942 the only DeepSeek-V3
rows, 33 whole experts (EP 8, FP8). :func:`moe_fit` fits the step model's form ``rate(M) =
R x M / (M + m_half)`` (``M = tokens x topk / experts`` rows per expert; least squares on
``1 / rate = a + b / M``, relative) per arch, format and, where the table has it, the
layout's inter_dim per rank: gfx950 FP8 695 TFLOP/s and 50 rows at inter 256 (3 rows, rms
4%), 913 and 72 at inter 512 (6, rms 3%); gfx950 FP4 1,221 and 54 at inter 256, 1,759 and 69
at inter 512 (8 each, rms 3%); gfx942 FP8 981 and 88 (7 rows, rms 1%). The narrower slice is
the slower one. :func:`rocm_moe_inputs` gives ``expert_gemm_efficiency`` = R / the chip's
dense peak in that format (MI355X FP8 0.14 at TP 8, FP4 0.12 at TP 8; MI300X FP8 0.38) and
``expert_gemm_m_half``, which the step model charges the routed experts with instead of the
dense GEMMs' values. Nothing here is fitted to an end-to-end run.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from trnkb.workload.ranges import Input

MOE_SOURCE = ("ROCm/aiter aiter/configs/model_configs/a8w8_blockscale_tuned_fmoe_ds_v3.csv at "
              "e4048607 (2026-08-22), tuned FP8 block-scale fused-MoE times, DeepSeek-V3")

# (gfx, format, inter_dim per rank, experts per rank incl. the fused shared one, topk,
# tokens, us); fp8 from MOE_SOURCE, fp4 (MXFP4, per-1x32 scales) from MOE_SOURCE_FP4
MOE_POINTS = (
    ("gfx942", "fp8", 2048, 33, 9, 256, 470.75), ("gfx942", "fp8", 2048, 33, 9, 512, 671.55),
    ("gfx942", "fp8", 2048, 33, 9, 1024, 1091.04),
    ("gfx942", "fp8", 2048, 33, 9, 2048, 1857.19),
    ("gfx942", "fp8", 2048, 33, 9, 4096, 3549.10),
    ("gfx942", "fp8", 2048, 33, 9, 8192, 6928.71),
    ("gfx942", "fp8", 2048, 33, 9, 16384, 13796.90),
    ("gfx950", "fp8", 256, 257, 9, 256, 249.58), ("gfx950", "fp8", 256, 257, 9, 512, 260.97),
    ("gfx950", "fp8", 256, 257, 9, 1024, 359.48),
    ("gfx950", "fp8", 512, 257, 9, 256, 515.70), ("gfx950", "fp8", 512, 257, 9, 512, 540.50),
    ("gfx950", "fp8", 512, 257, 9, 1024, 673.68), ("gfx950", "fp8", 512, 257, 9, 2048, 873.59),
    ("gfx950", "fp8", 512, 257, 9, 4096, 1294.01),
    ("gfx950", "fp8", 512, 257, 9, 8192, 2305.85),
    ("gfx950", "fp4", 256, 257, 9, 256, 145.67), ("gfx950", "fp4", 256, 257, 9, 512, 161.51),
    ("gfx950", "fp4", 256, 257, 9, 1024, 213.79), ("gfx950", "fp4", 256, 257, 9, 2048, 298.51),
    ("gfx950", "fp4", 256, 257, 9, 4096, 475.91), ("gfx950", "fp4", 256, 257, 9, 8192, 789.08),
    ("gfx950", "fp4", 256, 257, 9, 16384, 1452.87),
    ("gfx950", "fp4", 256, 257, 9, 32768, 2687.43),
    ("gfx950", "fp4", 512, 257, 9, 256, 264.07), ("gfx950", "fp4", 512, 257, 9, 512, 276.38),
    ("gfx950", "fp4", 512, 257, 9, 1024, 317.86), ("gfx950", "fp4", 512, 257, 9, 2048, 463.02),
    ("gfx950", "fp4", 512, 257, 9, 4096, 708.86),
    ("gfx950", "fp4", 512, 257, 9, 8192, 1170.29),
    ("gfx950", "fp4", 512, 257, 9, 16384, 2091.95),
    ("gfx950", "fp4", 512, 257, 9, 32768, 3785.10),
)
MOE_SOURCE_FP4 = ("ROCm/aiter aiter/configs/model_configs/dsv3_fp4_tuned_fmoe.csv at e4048607 "
                  "(2026-08-22), tuned MXFP4 fused-MoE times, DeepSeek-V3")
_D_MODEL = 7168  # DeepSeek-V3 hidden size, the tables' model_dim

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


@functools.cache
def moe_fit(gfx: str, fmt: str = "fp8", inter: int | None = None) -> dict[str, float]:
    """``{"rate": FLOP/s, "m_half": rows, "rms_residual", "max_residual", "points"}`` of
    ``rate(M) = rate x M / (M + m_half)`` over :data:`MOE_POINTS` of ``gfx`` in ``fmt``
    (``inter``: only the rows of that inter_dim per rank; FLOPs of a row ``2 x 3 x d_model x
    inter``; residuals model / measured - 1)."""
    pts = [(t * k / e, t * k * 6.0 * _D_MODEL * i / (us * 1e-6))
           for g, f, i, e, k, t, us in MOE_POINTS
           if g == gfx and f == fmt and (inter is None or i == inter)]
    if not pts:
        raise KeyError(f"no tuned fused-MoE points for {gfx} {fmt} inter {inter}")
    m = np.array([p[0] for p in pts], float)
    r = np.array([p[1] for p in pts], float)
    A = np.vstack([np.ones_like(m), 1 / m]).T * r[:, None]
    (a, b), *_ = np.linalg.lstsq(A, np.ones_like(r), rcond=None)
    rate, h = 1 / a, b / a
    rel = rate * m / (m + h) / r - 1
    return {"rate": float(rate), "m_half": float(h),
            "rms_residual": float(math.sqrt(float(np.mean(rel ** 2)))),
            "max_residual": float(np.max(np.abs(rel))), "points": float(len(pts))}


def rocm_moe_inputs(chip: str, fmt: str, peak: float,
                    inter: int | None = None) -> dict[str, Input]:
    """``expert_gemm_efficiency`` and ``expert_gemm_m_half`` of an AMD ``chip`` computing
    the experts in ``fmt`` (fp8 or fp4) at a dense ``peak`` FLOP/s; ``inter`` the experts'
    inter_dim per rank (the fit of those rows where the table has them, else of all the
    arch's rows in that format); ``{}`` for a chip or format with no tuned rows."""
    gfx = ARCH.get(chip)
    if gfx is None or not peak > 0 or not any(g == gfx and f == fmt
                                              for g, f, *_ in MOE_POINTS):
        return {}
    rows = {i for g, f, i, *_ in MOE_POINTS if g == gfx and f == fmt}
    pick = inter if inter in rows else None
    f = moe_fit(gfx, fmt, pick)
    e, h, r = min(f["rate"] / peak, 1.0), f["m_half"], f["rms_residual"]
    shape = (f"inter {pick} per rank" if pick is not None else
             "inter " + " and ".join(str(i) for i in sorted(rows)) + " per rank")
    src = MOE_SOURCE_FP4 if fmt == "fp4" else MOE_SOURCE
    basis = (f"fit of rate x M / (M + m_half) to {src} ({gfx}, {shape}, {int(f['points'])} "
             f"rows of 256+ tokens): {f['rate'] / 1e12:,.0f} TFLOP/s of "
             f"{peak / 1e12:,.0f}, m_half {h:.0f} rows, rms residual {r:.0%} (rocmfit)")
    return {"expert_gemm_efficiency": Input("expert_gemm_efficiency", 0.8 * e, e,
                                            min(1.25 * e, 1.0), "", "fitted",
                                            basis + "; range x0.8 to x1.25"),
            "expert_gemm_m_half": Input("expert_gemm_m_half", 0.5 * h, h, 2.0 * h, "",
                                        "fitted", basis + "; range x0.5 to x2")}


# Untuned FP8 block-scale GEMMs on gfx942. aiter dispatches a shape with no row for its
# (gfx, cu_num) to a default kernel; its tuned DeepSeek-V3 table has gfx942/304 rows from tag
# v0.1.13-rc2 on (none in v0.1.12.post2 and before, checked tag by tag at the ROCm/aiter
# mirror), and SGLang's rocm.Dockerfile at v0.5.9 builds aiter v0.1.11.post1
# (AITER_COMMIT_DEFAULT). The default kernels' times: InferenceX issue 863 (2026-03-05),
# DeepSeek-R1 FP8 decode trace on 8 x MI325X, TP 8, conc 64, image
# lmsysorg/sglang:v0.5.9-rocm700-mi30x; the tuned times: POINTS' table at M = 64.
# (op, calls per step, untuned avg us, tuned us at M = 64 for the same (N, K))
UNTUNED_TRACE = (
    ("q_a_proj 1536 x 7168", 61, 123.0, 15.7),
    ("kv_a_proj 576 x 7168", 61, 30.0, 11.4),
    ("o_proj 7168 x 2048", 61, 34.0, 11.1),
    ("dense FFN gate_up 4608 x 7168", 3, 122.0, 23.5),
    ("dense FFN down 7168 x 2304", 3, 39.0, 10.9),
)
UNTUNED_SOURCE = ("SemiAnalysisAI/InferenceX issue 863 (MI325X DeepSeek-R1 FP8 TP8 decode "
                  "kernel table, sglang v0.5.9-rocm700-mi30x) against " + SOURCE.split(",")[0])
# SGLang ROCm images -> the aiter they build (sglang docker/rocm.Dockerfile at that tag)
SGLANG_AITER = {"v0.5.9": "v0.1.11.post1"}
_TUNED_FROM = (0, 1, 13)  # aiter v0.1.13(-rc2): the first tag with gfx942 DeepSeek-V3 rows


def _version(tag: str) -> tuple[int, ...]:
    return tuple(int(x) for x in tag.lstrip("v").split(".post")[0].split("-")[0].split("."))


def untuned_gfx942(software: str) -> bool:
    """Whether a run's ``software`` (e.g. ``sglang (lmsysorg/sglang:v0.5.9-rocm700-mi30x)``)
    builds an aiter without gfx942 tuned DeepSeek-V3 FP8 GEMMs (:data:`SGLANG_AITER`)."""
    for tag, aiter in SGLANG_AITER.items():
        if f"sglang:{tag}-" in software and "mi30x" in software:
            return _version(aiter) < _TUNED_FROM
    return False


def untuned_layer_extra(layers: int = 61) -> Input:
    """``layer_extra``: seconds per layer the default kernels add over the tuned ones
    (:data:`UNTUNED_TRACE`, summed per step over the trace's ``layers``); the trace's M = 64
    times stand for every decode batch (a default kernel is latency-bound), range x0.5-x1.2."""
    extra = sum(n * (t - tuned) for _, n, t, tuned in UNTUNED_TRACE) * 1e-6 / layers
    return Input("layer_extra", 0.5 * extra, extra, 1.2 * extra, "s", "fitted",
                 f"untuned aiter FP8 block-scale GEMMs on gfx942: {UNTUNED_SOURCE}; "
                 + ", ".join(f"{op} {t:g} vs {tu:g} us x {n}" for op, n, t, tu in UNTUNED_TRACE)
                 + f" = {extra * layers * 1e3:.2f} ms per step, {extra * 1e6:.0f} us per layer "
                 "(rocmfit)")
