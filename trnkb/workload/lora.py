"""LoRA fine-tuning: the adapters' parameters and the FLOPs of a step with a frozen base.

LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models") freezes the
base weights and trains, for each targeted weight matrix ``W`` (``d_in x d_out``), a pair
``A`` (``d_in x r``) and ``B`` (``r x d_out``): ``r (d_in + d_out)`` parameters. Per token:

* forward ``2 N`` (the base, ``N`` active parameters without the input embedding) ``+ 2 P``
  (the adapters, ``P`` their parameters) plus attention;
* backward: activation gradients through the frozen base (``2 N``), none for its weights;
  the adapters' both gradients (``4 P``); attention twice its forward.

So ``4 N + 6 P + 3 x attention`` per token, against ``6 N + 3 x attention`` for full
training; an evaluation runs the forward alone, base and adapters: ``2 N + 2 P +
attention``. Targets by name: ``qkv`` (``d -> (h + 2 k) hd``: the fused query/key/value
projection), ``o`` (``h v -> d``), ``gate``, ``up`` (``d -> f``), ``down`` (``f -> d``).
MLPerf Training's Llama 2 70B LoRA reference trains ``r = 16`` on ``qkv_proj, o_proj``
(specs/benchmarks.yaml, ``mlperf-train-llama2-70b-lora``).
"""

from __future__ import annotations

from dataclasses import dataclass

from trnkb.workload.models import Model

_TARGETS = ("qkv", "o", "gate", "up", "down")


@dataclass(frozen=True)
class LoRA:
    """Adapter rank and the matrices it targets (names above)."""

    rank: int = 16
    targets: tuple[str, ...] = ("qkv", "o")

    def __post_init__(self) -> None:
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank < 1:
            raise ValueError(f"LoRA rank must be a whole number >= 1, not {self.rank!r}")
        bad = [t for t in self.targets if t not in _TARGETS]
        if bad or not self.targets:
            raise ValueError(f"LoRA targets must be among {', '.join(_TARGETS)}, not "
                             f"{', '.join(bad) or 'none'}")

    @property
    def label(self) -> str:
        return f"lora r={self.rank} on {','.join(self.targets)}"


def adapted_matrices(model: Model, targets: tuple[str, ...]) -> list[tuple[int, int, int]]:
    """``(d_in, d_out, layers)`` of each targeted matrix kind (dense FFN layers only for the
    FFN targets: MoE experts are not adapted here)."""
    d, h, k, hd, v = (model.d_model, model.attention_heads, model.kv_heads, model.head_dim,
                      model.v_dim)
    f = model.ffn_size or 0
    ffn_layers = model.dense_layers if model.moe else model.layers
    shapes = {"qkv": (d, (h + 2 * k) * hd, model.layers), "o": (h * v, d, model.layers),
              "gate": (d, f, ffn_layers), "up": (d, f, ffn_layers), "down": (f, d, ffn_layers)}
    return [shapes[t] for t in targets]


def adapter_params(model: Model, lora: LoRA) -> int:
    """Trainable parameters of the adapters over all layers: ``r (d_in + d_out)`` per
    targeted matrix and layer (:func:`adapted_matrices`)."""
    return sum(lora.rank * (din + dout) * n for din, dout, n in
               adapted_matrices(model, lora.targets))


def lora_flops_per_token(model: Model, lora: LoRA, seq_len: float,
                         include_attention: bool = True) -> float:
    """``4 N + 6 P + 3 x attention`` (see the module docstring)."""
    attn = 3 * model.attention_flops_per_token(seq_len) if include_attention else 0.0
    return 4.0 * model.active_params(False) + 6.0 * adapter_params(model, lora) + attn


def lora_forward_flops_per_token(model: Model, lora: LoRA, seq_len: float,
                                 include_attention: bool = True) -> float:
    """``2 N + 2 P + attention``: one forward (an evaluation) of the frozen base and the
    adapters."""
    attn = model.attention_flops_per_token(seq_len) if include_attention else 0.0
    return 2.0 * model.active_params(False) + 2.0 * adapter_params(model, lora) + attn
