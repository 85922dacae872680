"""The kernels, one module each: :mod:`trnkb.engine.gemm` and :mod:`trnkb.engine.attention`."""

from trnkb.engine.attention import (
    attention,
    attention_flops,
    compare_attention,
    explain_attention,
    reference_attention,
)
from trnkb.engine.gemm import gemm

__all__ = ["attention", "attention_flops", "compare_attention", "explain_attention", "gemm",
           "reference_attention"]
