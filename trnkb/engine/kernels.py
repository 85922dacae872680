"""The kernels as users run them (:mod:`trnkb.engine.logical`: logical cores, padding,
fixed costs) over the one-core kernels :mod:`trnkb.engine.gemm` and
:mod:`trnkb.engine.attention`."""

from trnkb.engine.attention import (
    attention_flops,
    compare_attention,
    explain_attention,
    reference_attention,
)
from trnkb.engine.logical import attention, attention_time, gemm, gemm_time

__all__ = ["attention", "attention_flops", "attention_time", "compare_attention",
           "explain_attention", "gemm", "gemm_time", "reference_attention"]
