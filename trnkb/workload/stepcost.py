"""Shape-aware time of one serving step: the batch a continuous-batching scheduler runs.

A step is described by four numbers for one attention group (one tensor-parallel attention
replica; its data-parallel siblings run the same step in lockstep): ``n_dec`` decoding
sequences (one token each), ``ctx_dec`` the sum of their contexts (tokens attended),
``n_pre`` prefill tokens (chunks of prompts) and ``attn_pre`` the positions those prefill
tokens attend to (a chunk of ``c`` tokens after ``p`` cached ones attends to
``c*p + c*(c+1)/2``). :func:`step_time` returns seconds per pipeline stage pass times
``pp``, the sum of named parts, each a roofline of its own shape:

* ``dense``: the local attention projections (an MLA model's latent down-projections whole
  on every tensor-parallel rank: :meth:`~trnkb.workload.models.Model.tp_replicated_params`),
  dense FFNs, shared experts and output head as GEMMs of ``M = tokens`` rows: ``max(FLOPs / (peak x
  gemm_eff(M)), weight bytes / (HBM x hbm_efficiency))`` with ``gemm_eff(M) =
  gemm_efficiency x M / (M + gemm_m_half)`` (small-M decode GEMMs waste the tile rows they
  do not fill: :mod:`trnkb.workload.gemmfit`; below ``gemm_m_min``, the smallest M of the
  sweep that fitted ``m_half`` where one is given, the waste ramps down linearly to 0 at
  M = 0: GEMV kernels bound by the weight stream);
  at a 4-bit compute format ``gemm_efficiency`` is multiplied by ``fp4_gemm_efficiency``
  (:mod:`~trnkb.workload.fp4fit`: the fits were read on 8- and 16-bit GEMMs);
* ``experts``: routed experts at their real rows, ``M = tokens x k / E`` per expert across the
  expert-parallel group, times ``moe_imbalance`` (busiest chip over mean, a named ranged
  input) for the chip that sets the pace; the weights of the experts the batch touches; at
  ``expert_gemm_efficiency`` and ``expert_gemm_m_half`` where the stack's fused-MoE kernel
  has its own fit (:mod:`~trnkb.workload.rocmfit`, measured at its format: not scaled by
  ``fp4_gemm_efficiency``), else the dense GEMMs' values;
* ``attention`` (at ``attention_peak_flops``, the peak of the KV-cache format, bf16 or fp8,
  not of 4-bit weights): decode ``max(FLOPs / (peak x attention_efficiency), KV bytes / (HBM x
  hbm_efficiency))`` with MLA's absorbed FLOPs (:meth:`Model.decode_attention_flops_per_position`);
  prefill ``FLOPs / (peak x attention_efficiency)`` (flash attention, causal half; an MLA
  model's prefill at ``prefill_attention_peak_flops``, the bf16 peak: the stacks run it as
  MHA on K/V up-projected from the latent in 16 bits, whatever the cache's format; under
  Transformers NeuronX the rules of :mod:`~trnkb.workload.neuronx`);
* ``elementwise``: norms, residual adds and activation traffic (``elementwise_fraction``);
* ``comm``: per layer 2 tensor-parallel all-reduces, per MoE layer under attention data
  parallelism (``dp > 1``) an expert dispatch and combine all-to-all (with ``dp = 1`` every
  rank of the group holds every token and the layer's second all-reduce sums the experts'
  outputs, as vLLM's ``FusedMoE`` reduces under TP or EP: ``tensor_model_parallel_all_reduce``
  in ``vllm/model_executor/layers/fused_moe/layer.py``), per stage boundary a point-to-point
  send, each over the system's network (:class:`~trnkb.workload.collectives.Network`'s
  bandwidth) plus the stack's latency per collective, ``collective_latency +
  collective_latency_per_rank x ranks``, fitted to collective benchmarks
  (:mod:`~trnkb.workload.collfit`); ``serve_overlap`` of it hidden;
* a step with prefill tokens takes at least ``eager_prefill_floor`` per layer: the host's
  launch time of an eager forward (:mod:`~trnkb.workload.prefillhost`; MLA models only);
* ``fixed``: ``step_overhead`` per step (scheduler, sampling, the launches a graph does not
  hide) and per layer ``layer_overhead``, or for a MoE or MLA model (where the values hold
  ``kernel_overhead``) ``kernels_per_layer x kernel_overhead``, the floor of the chain of
  small kernels a decode layer runs (:mod:`~trnkb.workload.kernelfit`); plus ``layer_extra``
  per layer where a stack build runs default kernels a tuned one does not (0 unless given:
  :func:`~trnkb.workload.rocmfit.untuned_layer_extra`).

Every rate is a float in SI units (FLOP/s, B/s, s); arrays work too (numpy), so a recorded
schedule can be re-timed for every input end at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from trnkb.workload.models import Model
from trnkb.workload.neuronx import decode_context_fn, padded_heads, prefill_attention_fn
from trnkb.workload.system import System


@dataclass(frozen=True)
class Layout:
    """How one model replica sits on its chips.

    ``tp`` chips share each attention group's heads (tensor parallel), ``dp`` attention groups
    (attention data parallel; ``dp > 1`` with a MoE model is DEP: experts spread over all
    ``tp x dp`` chips of a stage), ``pp`` pipeline stages, ``replicas`` copies of all that.
    Chips per replica ``tp x dp x pp``. ``heads``/``kv_heads``: the query and KV heads an
    attention group holds when its stack pads them to a multiple of its tensor-parallel
    ranks (Transformers NeuronX: :func:`~trnkb.workload.neuronx.padded_heads`); 0, the
    model's own.
    """

    tp: int = 1
    dp: int = 1
    pp: int = 1
    replicas: int = 1
    heads: int = 0
    kv_heads: int = 0

    @property
    def stage_chips(self) -> int:
        return self.tp * self.dp

    @property
    def chips(self) -> int:
        return self.tp * self.dp * self.pp

    @property
    def label(self) -> str:
        parts = [f"tp={self.tp}"]
        if self.dp > 1:
            parts.append(f"dp={self.dp}")
        if self.pp > 1:
            parts.append(f"pp={self.pp}")
        if self.replicas > 1:
            parts.append(f"replicas={self.replicas}")
        if self.heads:
            parts.append(f"heads={self.heads}")
        if self.kv_heads:
            parts.append(f"kv_heads={self.kv_heads}")
        return ",".join(parts)


def padded_layout(model: Model, lay: Layout, cores_per_chip: int) -> Layout:
    """``lay`` with the heads Transformers NeuronX pads to its ``tp x cores_per_chip``
    NeuronCores (:func:`~trnkb.workload.neuronx.padded_heads`); ``lay`` itself when
    ``cores_per_chip`` is 0 (another stack), the model is MLA or it holds the model's own
    heads (the cores divide the query and the KV heads)."""
    if not cores_per_chip or model.attention == "mla":
        return lay
    heads, kv = padded_heads(model.attention_heads, model.kv_heads, lay.tp * cores_per_chip)
    if (heads, kv) == (model.attention_heads, model.kv_heads):
        return lay
    return replace(lay, heads=heads, kv_heads=kv)


@dataclass(frozen=True)
class StepModel:
    """The shape constants of one model on one layout (bytes per element given)."""

    model: Model
    system: System
    layout: Layout
    weight_bytes: float
    kv_bytes: float
    params: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        p = self.model.params()  # counted once
        extra = self.padded_attention_params()
        if extra:
            p = {**p, "attention": p["attention"] + extra, "total": p["total"] + extra}
        object.__setattr__(self, "params", p)

    def padded_attention_params(self) -> int:
        """Parameters the layout's padded heads add (:class:`Layout`): Q and O weights of the
        padded query heads, K and V weights of the padded or replicated KV heads (Transformers
        NeuronX pads them with zeros and repeats replicated K/V heads, ``decoder.py``
        ``to_neuron``; the GEMMs stream and multiply them like real ones)."""
        m, lay = self.model, self.layout
        if not (lay.heads or lay.kv_heads) or m.attention == "mla":
            return 0
        dq = (lay.heads or m.attention_heads) - m.attention_heads
        dkv = (lay.kv_heads or m.kv_heads) - m.kv_heads
        return m.layers * m.d_model * m.head_dim * 2 * (dq + dkv)

    def dense_params_per_chip(self) -> float:
        """Parameters one chip holds of all but the routed experts: split over ``tp x pp``,
        the replicated ones
        (:meth:`~trnkb.workload.models.Model.tp_replicated_params`) over ``pp`` only."""
        p, lay = self.params, self.layout
        rep = self.model.tp_replicated_params()
        return (p["total"] - p["routed_experts"] - rep) / (lay.tp * lay.pp) + rep / lay.pp

    def weights_per_chip(self) -> float:
        p = self.params
        lay = self.layout
        dense = self.dense_params_per_chip() * self.weight_bytes
        experts = p["routed_experts"] * self.weight_bytes / (lay.stage_chips * lay.pp)
        return dense + experts

    def kv_shard(self) -> int:
        """Ranks of an attention group that split one sequence's cache (GQA: by KV head; an
        MLA latent is not split by head, so every tensor-parallel rank holds all of it)."""
        if self.layout.kv_heads:  # padded to a multiple of the ranks: every rank its share
            return self.layout.tp
        return 1 if self.model.attention == "mla" else min(self.layout.tp, self.model.kv_heads)

    def head_factor(self) -> float:
        """Query heads held over the model's (padded heads: :class:`Layout`; else 1)."""
        return self.layout.heads / self.model.attention_heads if self.layout.heads else 1.0

    def kv_head_factor(self) -> float:
        """KV heads held over the model's (padded heads: :class:`Layout`; else 1)."""
        return self.layout.kv_heads / self.model.kv_heads if self.layout.kv_heads else 1.0

    def kv_bytes_per_token_chip(self) -> float:
        """KV-cache bytes one token of context costs on one chip of its attention group."""
        m = self.model
        return (m.kv_bytes(1.0, self.kv_bytes) * self.kv_head_factor() / self.kv_shard()
                / self.layout.pp)

    def kv_capacity_tokens(self, hbm: float, workspace_fraction: float) -> float:
        """Tokens of context one attention group holds (0 when the weights do not fit)."""
        free = hbm * (1 - workspace_fraction) - self.weights_per_chip()
        return max(free, 0.0) / self.kv_bytes_per_token_chip()


def step_fn(sm: StepModel, v: Mapping[str, float]) -> Callable[..., Any]:
    """``fn(n_dec, ctx_dec, n_pre, attn_pre, parts=False)``: seconds of one step for the input
    values ``v`` (see the module docstring), the constants folded once. Floats or numpy arrays
    (one entry per step); with ``parts`` also ``{part: seconds}``."""
    m, lay, net = sm.model, sm.layout, sm.system.network
    tp, dp, pp = lay.tp, lay.dp, lay.pp
    L = m.layers / pp  # layers per stage
    moe_L = m.moe_layers / pp
    peak, bw = v["peak_flops"], v["hbm_bandwidth"] * v["hbm_efficiency"]
    # a 4-bit GEMM reaches a lower fraction of its peak than the 8/16-bit GEMMs of the fits
    e_max, m_half = v["gemm_efficiency"] * v.get("fp4_gemm_efficiency", 1.0), v["gemm_m_half"]
    m_min = v.get("gemm_m_min", 0.0)
    p = sm.params
    wb = sm.weight_bytes
    # dense matmuls of one stage on one chip: every parameter but the routed experts and the
    # input embedding (a lookup), split over tp (an MLA model's latent down-projections whole)
    dense_params = sm.dense_params_per_chip() - p["embedding"] / (tp * pp)
    dense_flops_tok, dense_mem = 2.0 * dense_params / peak, dense_params * wb / bw
    imb = v["moe_imbalance"]
    if m.moe:
        chips = lay.stage_chips
        k_over_e = m.active_experts / m.experts
        local_experts = m.experts / chips
        expert_params = m.ffn_params(m.expert_ffn_size or 0)
        exp_flops_row = 2.0 * local_experts * expert_params * moe_L / peak
        exp_mem_each = expert_params * wb * moe_L / bw
    share = L / m.layers
    heads_share = share / tp * sm.head_factor()  # padded heads compute like real ones
    ae = v["attention_efficiency"]
    a_peak = v.get("attention_peak_flops", peak)  # attention runs at the cache's format
    attn_dec_c = m.decode_attention_flops_per_position() * heads_share / (a_peak * ae)
    kv_c = sm.kv_bytes_per_token_chip() / bw  # per stage: share = 1 / pp
    p_peak = v.get("prefill_attention_peak_flops", a_peak)  # MLA prefill: MHA in bf16
    attn_pre_c = (2.0 * m.attention_heads * (m.head_dim + m.v_dim) * m.layers * heads_share
                  / (p_peak * ae))
    tnx_pre = prefill_attention_fn(sm, v)  # Transformers NeuronX's prefill rules, or None
    tnx_ctx = decode_context_fn(v)  # its decode attends a whole token bucket, or None
    d = m.d_model
    f_dense = (m.ffn_size or 0) * (m.dense_layers if m.moe else m.layers)
    f_moe = (m.active_experts + m.shared_experts) * (m.expert_ffn_size or 0) * m.moe_layers
    elem_c = 2.0 * (10 * d * m.layers + 3 * (f_dense + f_moe) / tp) / pp \
        * v["elementwise_fraction"] / bw
    # bandwidth from the network model; latency from the stack's fitted small-message time
    kw = {"efficiency": v["collective_efficiency"], "step_latency": 0.0, "hop_latency": 0.0,
          "scaleout_latency": v["scaleout_latency"],
          "scaleup_scale": v["scaleup_bandwidth"] / sm.system.scaleup_input.mid,
          "scaleout_scale": v["scaleout_bandwidth"] / sm.system.scaleout_input.mid}

    def launch_for(ranks: int) -> float:
        return v["collective_latency"] + v["collective_latency_per_rank"] * ranks
    # collective time = a + b x tokens (the network model is linear in bytes above latency)
    comm_a = comm_b = 0.0
    if tp > 1:
        a, b = _line(net, "all-reduce", d * 2.0, tp, kw)
        comm_a += 2 * L * (a + launch_for(tp))
        comm_b += 2 * L * b
    if m.moe and dp > 1:  # with dp = 1 the TP all-reduce above sums the experts' outputs
        per_tok = m.active_experts * d * (wb if wb <= 1 else 2.0) / tp
        a, b = _line(net, "all-to-all", per_tok, lay.stage_chips, kw)
        comm_a += 2 * moe_L * (a + launch_for(lay.stage_chips))
        comm_b += 2 * moe_L * b
    if pp > 1:
        link = net.scaleout if lay.chips > net.domain else net.group(2).injection
        comm_a += (pp - 1) / pp * launch_for(2)
        comm_b += (pp - 1) / pp * d * 2.0 / (link * v["collective_efficiency"])
    overlap = v["serve_overlap"]
    per_layer = (v["kernels_per_layer"] * v["kernel_overhead"] if "kernel_overhead" in v
                 else v["layer_overhead"])
    fixed = v["step_overhead"] / pp + (per_layer + v.get("layer_extra", 0.0)) * L
    eager = v.get("eager_prefill_floor", 0.0) * L  # a prefill step's host floor (prefillhost)

    # GEMM time at M rows = FLOPs x (M + m_half) / (M x peak x gemm_efficiency): each GEMM
    # pays m_half rows of waste; a routed expert only when the batch touches it
    dense_c = dense_flops_tok / e_max
    if m.moe:  # the experts' own GEMM fit where the stack has one (rocmfit), else the dense
        exp_c = exp_flops_row / v.get("expert_gemm_efficiency", e_max)
        e_half = v.get("expert_gemm_m_half", m_half)
        tok_to_local = dp * k_over_e * local_experts * imb  # rows on the busiest chip
    moe = m.moe

    def fn(n_dec: Any, ctx_dec: Any, n_pre: Any, attn_pre: Any, parts: bool = False) -> Any:
        arr = isinstance(n_dec, np.ndarray) or isinstance(n_pre, np.ndarray)
        mx = np.maximum if arr else max
        mn = np.minimum if arr else min
        tokens = n_dec + n_pre
        # below the smallest M of the GEMM sweep (m_min) the waste ramps down to 0 at M = 0:
        # there the stacks run GEMV / split-K kernels bound by the weight stream
        waste = m_half * (mn(tokens / m_min, 1.0) if m_min > 0 else 1.0)
        t_dense = mx(dense_c * (tokens + waste), dense_mem)
        if moe:
            touched = local_experts * (1 - (1 - k_over_e) ** (tokens * dp))
            rows = tokens * dp * k_over_e  # mean rows of a routed expert
            w_exp = e_half * (mn(rows / m_min, 1.0) if m_min > 0 else 1.0)
            t_exp = mx(exp_c / local_experts * (tokens * tok_to_local + touched * w_exp),
                       touched * exp_mem_each)
        else:
            t_exp = 0.0 * tokens
        t_pre = attn_pre * attn_pre_c
        if tnx_ctx is not None:
            ctx_dec = tnx_ctx(n_dec, ctx_dec)
        t_attn = mx(ctx_dec * attn_dec_c, ctx_dec * kv_c) + (
            t_pre if tnx_pre is None else tnx_pre(n_pre, attn_pre, t_pre))
        t_elem = tokens * elem_c
        comm = (comm_a + comm_b * tokens) * (tokens > 0)
        compute = t_dense + t_exp + t_attn + t_elem
        exposed = comm - mn(comm * overlap, compute)
        total = raw = (compute + exposed + fixed) * pp
        if eager:  # a step with prefill runs eagerly: at least the host's launch time
            total = (np.where(n_pre > 0, np.maximum(total, eager * pp), total) if arr
                     else (max(total, eager * pp) if n_pre > 0 else total))
        if parts:
            return total, {"dense": t_dense * pp, "experts": t_exp * pp,
                           "attention": t_attn * pp, "elementwise": t_elem * pp,
                           "comm": comm * pp, "comm_exposed": exposed * pp, "fixed": fixed * pp,
                           "prefill_host": total - raw}
        return total

    return fn


def step_time(sm: StepModel, v: Mapping[str, float], n_dec: Any, ctx_dec: Any, n_pre: Any,
              attn_pre: Any, parts: bool = False) -> Any:
    """Seconds of one step (see :func:`step_fn`)."""
    return step_fn(sm, v)(n_dec, ctx_dec, n_pre, attn_pre, parts)


def _line(net: Any, kind: str, bytes_per_token: float, g: int,
          kw: dict[str, float]) -> tuple[float, float]:
    """(seconds at zero tokens, seconds per token) of a collective of ``bytes_per_token`` x
    tokens bytes over ``g`` ranks."""
    t1 = net.time(kind, bytes_per_token, g, 1, **kw)
    t2 = net.time(kind, bytes_per_token * 1e4, g, 1, **kw)
    slope = (t2 - t1) / (1e4 - 1)
    return t1 - slope, slope
