"""Serving: prefill and decode as rooflines, KV capacity, TTFT, TPOT, throughput, cost per token.

Layout on the ``chips`` of one model replica: attention (and dense FFNs) tensor-parallel
over ``tp`` chips (the largest power of two dividing the chips and the heads, or the
caller's), the rest of the chips as attention data parallelism (each attention replica
holds ``batch / dp`` sequences); MoE experts spread over all the chips (expert parallel).
KV cache is sharded over ``min(tp, kv_heads)`` (GQA); an MLA latent is not split by head,
so it is sharded only by the attention data parallelism.

Decode step (seconds), per chip, the scaling book's general step time (inference.md,
"Theoretical Step Time (General)"): the matmuls ``max(matmul FLOPs / (peak x
compute_efficiency), weight bytes / (HBM bandwidth x hbm_efficiency))`` plus attention
``max(attention FLOPs / (peak x compute_efficiency), KV bytes / (HBM x hbm_efficiency))``
(attention streams each sequence's own cache after the matmuls, so the two add rather than
hide under one another), plus the elementwise traffic between the matmuls (norms, residual
adds, the gated activation: :func:`elementwise_bytes`, times ``elementwise_fraction`` for
what fusion leaves) at the same bandwidth; prefill adds the same term. Weight bytes are
the local dense part plus the routed experts the batch touches
(``E x (1 - (1 - k/E)^tokens)`` per layer under uniform routing); KV bytes
are the cache of the local sequences at the mean context ``input + output/2``; plus the
exposed part of 2 tensor-parallel all-reduces per layer and, under attention data
parallelism (``dp > 1``), 2 expert all-to-alls per MoE layer (with ``dp = 1`` every rank
holds every token and the layer's second all-reduce sums the experts' outputs, as vLLM's
``FusedMoE`` and :mod:`~trnkb.workload.stepcost` do). Prefill of ``prefill_batch``
requests: ``max(FLOPs / (peak x prefill_mfu), weights / HBM)`` plus its collectives.
TTFT = prefill + one decode step; TPOT = the decode step.
Throughput counts output tokens with prefill interleaved on the same chips:
``batch x output / (output x TPOT + prefill(batch))``.

KV-cache format: the caller's ``kv_precision``, else the weight format when it has at least
8 bits, else fp8 (4-bit weight formats keep an 8-bit cache: NVIDIA's TensorRT-LLM recipe for
Llama 3.3 70B serves its NVFP4 checkpoint with ``kv_cache_config: dtype: fp8``, source
``trtllm-llama33-70b-recipe`` in specs/claims/measured.yaml; a 4-bit cache is an opt-in).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from trnkb.workload.collfit import latency_inputs
from trnkb.workload.cost import cost_inputs, facility_watts, usd_per_chip_hour
from trnkb.workload.models import WEIGHT_BYTES, Model
from trnkb.workload.neuronx import neuronx_version
from trnkb.workload.ranges import Input, assumption, check_assumptions
from trnkb.workload.result import WorkloadResult, check_positive
from trnkb.workload.system import System
from trnkb.workload.training import TRAIN_ASSUMPTIONS

SERVE_ASSUMPTIONS = {
    "compute_efficiency": assumption("compute_efficiency", 0.3, 0.6, 0.85, "",
                                     "achieved fraction of peak FLOP/s in decode matmuls; the low "
                                     "end "
                                     "covers general-purpose serving stacks (the measured runs in "
                                     "specs/claims/measured.yaml sit below 0.5)"),
    "hbm_efficiency": assumption("hbm_efficiency", 0.5, 0.75, 0.9, "",
                                 "achieved fraction of peak HBM bandwidth when streaming weights "
                                 "and KV"),
    "prefill_mfu": assumption("prefill_mfu", 0.3, 0.5, 0.7, "",
                              "model-FLOPs utilisation of prefill"),
    "serve_overlap": assumption("serve_overlap", 0.0, 0.25, 0.5, "",
                                "tensor/expert-parallel communication hidden under compute"),
    "workspace_fraction": assumption("workspace_fraction", 0.05, 0.1, 0.15, "",
                                     "HBM kept for activations, runtime and fragmentation"),
    "elementwise_fraction": assumption("elementwise_fraction", 0.25, 0.5, 1.0, "",
                                       "share of the unfused norm, residual and activation "
                                       "traffic (elementwise_bytes) a serving stack still moves "
                                       "through HBM between its matmuls: 1 unfused, lower as "
                                       "kernels fuse residual-add with RMSNorm and the gated "
                                       "activation into the matmul epilogue"),
}
SERVE_METRICS = {"ttft": "s", "tpot": "s", "tokens_per_s_per_chip": "1/s",
                 "decode_tokens_per_s_per_chip": "1/s", "tokens_per_s_system": "1/s",
                 "tokens_per_s_per_mw": "1/s/MW", "tokens_per_usd": "1/USD",
                 "usd_per_million_tokens": "USD",
                 "max_batch": "", "kv_bytes_per_token": "B"}
_COMM = {k: TRAIN_ASSUMPTIONS[k] for k in ("collective_efficiency", "scaleout_latency")}


def default_kv_precision(precision: str) -> str:
    """The KV-cache format served with weights in ``precision`` (see the module docstring)."""
    return precision if WEIGHT_BYTES[precision] >= 1.0 else "fp8"


def layout(model: Model, chips: int, tp: int | None = None,
           stack: str | None = None) -> tuple[int, int]:
    """(tensor-parallel degree of attention, attention data-parallel degree).

    ``tp`` must divide the chips and the heads; under Transformers NeuronX (``stack``, as
    :func:`~trnkb.workload.neuronx.neuronx_version` reads it) only the chips: it pads the
    heads to a multiple of its NeuronCores (:func:`~trnkb.workload.neuronx.padded_heads`)."""
    if tp is None:
        tp = 1
        while chips % (tp * 2) == 0 and model.attention_heads % (tp * 2) == 0:
            tp *= 2
    pads = neuronx_version(stack) is not None
    if chips % tp or (model.attention_heads % tp and not pads):
        raise ValueError(f"tp={tp} must divide the {chips} chips and the {model.attention_heads} "
                         f"heads")
    return tp, chips // tp


def elementwise_bytes(model: Model, tokens: float, chips: int, dp: int) -> float:
    """HBM bytes per chip of the non-matmul operations of one forward over ``tokens`` tokens,
    unfused, with bf16 activations.

    Per token and layer a pre-norm decoder reads and writes, outside its matmuls: two RMSNorms
    (``d`` in, ``d`` out each), two residual adds (``2d`` in, ``d`` out each) and the gated
    activation (``2f`` in, ``f`` out, ``f`` the FFN width a token uses: the dense FFN, or its
    active routed and shared experts): ``10 d + 3 f`` elements. The ``d`` terms are repeated on
    every tensor-parallel rank of an attention replica (``tokens / dp`` tokens each), the ``f``
    terms are spread over all ``chips``.
    """
    d = model.d_model
    dense_layers = model.dense_layers if model.moe else model.layers
    f_dense = (model.ffn_size or 0) * dense_layers
    f_moe = ((model.active_experts + model.shared_experts) * (model.expert_ffn_size or 0)
             * model.moe_layers)
    return 2.0 * (tokens / dp * 10 * d * model.layers + tokens * 3 * (f_dense + f_moe) / chips)


def _step(model: Model, system: System, chips: int, tp: int, dp: int, batch: int, ctx: float,
          v: Mapping[str, float], wb: float, kvb: float, decode: bool,
          tokens_per_seq: int) -> tuple[float, dict[str, float]]:
    """Seconds and bytes of one forward over ``batch`` sequences of ``tokens_per_seq`` new
    tokens each."""
    p = model.params()
    rep = model.tp_replicated_params()  # whole on every tensor-parallel rank
    dense = ((p["total"] - p["routed_experts"] - p["embedding"] - rep) / tp + rep) * wb
    tokens = batch * tokens_per_seq
    experts_b = 0.0
    if model.moe:
        touched = model.experts * (1 - (1 - model.active_experts / model.experts) ** tokens)
        experts_b = model.moe_layers * touched * model.expert_bytes(wb) / chips
    kv_shard = 1 if model.attention == "mla" else min(tp, model.kv_heads)
    kv_read = (batch / dp) * model.kv_bytes(ctx, kvb) / kv_shard if decode else 0.0
    if decode:
        # the scaling book's general step time (inference.md, "Theoretical Step Time
        # (General)"): attention streams each sequence's own KV cache and runs after the
        # matmuls, so its time adds to theirs instead of hiding under them
        # MLA decodes in the absorbed form: its score and value products run over the latent
        # (Model.decode_attention_flops_per_position), 3.4x the per-head count for DeepSeek-V3
        per_tok = model.attention_flops_per_token(ctx, causal_mean=False)
        if model.attention == "mla":
            per_tok = model.decode_attention_flops_per_position() * ctx
        attn_flops = tokens * per_tok / chips
        flops = (tokens * 2.0 * model.active_params(False) / chips + attn_flops
                 + tokens / dp * 2.0 * rep * (1 - 1 / tp))  # the replicated ones, whole
        bw = v["hbm_bandwidth"] * v["hbm_efficiency"]
        ce = v["peak_flops"] * v["compute_efficiency"]
        t = (max((flops - attn_flops) / ce, (dense + experts_b) / bw)
             + max(attn_flops / ce, kv_read / bw))
    else:
        flops = (tokens * model.forward_flops_per_token(tokens_per_seq, causal_mean=True) / chips
                 + tokens / dp * 2.0 * rep * (1 - 1 / tp))
        t = max(flops / (v["peak_flops"] * v["prefill_mfu"]),
                (dense + experts_b) / (v["hbm_bandwidth"] * v["hbm_efficiency"]))
    elementwise = elementwise_bytes(model, tokens, chips, dp) * v["elementwise_fraction"]
    t += elementwise / (v["hbm_bandwidth"] * v["hbm_efficiency"])
    net = system.network
    # bandwidth from the network model; each collective's fixed time from the stack's
    # collective benchmarks (collfit: ~58 us + per rank on Neuron, ~15 us NCCL/RCCL)
    kw = {"efficiency": v["collective_efficiency"], "step_latency": 0.0, "hop_latency": 0.0,
          "scaleout_latency": v["scaleout_latency"],
          "scaleup_scale": v["scaleup_bandwidth"] / system.scaleup_input.mid,
          "scaleout_scale": v["scaleout_bandwidth"] / system.scaleout_input.mid}

    def launch(ranks: int) -> float:
        return v["collective_latency"] + v["collective_latency_per_rank"] * ranks
    act = tokens / dp * model.d_model * 2.0
    comm = (2 * model.layers * (net.time("all-reduce", act, tp, 1, **kw) + launch(tp))
            if tp > 1 else 0.0)
    if model.moe and dp > 1:  # with dp = 1 the TP all-reduce above sums the experts' outputs
        # (vLLM's FusedMoE under TP or EP, as the simulator's stepcost): no all-to-all
        routed = tokens / chips * model.active_experts * model.d_model * 2.0
        comm += 2 * model.moe_layers * (net.time("all-to-all", routed, chips, 1, **kw)
                                        + launch(chips))
    exposed = comm - min(comm * v["serve_overlap"], t)
    return t + exposed, {"compute_or_memory": t, "comm": comm, "comm_exposed": exposed,
                         "weights_read": dense + experts_b, "kv_read": kv_read, "flops": flops,
                         "elementwise_bytes": elementwise}


def serve(model: Model, system: System, chips: int, batch: int, input_len: int, output_len: int,
          precision: str = "bf16", *, kv_precision: str | None = None,
          compute_precision: str | None = None,
          tp: int | None = None, prefill_batch: int = 1,
          assumptions: dict[str, Input] | None = None,
          curve: bool = True, pricing: str = "tco") -> WorkloadResult:
    """Serve ``model`` on one replica of ``chips`` chips of ``system`` (see the module docstring).

    ``precision`` is the weight format; ``kv_precision`` defaults to it (fp8 under 4-bit
    weights, see :func:`default_kv_precision`); ``compute_precision``
    (whose peak FLOP/s is used) defaults to it too, or to the nearest precision the chip has.
    ``pricing`` is ``tco`` or ``cloud`` (see :func:`trnkb.workload.cost.cost_inputs`).
    """
    check_positive(chips=chips, batch=batch, input_len=input_len, output_len=output_len,
                   prefill_batch=prefill_batch)
    for name, fmt in (("precision", precision), ("kv_precision", kv_precision)):
        if fmt is not None and fmt not in WEIGHT_BYTES:
            raise ValueError(f"{name} {fmt!r} is not one of {', '.join(WEIGHT_BYTES)}")
    wb = WEIGHT_BYTES[precision]
    kv_precision = kv_precision or default_kv_precision(precision)
    kvb = WEIGHT_BYTES[kv_precision]
    cp = compute_precision or system.fallback_precision(precision)
    tp, dp = layout(model, chips, tp)
    if dp > batch:
        raise ValueError(f"{chips} chips at tp={tp} make {dp} attention replicas for a batch of "
                         f"{batch}: {dp - batch} would hold no sequence; use at most "
                         f"{batch * tp} chips, a larger tp or a batch of at least {dp}")
    inputs = {**system.inputs(cp), **SERVE_ASSUMPTIONS, **_COMM,
              **latency_inputs(system.vendor, system.chip), **cost_inputs(system, pricing)}
    assumptions = check_assumptions(assumptions, inputs)
    inputs.update(assumptions)
    ctx = input_len + output_len / 2
    final_ctx = input_len + output_len
    p = model.params()
    rep = model.tp_replicated_params()  # whole on every tensor-parallel rank
    weights_chip = (((p["total"] - p["routed_experts"] - rep) / tp + rep) * wb
                    + p["routed_experts"] * wb / chips)
    kv_shard = 1 if model.attention == "mla" else min(tp, model.kv_heads)

    def max_batch(v: Mapping[str, float]) -> float:
        free = v["hbm_capacity"] * (1 - v["workspace_fraction"]) - weights_chip
        per_seq = model.kv_bytes(final_ctx, kvb) / kv_shard
        return max(math.floor(free / per_seq), 0) * dp if free > 0 else 0.0

    def run(v: dict[str, float]) -> dict[str, float]:
        tpot, d = _step(model, system, chips, tp, dp, batch, ctx, v, wb, kvb, True, 1)
        pre, pd = _step(model, system, chips, tp, dp, prefill_batch, input_len, v, wb, kvb, False,
                        input_len)
        pre_all, _ = _step(model, system, chips, tp, dp, batch, input_len, v, wb, kvb, False,
                           input_len)
        out = {f"decode_{k}": x for k, x in d.items()} | {f"prefill_{k}": x for k, x in pd.items()}
        out["tpot"], out["ttft"] = tpot, pre + tpot
        out["tokens_per_s_system"] = batch * output_len / (output_len * tpot + pre_all)
        out["tokens_per_s_per_chip"] = out["tokens_per_s_system"] / chips
        out["decode_tokens_per_s_per_chip"] = batch / tpot / chips
        fw = facility_watts(v)
        out["tokens_per_s_per_mw"] = out["tokens_per_s_per_chip"] / fw * 1e6
        out["usd_per_chip_hour"] = usd_per_chip_hour(v)
        out["tokens_per_usd"] = out["tokens_per_s_per_chip"] * 3600 / out["usd_per_chip_hour"]
        out["usd_per_million_tokens"] = 1e6 / out["tokens_per_usd"]
        out["max_batch"] = max_batch(v)
        out["fits"] = 1.0 if batch <= out["max_batch"] else 0.0
        out["weights_per_chip"] = weights_chip
        out["kv_bytes_per_token"] = model.kv_bytes(1, kvb)
        return out

    res = WorkloadResult.build("serve", model, system, chips, precision, inputs, run, SERVE_METRICS,
                               settings={"batch": batch, "input_len": input_len,
                                         "output_len": output_len,
                                         "kv_precision": kv_precision,
                                         "compute_precision": cp,
                                         "tp": tp, "attention_dp": dp,
                                         "prefill_batch": prefill_batch,
                                         "pricing": pricing})
    if compute_precision is None and cp != precision:
        res.notes.append(f"{system.chip} has no {precision} peak in the knowledge base; compute at "
                         f"{cp}")
    if chips > system.domain_size:
        spans = math.ceil(chips / system.domain_size)
        res.notes.append(f"one replica of {chips} chips spans {spans} "
                         f"scale-up domains of {system.domain_size}: its tensor-parallel "
                         f"all-reduces and expert all-to-alls cross the scale-out network")
    if not res.breakdown["fits"]:
        res.notes.append(f"batch {batch} exceeds the KV-cache capacity: at most "
                         f"{int(res.breakdown['max_batch'])} sequences of {final_ctx} tokens fit")
    if curve:
        res.extra["curve"] = throughput_latency(model, system, chips, input_len, output_len,
                                                precision,
                                                kv_precision=kv_precision,
                                                compute_precision=compute_precision,
                                                tp=tp, assumptions=assumptions, pricing=pricing,
                                                limit=int(res.breakdown["max_batch"]))
    return res


def throughput_latency(model: Model, system: System, chips: int, input_len: int,
                       output_len: int, precision: str = "bf16", *, limit: int,
                       **kw: Any) -> list[dict[str, Any]]:
    """Central TPOT and tokens/s per chip for batch 1, 2, 4... up to the KV-cache limit (from the
    first batch that gives every attention replica a sequence)."""
    rows, b = [], 1
    dp = layout(model, chips, kw.get("tp"))[1]
    while b < dp:
        b *= 2
    while b <= max(limit, dp):
        r = serve(model, system, chips, b, input_len, output_len, precision, curve=False, **kw)
        rows.append({"batch": b, "tpot_ms": r.breakdown["tpot"] * 1e3,
                     "tokens_per_s_per_chip": r.breakdown["tokens_per_s_per_chip"],
                     "tokens_per_s_per_user": 1 / r.breakdown["tpot"],
                     "fits": bool(r.breakdown["fits"])})
        b *= 2
    return rows
