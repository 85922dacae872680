"""Reference engine: a NeuronCore model that executes GEMM and attention, numerically and in cycles."""

from trnkb.engine.numerics import (
    MXTensor,
    NVFP4Tensor,
    error_stats,
    quantize_mx,
    quantize_nvfp4,
)

__all__ = ["MXTensor", "NVFP4Tensor", "error_stats", "quantize_mx", "quantize_nvfp4"]
