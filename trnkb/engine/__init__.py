"""Reference engine: a NeuronCore model that executes GEMM and attention, numerically and in cycles.

>>> import trnkb
>>> from trnkb.engine import NeuronCore, gemm
>>> core = NeuronCore.from_kb(trnkb.load(), "trainium3")
>>> r = gemm(core, 1024, 1024, 1024, dtype="mxfp8", execute=False)
>>> r.utilization <= 1.0
True

May import: :mod:`trnkb.kb`, :mod:`trnkb.calc`, :mod:`trnkb.spec`, :mod:`trnkb.units`
(charts of its runs live in :mod:`trnkb.views.timeline`).
"""

from trnkb.engine.attention import attention_flops, compare_attention, reference_attention
from trnkb.engine.attention_mla import mla_bytes, mla_decode, mla_flops
from trnkb.engine.chip import chip_attention, chip_gemm
from trnkb.engine.layer import LayerTime, layer_time, model_layer_time
from trnkb.engine.logical import attention, attention_time, gemm, gemm_time
from trnkb.engine.model import NeuronCore
from trnkb.engine.numerics import MXTensor, quantize_mx
from trnkb.engine.numerics_formats import error_stats
from trnkb.engine.numerics_nvfp4 import NVFP4Tensor, quantize_nvfp4
from trnkb.engine.result import Result
from trnkb.engine.tiling import Tiling, named_tiling
from trnkb.engine.timeline import Timeline

__all__ = [
    "LayerTime",
    "MXTensor",
    "NVFP4Tensor",
    "NeuronCore",
    "Result",
    "Tiling",
    "Timeline",
    "attention",
    "attention_flops",
    "attention_time",
    "chip_attention",
    "chip_gemm",
    "compare_attention",
    "error_stats",
    "gemm",
    "gemm_time",
    "layer_time",
    "mla_bytes",
    "mla_decode",
    "mla_flops",
    "model_layer_time",
    "named_tiling",
    "quantize_mx",
    "quantize_nvfp4",
    "reference_attention",
]
