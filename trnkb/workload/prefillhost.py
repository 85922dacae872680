"""The host's floor under an eager prefill step of a DeepSeek-style (MLA/MoE) model.

Decode steps replay a captured CUDA graph; a prefill ("extend") step runs eagerly in the
stacks the ledger's DeepSeek-R1 runs use (SGLang without ``--enable-piecewise-cuda-graph``,
which InferenceX's scripts never pass and its B200 FP4 script turns off with
``--disable-piecewise-cuda-graph``; TensorRT-LLM's PyTorch backend without
``torch_compile_config.enable_piecewise_cuda_graph``), so the host launches every kernel of
the forward one by one. When the device work is small (a short prompt) the step takes as long
as the host needs to launch it: SGLang's own forward-cost log for a DeepSeek-V3 extend of one
new token is 82.6 ms eager and 23.1 ms once captured in a prefill CUDA graph, and the
requests it affected saw TTFTs of 80-100 ms (:data:`SOURCE`). Per layer (61 layers) that is
the floor :func:`eager_prefill_input` gives: central the eager forward, 1.35 ms; low the
captured one, 0.38 ms (a host fast enough, or a stack capturing its prefill); high the 100 ms
TTFT, 1.64 ms. :func:`~trnkb.workload.stepcost.step_fn` takes a step with prefill tokens as
at least ``eager_prefill_floor x layers``; decode-only steps are untouched.

It is a host-side figure: it moves with the host CPU and the stack's Python overhead, so the
range is wide, and only MLA models (the measured DeepSeek-V3 architecture) get it; other
models' prefill floors have no measurement here. A stack that captures its prefill (vLLM V1's
piecewise CUDA graphs, TensorRT-LLM with ``enable_piecewise_cuda_graph``) runs at the
captured end: :func:`captured_prefill_input` (``assumptions=``).
"""

from __future__ import annotations

from trnkb.workload.models import Model
from trnkb.workload.ranges import Input

SOURCE = ("sglang-pr-12160 (specs/sources.yaml; sgl-project/sglang pull request 12160, "
          "2025-10-26, read 2026-11-27: DeepSeek-V3 "
          "'Prefill batch. #new-token: 1' forward cost 82.64 ms eager, 23.10 ms with a prefill "
          "CUDA graph; 'ttft could be 80-100ms' for such requests)")
_EAGER_S, _GRAPH_S, _TTFT_HIGH_S = 82.64e-3, 23.10e-3, 100e-3
_LAYERS = 61  # DeepSeek-V3


def eager_prefill_input(model: Model) -> dict[str, Input]:
    """``{"eager_prefill_floor": Input}`` (seconds per layer) for an MLA model, else ``{}``
    (module docstring)."""
    if model.attention != "mla":
        return {}
    lo, mid, hi = (x / _LAYERS for x in (_GRAPH_S, _EAGER_S, _TTFT_HIGH_S))
    return {"eager_prefill_floor": Input(
        "eager_prefill_floor", lo, mid, hi, "s", "sourced",
        f"{SOURCE}: per layer over DeepSeek-V3's {_LAYERS}; low the captured forward, high the "
        "TTFT the source reports")}


def captured_prefill_input() -> dict[str, Input]:
    """``eager_prefill_floor`` for a stack that captures its prefill in CUDA graphs
    (TensorRT-LLM's ``enable_piecewise_cuda_graph``): the source's captured forward, 0.38 ms
    per layer, at all three ends."""
    x = _GRAPH_S / _LAYERS
    return {"eager_prefill_floor": Input("eager_prefill_floor", x, x, x, "s", "sourced",
                                         f"{SOURCE}: the captured forward, per layer")}
