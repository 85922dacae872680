"""Language models as plain objects: parameter counts, FLOPs, KV-cache bytes from the architecture.

A :class:`Model` is built from one ``models`` row (:func:`trnkb.workload.fromkb.model`);
nothing here reads the knowledge base. Counts are exact integers; FLOPs are FLOP per token;
bytes are bytes.

Parameter count (per layer, ``d`` = d_model, ``h`` heads, ``k`` KV heads, ``hd`` head width):

* GQA/MHA attention: ``d*h*hd`` (Q) + ``2*d*k*hd`` (K, V) + ``h*hd*d`` (O), plus
  ``h*hd + 2*k*hd + d`` biases when the model has attention biases.
* MLA (DeepSeek): ``d*q_rank + q_rank*h*hd`` (Q through its low-rank path; ``hd`` =
  no-RoPE + RoPE width), ``d*(kv_rank + rope)`` (KV down-projection and the shared RoPE
  key), ``kv_rank*h*(hd - rope + v)`` (K/V up-projections), ``h*v*d`` (O), plus the two
  latent RMSNorm weights.
* FFN: ``3*d*f`` gated (SwiGLU), ``2*d*f`` dense. MoE layers: ``experts`` routed experts
  plus ``shared_experts`` of width ``expert_ffn_size``, and a router ``d*experts``.
* Two RMSNorm weights per layer (``2*d``), one final norm, input embedding ``V*d`` and
  output embedding ``V*d`` unless tied.

Active parameters count what one token touches: attention, dense FFNs, ``active_experts +
shared_experts`` experts, the router, norms and both embeddings (``include_input_embedding``
False drops the input embedding, which is a table lookup and does no FLOPs; gpt-oss's model
card counts active parameters that way).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Bytes per stored element by precision name (fp4 packs two elements per byte; MX block
# scales add 1 byte per 32 elements, which we ignore: 3%).
WEIGHT_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "mxfp8": 1.0, "int8": 1.0,
                "fp4": 0.5, "mxfp4": 0.5, "int4": 0.5}


@dataclass(frozen=True)
class Model:
    """One model's architecture (the fields of the ``models`` table; None where not given)."""

    id: str
    name: str
    layers: int
    d_model: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    vocabulary: int
    attention: str = "gqa"
    ffn_kind: str = "gated"
    ffn_size: int | None = None
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_layers: int = 0
    dense_layers: int = 0
    experts: int = 0
    active_experts: int = 0
    shared_experts: int = 0
    expert_ffn_size: int | None = None
    tied_embeddings: bool = False
    attention_bias: bool = False
    context_length: int | None = None
    reported_total: float | None = None
    reported_active: float | None = None
    sources: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # -- shape ---------------------------------------------------------------------------
    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0

    @property
    def v_dim(self) -> int:
        """Value width per head."""
        return self.v_head_dim or self.head_dim

    # -- parameters ----------------------------------------------------------------------
    def attention_params(self) -> int:
        """Parameters of one attention block (projections, biases, MLA latent norms)."""
        d, h, k, hd = self.d_model, self.attention_heads, self.kv_heads, self.head_dim
        if self.attention == "mla":
            rope, kv, v = self.qk_rope_head_dim or 0, self.kv_lora_rank or 0, self.v_dim
            q = d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * h * hd \
                if self.q_lora_rank else d * h * hd
            return q + d * (kv + rope) + kv + kv * h * (hd - rope + v) + h * v * d
        p = d * h * hd + 2 * d * k * hd + h * hd * d
        if self.attention_bias:
            p += h * hd + 2 * k * hd + d
        return p

    def ffn_params(self, width: int) -> int:
        return (3 if self.ffn_kind == "gated" else 2) * self.d_model * width

    def params(self) -> dict[str, int]:
        """Parameter count by part (``total`` included)."""
        d, L = self.d_model, self.layers
        dense_ffn_layers = self.dense_layers if self.moe else L
        expert = self.ffn_params(self.expert_ffn_size or 0) if self.moe else 0
        parts = {
            "embedding": self.vocabulary * d,
            "unembedding": 0 if self.tied_embeddings else self.vocabulary * d,
            "attention": L * self.attention_params(),
            "dense_ffn": dense_ffn_layers * self.ffn_params(self.ffn_size or 0),
            "routed_experts": self.moe_layers * self.experts * expert,
            "shared_experts": self.moe_layers * self.shared_experts * expert,
            "router": self.moe_layers * d * self.experts,
            "norms": L * 2 * d + d,
        }
        parts["total"] = sum(parts.values())
        return parts

    @property
    def total_params(self) -> int:
        return self.params()["total"]

    @property
    def expert_params(self) -> int:
        """Routed-expert parameters (sharded by expert parallelism)."""
        return self.params()["routed_experts"]

    def active_params(self, include_input_embedding: bool = True) -> int:
        """Parameters one token uses (see the module docstring)."""
        p = self.params()
        routed = p["routed_experts"] * self.active_experts // self.experts if self.moe else 0
        active = p["total"] - p["routed_experts"] + routed
        return active if include_input_embedding else active - p["embedding"]

    def tp_replicated_params(self) -> int:
        """Parameters the serving stacks hold whole on every tensor-parallel rank: an MLA
        model's latent down-projections, ``d x (q_rank + kv_rank + rope)`` per layer (without
        a query rank only the KV one), built as one replicated linear (SGLang's
        ``deepseek_v2.py``: ``fused_qkv_a_proj_with_mqa = ReplicatedLinear(hidden_size,
        q_lora_rank + kv_lora_rank + qk_rope_head_dim)``; vLLM's ``MergedReplicatedLinear``).
        0 for other attention."""
        if self.attention != "mla":
            return 0
        latent = (self.q_lora_rank or 0) + (self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0)
        return self.layers * self.d_model * latent

    def expert_bytes(self, bytes_per_param: float) -> float:
        """Bytes of one routed expert of one layer."""
        return self.ffn_params(self.expert_ffn_size or 0) * bytes_per_param if self.moe else 0.0

    # -- FLOPs ---------------------------------------------------------------------------
    def _attended(self, context: float, causal_mean: bool) -> float:
        """Sum over layers of the positions one token attends to (sliding layers capped)."""
        full = context / 2 if causal_mean else context
        if self.sliding_window and self.sliding_layers:
            w = min(self.sliding_window, full)
            return (self.layers - self.sliding_layers) * full + self.sliding_layers * w
        return self.layers * full

    def attention_flops_per_token(self, context: float, causal_mean: bool = True) -> float:
        """Forward FLOPs of QK^T and AV for one token: ``2*h*(hd + v)*positions`` per layer.

        ``causal_mean`` averages a causal sequence of length ``context`` (each token sees
        half of it on average); otherwise the token attends to all ``context`` positions
        (decode).
        """
        return (2.0 * self.attention_heads * (self.head_dim + self.v_dim)
                * self._attended(context, causal_mean))

    def decode_attention_flops_per_position(self) -> float:
        """Decode FLOPs of QK^T and AV per new token per attended position, all layers.

        GQA/MHA: ``2*h*(hd + v)`` per layer. MLA decodes in the absorbed form (DeepSeek-V2
        paper, section 2.1.3: the K/V up-projections fold into the query and output
        projections), so the scores and the weighted sum run over the latent:
        ``2*h*((kv_rank + rope) + kv_rank)`` per layer, 3.4x the per-head count for
        DeepSeek-V3 (``2*128*(576 + 512)`` against ``2*128*(192 + 128)``).
        """
        if self.attention == "mla":
            kv, rope = self.kv_lora_rank or 0, self.qk_rope_head_dim or 0
            return 2.0 * self.attention_heads * (kv + rope + kv) * self.layers
        return 2.0 * self.attention_heads * (self.head_dim + self.v_dim) * self.layers

    def forward_flops_per_token(self, context: float, causal_mean: bool = True) -> float:
        """``2 * active parameters (without the input embedding) + attention``."""
        return (2.0 * self.active_params(False)
                + self.attention_flops_per_token(context, causal_mean))

    def training_flops_per_token(self, seq_len: float, include_attention: bool = True) -> float:
        """``6N + 3 x attention``: forward plus a backward of twice the forward.

        N is the active parameter count without the input embedding; attention over a
        causal sequence of ``seq_len`` is ``6*L*h*(hd+v)/2*seq_len`` (half the square: a
        flash-attention kernel skips the masked blocks).
        """
        attn = 3 * self.attention_flops_per_token(seq_len) if include_attention else 0.0
        return 6.0 * self.active_params(False) + attn

    # -- KV cache ------------------------------------------------------------------------
    def kv_elements_per_token(self) -> float:
        """Cached elements per token over all (full-attention) layers.

        GQA: ``2 * kv_heads * head_dim`` per layer; MLA: ``kv_lora_rank + rope`` per layer
        (the latent and the shared RoPE key).
        """
        if self.attention == "mla":
            return float(self.layers * ((self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0)))
        return float(self.layers * 2 * self.kv_heads * self.head_dim)

    def kv_bytes(self, context: float, bytes_per_element: float) -> float:
        """KV-cache bytes of one sequence of ``context`` tokens.

        Sliding layers keep only their window."""
        per_layer = self.kv_elements_per_token() / self.layers * bytes_per_element
        if self.sliding_window and self.sliding_layers:
            return per_layer * ((self.layers - self.sliding_layers) * context
                                + self.sliding_layers * min(context, self.sliding_window))
        return per_layer * self.layers * context
