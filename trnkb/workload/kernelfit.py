"""Per-kernel time of a MoE or MLA decode layer that the rooflines do not see.

A decode step of a DeepSeek-style layer (MLA attention, routed experts) runs a chain of
small kernels per layer, most of which move a few megabytes or less: their time is not
their bytes over the HBM bandwidth but a floor (ramp-up, tail, the dependency gap between
two nodes of a captured CUDA graph). :func:`kernel_inputs` gives the two inputs
:mod:`~trnkb.workload.stepcost` charges per layer of a MoE or MLA model instead of the
generic ``layer_overhead`` (dense models keep that assumption: no operator trace of a dense
decode layer was read):

* ``kernel_overhead``: seconds one kernel of the chain costs beyond its roofline. Points
  (operator measurements, :data:`POINTS`):

  - the gap one serialized node adds to a captured decode graph, 1.34 us (NVIDIA/Megatron-LM
    pull request 6064, "a calibration ballast that adds no-op nodes to the decode graph
    prices one serialized node at 1.34 us"): the low end, every kernel's work fused away;
  - the duration of a kernel with next to no work in a DeepSeek-R1 decode graph on B200,
    ``cvt_fp16_to_fp4`` (activation quantization, 183 calls per step, 2.1 us average;
    SemiAnalysisAI/InferenceX issue 863, B200 FP4 TP4 EP4 SGLang kernel table): central =
    that duration plus the node gap, 3.44 us;
  - the small projections of the same table, ``DeviceGemmFp4GemmSm100`` (q/kv_a_proj and
    o_proj, 183 calls, 8.4 us average) less their weight stream at the B200's 8 TB/s
    (q_a 7168 x 1536, kv_a 7168 x 576 and o_proj 16384/4 x 7168 in fp4: mean 7.4 MB,
    0.92 us): 7.5 us, plus the node gap: the high end, 8.82 us.

  The fit is the central point itself (one kernel class each end); the residual reported is
  the spread of the three points around the central (low -61%, high +156%), which is the
  range.
* ``kernels_per_layer``: kernels one MoE/MLA decode layer launches beside its two
  all-reduces (charged as collectives). Low end 14: the kernels of issue 863's table with
  58 or more calls per 61-layer step (3 dense FP4 projections, 3 activation quantizations,
  3 cuBLAS projections for the absorbed MLA, the MLA attention kernel, the expert gate_up
  and down GEMMs, the MoE finalize, the shared expert), the rows that table lists; central
  18 and high 24 add the kernels it leaves out (RMSNorms of q/kv latents, RoPE and cache
  write, router GEMM and top-k): an assumption, no complete list was read.

Both are NVIDIA measurements; on ROCm (aiter kernels under SGLang and ATOM) the same inputs
are used as an estimate: no ROCm decode trace with per-kernel durations was read.
"""

from __future__ import annotations

from trnkb.workload.models import Model
from trnkb.workload.ranges import Input

# (what, seconds): the three operator points of kernel_overhead
POINTS = (
    ("graph node gap (Megatron-LM PR 6064)", 1.34e-6),
    ("cvt_fp16_to_fp4 2.1 us + node gap (InferenceX issue 863, B200)", 2.1e-6 + 1.34e-6),
    ("FP4 projection 8.4 us - 0.92 us stream + node gap (InferenceX issue 863, B200)",
     8.4e-6 - 0.92e-6 + 1.34e-6),
)

SOURCE = ("NVIDIA/Megatron-LM pull request 6064 (graph node gap); SemiAnalysisAI/InferenceX "
          "issue 863 (DeepSeek-R1 FP4 decode kernel table, B200, SGLang)")

KERNELS_PER_LAYER = (14.0, 18.0, 24.0)


def fit() -> dict[str, float]:
    """``{"low", "central", "high", "residual_low", "residual_high"}`` of ``kernel_overhead``
    (seconds; residuals relative to the central)."""
    lo, mid, hi = (t for _, t in POINTS)
    return {"low": lo, "central": mid, "high": hi,
            "residual_low": lo / mid - 1, "residual_high": hi / mid - 1}


def applies(model: Model) -> bool:
    """A MoE or MLA model: the layers these kernel chains describe."""
    return bool(model.moe) or model.attention == "mla"


def kernel_inputs(model: Model) -> dict[str, Input]:
    """``kernel_overhead`` and ``kernels_per_layer`` for a MoE or MLA model, else ``{}``."""
    if not applies(model):
        return {}
    f = fit()
    lo, mid, hi = KERNELS_PER_LAYER
    return {
        "kernel_overhead": Input(
            "kernel_overhead", f["low"], f["central"], f["high"], "s", "fitted",
            f"per kernel of a MoE/MLA decode layer beyond its roofline: {SOURCE}; points "
            + ", ".join(f"{w} {t * 1e6:.2f} us" for w, t in POINTS)
            + f" (low {f['residual_low']:+.0%}, high {f['residual_high']:+.0%} of the "
            "central); NVIDIA traces, an estimate elsewhere"),
        "kernels_per_layer": Input(
            "kernels_per_layer", lo, mid, hi, "", "sourced x assumption",
            "kernels of a MoE/MLA decode layer beside its all-reduces: 14 listed per layer "
            "in InferenceX issue 863's B200 table (low end); 18-24 adds norms, RoPE/cache "
            "write, router and top-k it does not list (assumption)"),
    }
