"""Reference engine: a NeuronCore model that executes GEMM and attention, numerically and in cycles.

>>> import trnkb
>>> from trnkb.engine import NeuronCore, gemm
>>> core = NeuronCore.from_kb(trnkb.load(), "trainium3")
>>> r = gemm(core, 1024, 1024, 1024, dtype="mxfp8", execute=False)
>>> r.utilization <= 1.0
True
"""

from trnkb.engine.kernels import (
    attention,
    attention_flops,
    compare_attention,
    gemm,
    reference_attention,
)
from trnkb.engine.model import NeuronCore
from trnkb.engine.numerics import (
    MXTensor,
    NVFP4Tensor,
    error_stats,
    quantize_mx,
    quantize_nvfp4,
)
from trnkb.engine.result import Result
from trnkb.engine.timeline import Timeline

__all__ = [
    "MXTensor",
    "NVFP4Tensor",
    "NeuronCore",
    "Result",
    "Timeline",
    "attention",
    "attention_flops",
    "compare_attention",
    "error_stats",
    "gemm",
    "quantize_mx",
    "quantize_nvfp4",
    "reference_attention",
]
