"""The one adapter between the site and the workload layer: serving results on a grid.

The planner and the head-to-head pages show what the Python workload model computes,
never a second model: :func:`serve_point` is :func:`trnkb.workload.serve` exactly as
``trnkb workload serve --json`` calls it (batch 64 unless given, TCO pricing), reduced to
what the pages show; :func:`grid` runs it over :data:`GRID` at build time. When the
workload API changes, this module is the one place to follow it.
"""

from __future__ import annotations

import sys
from itertools import product
from typing import Any

from trnkb.kb import KnowledgeBase

# One system per headline chip (trnkb.compare.HEADLINE) plus Rubin: the nine head-to-head
# systems, Trainium3 first.
HEADLINE_SYSTEMS = ("trn3-nl72x2-switched", "trn2-nl32x2-3d-torus", "hgx-b200-8", "gb200-nvl72",
                    "gb300-nvl72", "vr-nvl144", "mi355x-8", "mi450x-ualoe72", "tpu-v7-pod")
# (metric key of WorkloadResult.to_dict(), label, unit shown, factor from the result's unit)
METRICS: tuple[tuple[str, str, str, float], ...] = (
    ("tokens_per_s_per_chip", "tokens/s per chip", "tok/s", 1.0),
    ("tokens_per_s_per_mw", "tokens/s per MW", "tok/s/MW", 1.0),
    ("usd_per_million_tokens", "cost per million tokens", "USD/Mtok", 1.0),
    ("ttft", "time to first token", "ms", 1e3),
    ("tpot", "time per output token", "ms", 1e3),
)
GRID: dict[str, tuple[Any, ...]] = {
    "precision": ("bf16", "fp8"),
    "chips": (8, 64),
    "lengths": ((2048, 512), (8192, 1024)),
}
BATCH = 64  # the CLI's default; the curve gives the other batches


def key(model: str, system: str, precision: str, chips: int, input_len: int,
        output_len: int) -> str:
    """The grid key of one point: ``model|system|precision|chips|input|output``."""
    return f"{model}|{system}|{precision}|{chips}|{input_len}|{output_len}"


def _r(x: Any) -> Any:
    return float(f"{x:.4g}") if isinstance(x, (int, float)) and x == x else None


def serve_point(model: Any, system: Any, chips: int, precision: str, input_len: int,
                output_len: int, batch: int = BATCH) -> dict[str, Any]:
    """One serving result as the pages show it: per metric ``[central, low, high]`` in the
    shown unit and the three inputs that move it most; the throughput-interactivity curve
    ``[[batch, tokens/s per user, tokens/s per chip], ...]``; or ``{"error": text}``."""
    from trnkb import workload as W

    try:
        res = W.serve(model, system, chips, batch, input_len, output_len, precision)
    except (KeyError, ValueError) as e:
        return {"error": str(e.args[0] if e.args else e)}
    d = res.to_dict()
    out: dict[str, Any] = {}
    for name, _, _, factor in METRICS:
        m = d["metrics"].get(name)
        if not m or m.get("central") is None:
            continue
        out[name] = [_r(m[k] * factor) if m.get(k) is not None else None
                     for k in ("central", "low", "high")]
        out[name + ":by"] = [x["input"] for x in m.get("moved_most_by", [])][:3]
    out["curve"] = [[c["batch"], _r(c["tokens_per_s_per_user"]), _r(c["tokens_per_s_per_chip"])]
                    for c in d.get("curve", [])]
    return out


def grid(kb: KnowledgeBase, models: list[str] | None = None,
         systems: tuple[str, ...] = HEADLINE_SYSTEMS, progress: bool = False) -> dict[str, Any]:
    """Every point of :data:`GRID` for ``models`` (default: every model of the KB) on
    ``systems``: ``{"axes": {...}, "points": {key: serve_point}}``."""
    from trnkb import workload as W
    from trnkb.workload.fromkb import model_ids

    models = models or model_ids(kb)
    mobj = {m: W.model(kb, m) for m in models}
    points: dict[str, Any] = {}
    for sid in systems:
        sobj = W.system(kb, sid, None)
        for m, prec, chips, (i, o) in product(models, GRID["precision"], GRID["chips"],
                                              GRID["lengths"]):
            points[key(m, sid, prec, chips, i, o)] = serve_point(mobj[m], sobj, chips, prec, i, o)
        if progress:
            print(f"site: serving grid: {sid} done", file=sys.stderr, flush=True)
    names = {m: mobj[m].name if hasattr(mobj[m], "name") else m for m in models}
    return {"axes": {"model": list(models), "model_names": names, "system": list(systems),
                     "precision": list(GRID["precision"]), "chips": list(GRID["chips"]),
                     "lengths": [list(x) for x in GRID["lengths"]], "batch": BATCH},
            "metrics": [list(x) for x in METRICS], "points": points}
