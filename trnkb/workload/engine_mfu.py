"""MFU for Trainium from the reference engine: one decoder layer simulated on a chip's NeuronCores.

:func:`engine_mfu` runs :func:`trnkb.engine.layer_time` (when this build has it) on the
model's layer shapes at ``tokens`` tokens and returns an ``mfu`` :class:`Input` to use in
place of the assumption: central = the engine's layer MFU, low = 80% of it (the engine does
not model elementwise work, kernel launches or stragglers), high = the engine's value. An
MoE layer is run as a dense layer whose FFN is the experts a token uses (``(active +
shared) x expert width``); MLA layers are not supported.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from trnkb.workload.models import Model
from trnkb.workload.ranges import Input

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase


def _layer_time() -> Callable[..., Any] | None:
    try:
        engine = importlib.import_module("trnkb.engine")
    except ImportError:
        return None
    fn: Callable[..., Any] | None = getattr(engine, "layer_time", None)
    return fn


def engine_available() -> bool:
    return _layer_time() is not None


def engine_mfu(kb: KnowledgeBase, model: Model, chip: str, tokens: int = 4096,
               dtype: str = "bf16") -> Input:
    """An ``mfu`` input for ``model`` on ``chip`` from the engine (see the module docstring)."""
    layer_time = _layer_time()
    if layer_time is None:
        raise ValueError("the reference engine's layer_time is not part of this build; "
                         "use the MFU assumption (--set mfu=...)")
    if model.attention == "mla":
        raise ValueError(f"the engine models GQA layers; {model.id} uses MLA")
    from trnkb.engine import NeuronCore

    if chip not in set(kb.table("cores")["chip"]):
        raise ValueError(f"the engine has no NeuronCore model of {chip} (cores table)")
    core = NeuronCore.from_kb(kb, chip)
    ffn = model.ffn_size or 0
    if model.moe:
        ffn = (model.active_experts + model.shared_experts) * (model.expert_ffn_size or 0)
    r = layer_time(core, tokens, model.d_model, model.attention_heads, model.kv_heads,
                   model.head_dim, ffn, dtype=dtype)
    m = float(r.mfu)
    return Input("mfu", 0.8 * m, m, m, "", "engine",
                 f"trnkb.engine.layer_time: one {model.id} decoder layer of {tokens} tokens in "
                 f"{dtype} on every NeuronCore of {chip}; low end 20% below for the elementwise "
                 "work, launches and stragglers it does not model")
