"""Prefill (context-encoding) cost rules of Transformers NeuronX, each from its source.

The serving simulator (:mod:`~trnkb.workload.stepcost`) charges prefill attention as a
flash-attention kernel: the causal half of the score pairs at ``attention_efficiency`` of
the peak. Transformers NeuronX (TNX, ``aws-neuron/transformers-neuronx``) did not run that
kernel before Neuron 2.19, and runs it since only for long single prompts. With
``simulate(..., stack="Transformers NeuronX (Neuron 2.18.0)")`` (the ``software`` field of a
ledger run) the step cost follows these rules instead:

1. **Attention implementation by release.** TNX 0.10.x (Neuron 2.18.0, 04/01/2024; 2.18.1,
   04/10/2024) encodes a context with plain HLO attention; TNX 0.11.351.0 (Neuron 2.19,
   07/03/2024) adds "compiler optimized flash attention kernel to support context lengths of
   16k/32k for Llama models" (source ``neuron-tnx-release-notes``, "Release [0.11.351.0]").
   Even there the kernel runs only for a context of at least 4,096 tokens ("kernel gives
   minimal benefit for smaller sequence lengths") and for batch 1 or left-aligned batches
   (source ``tnx-source-c8d6bdc``: ``layers/attention.py`` ``flash_attention``,
   ``llama/hlo.py`` "Multi-Token Context Encoding"). :func:`flash_min_tokens`.
2. **Full square of scores.** Without the kernel, ``llama/hlo.py`` (source
   ``tnx-source-0623de2``, "Multi-Token Context Encoding") computes ``attention.score``
   (Q K^T for every (query, key) pair of the bucket), then ``attention.mask`` (a select: the
   causal half is computed and then masked, not skipped), then ``attention.context_combined``:
   ``hlo.softmax`` (reduce-max, subtract, exp, reduce-sum, divide over the S x S scores, in
   the scores' 16-bit dtype) and P V. So a prompt of S tokens costs S^2 score elements per
   head and layer, twice the causal pairs the flash charge counts.
3. **Heads padded to the tensor-parallel degree.** ``decoder.py`` ``DecoderLayer.to_neuron``
   (source ``tnx-source-0623de2``) pads the query heads to ``round_up_to_divisor(n_heads,
   tp_degree)`` (Llama 2 13B: 40 heads on 32 NeuronCores become 64, two per core); a core
   computes the scores of ``ceil(heads / cores)`` heads. :func:`heads_per_core`. KV heads
   that the cores do not divide are replicated to one per query head first
   (``check_gqa_fallback``: ``GQA.REPLICATED_HEADS``; ``to_neuron`` repeats the K/V weights
   and sizes the cache at the query heads): Llama 3.1 70B's 8 KV heads on 32 cores hold a
   64-head cache, 8x its GQA cache. The padded and repeated weights are streamed and
   multiplied like real ones (:meth:`~trnkb.workload.stepcost.StepModel.padded_attention_params`).
4. **Cost of one score element** on a NeuronCore (engine rates from ``specs/cores.yaml``,
   ``neuroncore-v2``): the engines run concurrently, so the time is the largest of TensorE
   (Q K^T and P V, ``2 (d_qk + d_v)`` FLOPs, plus the transpose of P through the PE array,
   ``2 x 128`` FLOPs, as the reference engine's attention kernel does), VectorE (the
   softmax's passes over the scores, ``neuronx_softmax_passes``: 5 as the HLO is written,
   3 if the compiler folds subtract and sum into ScalarE's activation), ScalarE (exp, one
   pass) and, when one core's scores (``heads x S^2 x 2 B``) exceed its SBUF, HBM traffic of
   ``neuronx_score_bytes`` per element (8 B: scores written once and read once, P written
   once and read once, in 16 bits; 16 B: the same in fp32, as neuronx-cc's
   ``--enable-mixed-precision-accumulation`` computes softmax ("accumulates operators such
   as softmax and layernorm in FP32", ``compiler/about-neuronx-cc.rst``), the flag the
   Llama 2 70B sample sets and the 0.10.0.x known issues advise for Llama 2 13B and 70B;
   48 B: every HLO op of rule 2 its own fp32 pass). :func:`prefill_attention_fn`.

5. **Decode attends a whole token bucket.** ``llama/model.py`` builds one token-generation
   graph per bucket of ``bucket.token_sizes(n_positions)``: the powers of two from 128 below
   ``n_positions``, then ``n_positions`` (``utils.power_of_two_bucket_sizes``); each graph
   takes the KV cache sliced to its bucket (``decoder.py`` ``_hlo_layers_params``:
   ``dim_size`` = the bucket) and scores the query against every cached key of it
   (``llama/hlo.py`` ``attention.score(query, cached_keys)``, then masked); a step runs the
   smallest bucket above the token's position (``find_bucket_id``: ``npos >= length + 1``)
   (source ``tnx-token-buckets-0623de2``). So a decode step's attention FLOPs and KV bytes
   are those of the bucket, not of the context: :func:`token_bucket`,
   :func:`decode_context_fn`; ``n_positions`` is the request's input + output
   (:func:`n_positions_input`).

Checked and not a change (docs/workload.md, "Transformers NeuronX prefill"): a static batch
is context-encoded in one graph (``base.py`` ``_forward`` calls ``context`` with the whole
batch; ``_context_dynamic_batching``, one sub-batch at a time, runs only under continuous
batching), as :mod:`~trnkb.workload.scheduler`'s static mode already does; the default
context buckets are half the token buckets (``bucket.py`` ``context_sizes``), and every
Trn1 ledger prompt (128 to 8,192 tokens at ``n_positions`` twice that or more) is exactly a
bucket, so neither padding nor the token-by-token fallback past the largest bucket applies.

The prompt length is read from the step's composition: a static context-encoding step
holds whole prompts, ``attn_pre = sum S_i (S_i + 1) / 2``, so ``sum S_i^2 = 2 attn_pre -
n_pre`` exactly and the mean ``S = 2 attn_pre / n_pre - 1`` is exact for equal prompts (TNX
pads a batch to one bucket, so with unequal prompts the cost is a lower bound). The rules
assume whole-prompt context steps (``batching="static"``, or continuous batching with
``chunked_prefill=False``); a chunk after cached tokens is charged ``2 c p + c^2`` score
elements where TNX's windowed context encoding computes ``c (p + c)``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from trnkb.workload.ranges import Input, assumption

if TYPE_CHECKING:
    from trnkb.workload.stepcost import StepModel


_SCORE_BYTES = 2.0  # scores in the query's dtype (amp f16/bf16): attention.score's dot_general
_TRANSPOSE_FLOPS = 2.0 * 128  # P through the 128-row PE array to put keys on partitions
_FLASH_MIN = 4096  # layers/attention.py flash_attention: "if n_active_tokens < 4096"
_FIRST_FLASH = (2, 19)  # Neuron release that brought TNX 0.11.351.0 (flash kernel)
_CORE_ROW = "neuroncore-v2"


def neuronx_version(stack: str | None) -> tuple[int, int] | None:
    """(major, minor) Neuron release of a Transformers NeuronX stack string such as
    ``"Transformers NeuronX (Neuron 2.18.0)"``; None for any other stack (or no version)."""
    if not stack or "transformers neuronx" not in stack.lower().replace("-", " "):
        return None
    m = re.search(r"(\d+)\.(\d+)", stack)
    return (int(m.group(1)), int(m.group(2))) if m else None


def flash_min_tokens(version: tuple[int, int]) -> float:
    """Shortest context the flash kernel encodes (rule 1): none before Neuron 2.19 (inf),
    4,096 tokens from it."""
    return float(_FLASH_MIN) if version >= _FIRST_FLASH else math.inf


def heads_per_core(heads: int, cores: int) -> int:
    """Query heads one NeuronCore computes when ``heads`` are padded to a multiple of
    ``cores`` (rule 3)."""
    return -(-heads // cores)


def padded_heads(heads: int, kv_heads: int, cores: int) -> tuple[int, int]:
    """(query heads, KV heads) Transformers NeuronX holds over ``cores`` tensor-parallel
    NeuronCores when ``cores`` does not divide ``heads`` (rule 3): both rounded up to a
    multiple of ``cores`` (``decoder.py``, source ``tnx-source-0623de2``: ``to_neuron`` pads
    the query weights, and K/V too when ``n_head == n_kv_head``, to ``round_up_to_divisor(
    n_heads, tp_degree)``; ``init_caches`` sizes the KV cache at ``round_up_to_divisor(
    n_kv_head, tp_degree)`` heads). A GQA model whose KV heads ``cores`` does not divide
    gets them replicated to one per query head first (``check_gqa_fallback``: "KV head
    replication will be enabled", ``GQA.REPLICATED_HEADS``; ``to_neuron`` then repeats the
    K/V weights and sets ``n_kv_head = n_head`` before ``init_caches``): the cache is the
    MHA cache of the query heads. Llama 2 13B (40 heads, MHA) on 32 cores: (64, 64); Llama
    3.1 70B (64 heads, 8 KV heads): (64, 64)."""
    if kv_heads != heads and kv_heads % cores:
        kv_heads = heads
    if heads % cores == 0:
        return heads, kv_heads
    return -(-heads // cores) * cores, -(-kv_heads // cores) * cores


@functools.cache
def _core_inputs(chip: str) -> dict[str, Input]:
    from trnkb.engine import NeuronCore
    from trnkb.kb import load

    try:
        core = NeuronCore.from_kb(load(), chip)
    except KeyError:
        return {}
    src = ("neuron-nki-arch-v2",)

    def sourced(name: str, value: float, unit: str, basis: str) -> Input:
        return Input(name, value, value, value, unit, "sourced", basis, src)

    return {
        "neuronx_cores_per_chip": sourced("neuronx_cores_per_chip", core.cores_per_chip, "",
                                          f"NeuronCores per {chip} (specs/chips.yaml)"),
        "neuronx_vector_rate": sourced(
            "neuronx_vector_rate", core.vector_lanes * core.vector_clock.to("Hz").magnitude,
            "1/s", f"VectorE elements per second of one {core.name} (lanes x clock, "
                   f"specs/cores.yaml {_CORE_ROW})"),
        "neuronx_scalar_rate": sourced(
            "neuronx_scalar_rate", core.scalar_lanes * core.scalar_clock.to("Hz").magnitude,
            "1/s", f"ScalarE elements per second of one {core.name} (lanes x clock)"),
        "neuronx_sbuf_bytes": sourced("neuronx_sbuf_bytes",
                                      core.sbuf_capacity.to("B").magnitude, "B",
                                      f"SBUF of one {core.name}"),
    }


_PASSES = assumption("neuronx_softmax_passes", 3.0, 5.0, 5.0, "",
                     "VectorE passes over the S x S scores in Transformers NeuronX's HLO "
                     "attention (mask select, row max, subtract, row sum, divide: 5 as "
                     "written; 3 if the compiler folds subtract and sum into ScalarE's exp)")
_BYTES = assumption("neuronx_score_bytes", 8.0, 16.0, 48.0, "B",
                    "HBM bytes per score element once one core's scores outgrow its SBUF "
                    "(8: scores and probabilities each written and read once in 16 bits; "
                    "16: the same in fp32, as neuronx-cc's --enable-mixed-precision-"
                    "accumulation keeps softmax intermediates, the flag the Llama 2 70B "
                    "sample sets and the 2.18 release notes advise for Llama 2 13B/70B; "
                    "48: every op of the HLO softmax its own fp32 read and write)")


def prefill_inputs(chip: str, stack: str | None) -> dict[str, Input]:
    """The inputs of the rules for ``stack`` on ``chip``: empty unless ``stack`` is
    Transformers NeuronX with a version and the chip has a NeuronCore row."""
    version = neuronx_version(stack)
    if version is None:
        return {}
    core = _core_inputs(chip)
    if not core:
        return {}
    flash = flash_min_tokens(version)
    return {**core, "neuronx_softmax_passes": _PASSES, "neuronx_score_bytes": _BYTES,
            "neuronx_flash_min_tokens": Input(
                "neuronx_flash_min_tokens", flash, flash, flash, "", "sourced",
                f"shortest context Transformers NeuronX of Neuron {version[0]}.{version[1]} "
                f"encodes with its flash kernel (inf: none before 2.19)",
                ("neuron-tnx-release-notes", "tnx-source-c8d6bdc"))}


def prefill_attention_fn(sm: StepModel,
                         v: Mapping[str, float]) -> Callable[[Any, Any, Any], Any] | None:
    """``fn(n_pre, attn_pre, flash)``: seconds of one context-encoding step's attention on one
    chip under the rules (``flash``: the simulator's flash charge, kept where rule 1 runs
    the kernel); None when ``v`` holds no Transformers NeuronX inputs."""
    if "neuronx_softmax_passes" not in v:
        return None
    m, lay = sm.model, sm.layout
    cores = v["neuronx_cores_per_chip"]
    h = heads_per_core(m.attention_heads, int(lay.tp * cores))
    layers = m.layers / lay.pp
    peak_core = v.get("attention_peak_flops", v["peak_flops"]) / cores
    t_tensor = ((2.0 * (m.head_dim + m.v_dim) + _TRANSPOSE_FLOPS)
                / (peak_core * v["attention_efficiency"]))
    t_engines = max(t_tensor, v["neuronx_softmax_passes"] / v["neuronx_vector_rate"],
                    1.0 / v["neuronx_scalar_rate"])
    t_hbm = v["neuronx_score_bytes"] / (v["hbm_bandwidth"] * v["hbm_efficiency"] / cores)
    sbuf, flash_min = v["neuronx_sbuf_bytes"], v["neuronx_flash_min_tokens"]

    def fn(n_pre: Any, attn_pre: Any, flash: Any) -> Any:
        n, a = np.asarray(n_pre, float), np.asarray(attn_pre, float)
        s = np.where(n > 0, 2.0 * a / np.maximum(n, 1.0) - 1.0, 0.0)  # prompt length
        squares = np.maximum(2.0 * a - n, 0.0)  # sum of S_i^2 (rule 2)
        spill = h * s * s * _SCORE_BYTES > sbuf
        per_elem = np.maximum(t_engines, np.where(spill, t_hbm, 0.0))
        out = np.where((s >= flash_min) & (n <= s), flash, squares * h * layers * per_elem)
        return out if out.ndim else float(out)

    return fn


_TOKEN_MIN_BUCKET = 128.0  # bucket.py token_sizes: power_of_two_bucket_sizes(128, n_positions)


def token_bucket(ctx: Any, n_positions: float) -> Any:
    """Keys one Transformers NeuronX token-generation step attends for a sequence whose new
    token sees ``ctx`` keys (rule 5): the smallest of the token buckets ``[128, 256, ...,
    n_positions]`` (powers of two from 128 below ``n_positions``, then ``n_positions``)
    holding them. Array in, array out."""
    c = np.maximum(np.asarray(ctx, float), 1.0)
    pow2 = np.maximum(2.0 ** np.ceil(np.log2(c)), _TOKEN_MIN_BUCKET)
    return np.minimum(pow2, np.maximum(float(n_positions), c))


def n_positions_input(n_positions: int) -> dict[str, Input]:
    """``{"neuronx_n_positions": Input}``: the compiled sequence length of a Transformers
    NeuronX model serving requests of at most ``n_positions`` tokens (input + output; the
    Trn1 performance tables' "Sequence Length" column is exactly that on every row)."""
    n = float(n_positions)
    return {"neuronx_n_positions": Input(
        "neuronx_n_positions", n, n, n, "", "sourced",
        "compiled n_positions of the Transformers NeuronX model: its token-generation buckets "
        "are the powers of two from 128 below it, then it", ("tnx-token-buckets-0623de2",))}


def decode_context_fn(v: Mapping[str, float]) -> Callable[[Any, Any], Any] | None:
    """``fn(n_dec, ctx_dec)``: the keys a decode step attends under Transformers NeuronX's
    token buckets (rule 5) for ``n_dec`` sequences attending ``ctx_dec`` keys in all: each
    at the bucket of the mean context (exact for a static batch, whose sequences stand at one
    position); None when ``v`` holds no ``neuronx_n_positions``."""
    if "neuronx_n_positions" not in v:
        return None
    npos = v["neuronx_n_positions"]

    def fn(n_dec: Any, ctx_dec: Any) -> Any:
        n, c = np.asarray(n_dec, float), np.asarray(ctx_dec, float)
        out = np.where(n > 0, n * token_bucket(c / np.maximum(n, 1.0), npos), 0.0)
        return out if out.ndim else float(out)

    return fn
