"""One transformer decoder layer on a chip: the time the workload model takes its MFU from.

:func:`layer_time` runs a dense decoder layer (pre-attention GEMM for Q, K and V, causal
GQA attention, the output projection, the gated MLP's up+gate and down GEMMs) on the
NeuronCores of one chip, cost only, and returns the time and the model FLOP utilisation.
The GEMMs are sharded over the cores (:func:`trnkb.engine.chip.chip_gemm`, all cores in
one simulation contending for HBM). Attention is sharded over heads; the heads of one core
run one after another with identical programs, so the layer simulates two heads of one
core and extends the per-head increment to the core's heads (exact once the schedule is
periodic; :func:`trnkb.engine.chip.chip_attention` simulates every head when time allows).
Elementwise work (norms, activation, residual adds) is not modelled: it is a few percent
of the FLOPs and overlaps the GEMMs on a real chip; the result says so.

The model's dimensions are inputs (the workload helper reads them from specs/models.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trnkb.engine.attention import attention_flops
from trnkb.engine.attention_kernel import attention_program, choose_evict_engine
from trnkb.engine.chip import chip_gemm
from trnkb.engine.model import NeuronCore
from trnkb.engine.result import Result
from trnkb.engine.timeline import Timeline
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

GEMM_GROUPS = 150  # DMA groups per core per GEMM: the layer's simulation budget


@dataclass
class LayerTime:
    """The time of one decoder layer on one chip.

    Attributes
    ----------
    seconds : the layer's time (s): the parts run one after another.
    flops : model FLOPs of the layer (2 x params x tokens for the GEMMs + attention).
    peak : the derived chip peak for the dtype (FLOPs calculator).
    parts : name -> (seconds, flops, bound_by) per part.
    """

    seconds: Quantity
    flops: Quantity
    peak: Quantity
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def mfu(self) -> float:
        """Model FLOP utilisation: flops / (seconds x derived chip peak)."""
        return float((self.flops / self.seconds / self.peak).to("").magnitude)

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds.to("s").magnitude, "flops": self.flops.to("FLOP").magnitude,
                "peak_flops_per_s": self.peak.to("FLOPS").magnitude, "mfu": self.mfu,
                "parts": self.parts, "notes": list(self.notes)}


def _attention_core_time(core: NeuronCore, tokens: int, heads_per_core: int, heads_kv_core: int,
                         head_dim: int, causal: bool) -> tuple[float, str]:
    """Time of one core's attention heads: two heads simulated, the increment extended."""
    exp_engine = "vector" if core.vector_exp_speedup else "scalar"
    evict = choose_evict_engine(core, tokens, head_dim, exp_engine)
    n = min(2, heads_per_core)
    kv = max(1, min(n, heads_kv_core * n // heads_per_core))
    tl = Timeline(core, execute=False)
    prog = attention_program(tl, tokens, tokens, head_dim, n, kv, causal, exp_engine, evict)
    first_head_done = 0.0
    q_tiles = -(-tokens // core.partitions)
    for i, _ in enumerate(prog):
        if i + 1 == q_tiles:
            first_head_done = tl.makespan
    t2 = tl.makespan
    res = tl.result("attention", "bf16", 0.0)
    if heads_per_core <= n:
        return t2, res.bound_by
    t1 = first_head_done
    return t2 + (heads_per_core - n) * (t2 - t1), res.bound_by


def layer_time(core: NeuronCore, tokens: int, hidden: int, heads: int, heads_kv: int,
               head_dim: int, ffn: int, cores: int | None = None, dtype: str = "bf16",
               causal: bool = True) -> LayerTime:
    """One dense decoder layer (prefill of ``tokens``) on ``cores`` NeuronCores of a chip.

    Parameters: model dimensions (``hidden``, query ``heads``, ``heads_kv``, ``head_dim``,
    MLP width ``ffn``); ``dtype`` of the GEMMs (attention runs in bf16). Returns a
    :class:`LayerTime` with ``seconds``, ``flops``, ``mfu`` and a per-part breakdown.

    >>> import trnkb
    >>> from trnkb.engine import NeuronCore, layer_time
    >>> core = NeuronCore.from_kb(trnkb.load(), "trainium3")
    >>> r = layer_time(core, 512, 1024, 8, 2, 128, 4096)  # a small model
    >>> 0 < r.mfu <= 1
    True
    """
    cores = core.cores_per_chip if cores is None else cores
    gemms = {
        "qkv": (tokens, hidden, (heads + 2 * heads_kv) * head_dim),
        "out": (tokens, heads * head_dim, hidden),
        "gate+up": (tokens, hidden, 2 * ffn),
        "down": (tokens, ffn, hidden),
    }
    parts: dict[str, dict[str, Any]] = {}
    total = 0.0
    flops = 0.0
    for name, (m, k, n) in gemms.items():
        r: Result = chip_gemm(core, m, k, n, dtype, cores=cores, max_groups=GEMM_GROUPS)
        s = r.seconds.to("s").magnitude
        parts[name] = {"seconds": s, "flops": 2.0 * m * n * k, "bound_by": r.bound_by,
                       "utilization": r.utilization}
        total += s
        flops += 2.0 * m * n * k
    per_core = -(-heads // cores)
    kv_core = max(1, -(-heads_kv // cores))
    s, bound = _attention_core_time(core, tokens, per_core, kv_core, head_dim, causal)
    af = attention_flops(tokens, tokens, head_dim, heads, causal)
    parts["attention"] = {"seconds": s, "flops": af, "bound_by": bound,
                          "utilization": af / s / core.peak_flops("bf16", cores).to(
                              "FLOPS").magnitude}
    total += s
    flops += af
    notes = [f"{cores} cores; GEMMs sharded over the cores in one simulation each; attention "
             f"sharded over heads ({per_core} per core), two heads simulated and the per-head "
             f"increment extended; elementwise work (norms, activation, residuals) not modelled"]
    return LayerTime(seconds=Q_(total, "s"), flops=Q_(flops, "FLOP"),
                     peak=core.peak_flops(dtype, cores), parts=parts, notes=notes)


def model_layer_time(kb: KnowledgeBase, model: str, chip: str, tokens: int,
                     cores: int | None = None,
                     dtype: str = "bf16", causal: bool = True) -> LayerTime:
    """:func:`layer_time` for a dense model of specs/models.yaml on a chip's NeuronCores.

    Reads ``d_model``, ``attention_heads``, ``kv_heads``, ``head_dim`` and ``ffn_size`` of
    ``model`` (a gated MLP: up and gate are one GEMM of width 2 x ffn_size).
    """
    def count(field: str) -> int:
        v = kb.get(model, field)
        if v is None:
            raise KeyError(f"{model} has no {field!r} in specs/models.yaml")
        return int(v.to("").magnitude)

    core = NeuronCore.from_kb(kb, chip)
    r = layer_time(core, tokens, count("d_model"), count("attention_heads"), count("kv_heads"),
                   count("head_dim"), count("ffn_size"), cores, dtype, causal)
    r.notes.append(f"model {model} from specs/models.yaml on {chip}")
    return r
