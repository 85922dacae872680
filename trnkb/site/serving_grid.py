"""The one adapter between the site and the workload layer: serving and training on a grid.

The planner and the head-to-head pages show what the Python workload model computes, never a
second model. At build time :func:`grid` runs, for every model of :data:`MODELS`, headline
system, precision and prompt/output lengths of :data:`GRID`:

- serving: :func:`trnkb.workload.fleet.frontier` (the step-level simulator,
  :func:`trnkb.workload.simulate`, under a closed loop of 1, 2, 4 ... 1024 clients) on one
  replica of :func:`trnkb.workload.fleet.replica_chips` chips (what ``trnkb workload
  plan-fleet`` uses without ``--chips``), in the owner and the cloud pricing view
  (:mod:`trnkb.workload.cost`); each operating point keeps every metric of :data:`METRICS`
  as central, low and high and the three inputs that move it most
  (:func:`trnkb.workload.cost.range_shares`), plus the facility watts per chip
  (chip power x PUE) the power-budget answer divides by;
- training: :func:`trnkb.workload.fleet.train_plan` for each (tokens, days) of :data:`TRAIN`,
  and :func:`trnkb.workload.train` at the planned size for the inputs that move each result.

The page then only selects: the operating point with the most tokens/s per chip whose
central tokens/s per user meets a target (:func:`operating`, the rule of
:func:`trnkb.workload.fleet.operating_point`), the most interactive point under a $/Mtok
ceiling (the rule of :func:`~trnkb.workload.fleet.cost_target`), and the fleet a power
budget buys (the arithmetic of :func:`~trnkb.workload.fleet.plan_fleet`: chips = facility W
/ W per chip, racks = chips // chips per rack, fleet tokens/s = MW x tokens/s per MW).
Tests check those three against the workload layer. When the workload API changes, this
module is the one place to follow it.

Cost: about 0.3 s of CPU per frontier, a few minutes for the whole grid
(``bench/planner_bench.py`` prints it). :func:`cached_grid` keeps the last grid in the user
cache directory under a hash of everything it depends on (the model and system objects the
workload layer reads, the grid's settings, this module and the code and data of the layers
the workload layer stands on), so a
rebuild with the same knowledge base and code reuses it; any change recomputes it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from itertools import product
from pathlib import Path
from typing import Any

from trnkb.kb import KnowledgeBase

# One system per headline chip (trnkb.compare.HEADLINE) plus Rubin: the nine head-to-head
# systems, Trainium3 first.
HEADLINE_SYSTEMS = ("trn3-nl72x2-switched", "trn2-nl32x2-3d-torus", "hgx-b200-8", "gb200-nvl72",
                    "gb300-nvl72", "vr-nvl144", "mi355x-8", "mi450x-ualoe72", "tpu-v7-pod")
# The models an analyst plans for (the ledger's historical configurations, GPT-3 sizes,
# Llama 2 7B/13B..., stay out: each model costs about 20 s of CPU per build on the grid)
MODELS = ("llama-3-1-8b", "llama-3-1-70b", "llama-3-1-405b", "llama-2-70b", "mixtral-8x7b",
          "mixtral-8x22b", "deepseek-v3", "qwen3-235b-a22b", "qwen3-32b", "gpt-oss-120b")
# (metric of the simulator's result, label, unit shown, factor from the result's unit,
#  lower is better)
METRICS: tuple[tuple[str, str, str, float, bool], ...] = (
    ("tokens_per_s_per_chip", "tokens/s per chip", "tok/s", 1.0, False),
    ("tokens_per_s_per_user", "tokens/s per user", "tok/s", 1.0, False),
    ("tokens_per_s_per_mw", "tokens/s per MW of facility power", "tok/s/MW", 1.0, False),
    ("usd_per_million_tokens", "cost per million output tokens", "USD/Mtok", 1.0, True),
    ("ttft_p50", "time to first token (p50)", "ms", 1e3, True),
    ("tpot_p50", "time per output token (p50)", "ms", 1e3, True),
)
# train_plan's ranged results: (key, label, unit)
TRAIN_METRICS: tuple[tuple[str, str, str], ...] = (
    ("days", "days to train", "days"),
    ("cost_usd", "cost of the run", "USD"),
    ("energy_mwh", "energy of the run", "MWh"),
    ("facility_mw", "facility power of the fleet", "MW"),
)
GRID: dict[str, tuple[Any, ...]] = {
    "precision": ("bf16", "fp8"),
    # (prompt, output) tokens: the CLI's default and the InferenceMAX 8k/1k setting
    "lengths": ((2048, 512), (8192, 1024)),
    "pricing": ("owner", "cloud"),
}
LENGTH_NAMES = {(2048, 512): "2048 / 512 (the CLI default)",
                (8192, 1024): "8192 / 1024 (benchmark dashboard-8k-1k)"}
# train_plan at each (tokens, days): Llama 3's 15T tokens and a 2T-token run, in 30 or 90 days
TRAIN: dict[str, tuple[Any, ...]] = {
    "precision": ("bf16",),
    "tokens": (2e12, 15e12),
    "days": (30, 90),
}
_TRAIN_KW: dict[str, Any] = {"seq_len": 8192, "batch_tokens": 16 * 2**20}  # train_plan's


def key(*parts: Any) -> str:
    """The grid key of one point: its parts joined by ``|`` (serving: ``model|system|
    precision|input|output``; training: ``model|system|precision|tokens|days``)."""
    return "|".join(str(int(p)) if isinstance(p, float) and p.is_integer() else str(p)
                    for p in parts)


def _r(x: Any) -> Any:
    return float(f"{x:.4g}") if isinstance(x, (int, float)) and x == x else None


def _ranged(r: Any, factor: float = 1.0) -> list[Any]:
    return [_r(r.mid * factor), _r(r.lo * factor), _r(r.hi * factor)]


def _movers(result: Any, metric: str) -> list[str]:
    from trnkb.workload.cost import range_shares

    return [s["input"] for s in range_shares(result, metric) if s["share"] > 0][:3]


def _point(r: Any) -> dict[str, Any]:
    from trnkb.workload.fleet import load_of

    cp, pue = r.inputs["chip_power"], r.inputs["pue"]
    out: dict[str, Any] = {"load": load_of(r),
                           # unrounded: the power budget floors chips = W / this
                           "facility_w": [cp.mid * pue.mid, cp.lo * pue.lo, cp.hi * pue.hi]}
    for name, _, _, factor, _ in METRICS:
        if name in r.metrics:
            out[name] = _ranged(r.metrics[name], factor) + [_movers(r, name)]
    return out


def serve_points(model: Any, system: Any, chips: int, precision: str, input_len: int,
                 output_len: int, pricing: str) -> dict[str, Any]:
    """The frontier of one replica as the pages show it: ``{"points": [...]}`` least loaded
    first, each with ``load`` (clients), ``facility_w`` and per metric ``[central, low, high,
    [three inputs]]`` in the shown unit; or ``{"error": text}``."""
    from trnkb.workload.fleet import frontier

    try:
        pts = frontier(model, system, chips, input_len, output_len, precision, pricing)
    except (KeyError, ValueError) as e:
        return {"error": str(e.args[0] if e.args else e)}
    if not pts:
        return {"error": f"{model.id} in {precision} does not fit one replica of {chips} chips "
                         f"of {system.id}"}
    return {"points": [_point(p) for p in pts], "notes": list(dict.fromkeys(pts[0].notes))}


def operating(points: list[dict[str, Any]], target: float) -> tuple[dict[str, Any], bool]:
    """The rule of :func:`trnkb.workload.fleet.operating_point` on :func:`serve_points`'
    points: the most tokens/s per chip among those whose central tokens/s per user meets
    ``target``, and True; else the most interactive point and False."""
    ok = [p for p in points if p["tokens_per_s_per_user"][0] >= target]
    if ok:
        return max(ok, key=lambda p: p["tokens_per_s_per_chip"][0]), True
    return points[0], False


def train_point(model: Any, system: Any, tokens: float, days: float,
                precision: str) -> dict[str, Any]:
    """:func:`trnkb.workload.fleet.train_plan` as the pages show it: chips, racks, plan, and
    per result of :data:`TRAIN_METRICS` ``[central, low, high, [three inputs]]``; or
    ``{"error": text}``."""
    from trnkb import workload as W
    from trnkb.workload.fleet import train_plan

    try:
        p = train_plan(model, system, tokens, days, precision)
        run = W.train(model, system, p["chips"], None, tokens, precision, **_TRAIN_KW)
    except (KeyError, ValueError) as e:
        return {"error": str(e.args[0] if e.args else e)}
    out: dict[str, Any] = {"chips": p["chips"], "racks": p["racks"],
                           "chips_per_rack": p["chips_per_rack"], "plan": p["plan"]}
    for name, _, _ in TRAIN_METRICS:
        d = p[name]
        out[name] = [_r(d["central"]), _r(d["low"]), _r(d["high"]), _movers(run, name)]
    return out


def grid(kb: KnowledgeBase, models: list[str] | None = None,
         systems: tuple[str, ...] = HEADLINE_SYSTEMS, progress: bool = False) -> dict[str, Any]:
    """Every serving and training point of :data:`GRID` and :data:`TRAIN` for ``models``
    (default: those of :data:`MODELS` the KB has) on ``systems``: ``{"axes", "metrics", "serve",
    "train", "systems"}``."""
    from trnkb import workload as W
    from trnkb.workload.fleet import replica_chips
    from trnkb.workload.fromkb import model_ids

    models = models or [m for m in MODELS if m in set(model_ids(kb))]
    mobj = {m: W.model(kb, m) for m in models}
    serve: dict[str, Any] = {}
    train: dict[str, Any] = {}
    sysinfo: dict[str, Any] = {}
    for sid in systems:
        sobj = W.system(kb, sid, None)
        sysinfo[sid] = {"chips_per_rack": sobj.chips_per_rack or sobj.domain_size,
                        "chip": sobj.chip}
        for m, prec, (i, o) in product(models, GRID["precision"], GRID["lengths"]):
            try:
                n = replica_chips(mobj[m], sobj, prec, i, o, "owner")
            except (KeyError, ValueError) as e:
                serve[key(m, sid, prec, i, o)] = {"error": str(e.args[0] if e.args else e)}
                continue
            serve[key(m, sid, prec, i, o)] = {
                "chips": n, **{pr: serve_points(mobj[m], sobj, n, prec, i, o, pr)
                               for pr in GRID["pricing"]}}
        for m, prec, tok, days in product(models, TRAIN["precision"], TRAIN["tokens"],
                                          TRAIN["days"]):
            # bf16 where the chip has a bf16 peak, else fp8 (the point says which)
            used = prec if prec in sobj.peak else "fp8"
            train[key(m, sid, prec, tok, days)] = {
                **train_point(mobj[m], sobj, tok, days, used), "precision": used}
        if progress:
            print(f"site: planner grid: {sid} done", file=sys.stderr, flush=True)
    names = {m: getattr(mobj[m], "name", m) for m in models}
    return {"axes": {"model": list(models), "model_names": names, "system": list(systems),
                     "precision": list(GRID["precision"]),
                     "lengths": [[*x, LENGTH_NAMES.get(x, f"{x[0]} / {x[1]}")]
                                 for x in GRID["lengths"]],
                     "pricing": list(GRID["pricing"]),
                     "train_precision": list(TRAIN["precision"]),
                     "tokens": list(TRAIN["tokens"]), "days": list(TRAIN["days"])},
            "metrics": [list(x) for x in METRICS],
            "train_metrics": [list(x) for x in TRAIN_METRICS],
            "systems": sysinfo, "serve": serve, "train": train}


# What the workload layer may import (docs/architecture.md), so all that the grid's numbers
# can depend on besides this module and the objects built from the KB.
_DEPENDS = ("workload", "engine", "topology", "kb", "calc", "spec", "units", "data")


def _fingerprint(kb: KnowledgeBase, systems: tuple[str, ...]) -> str:
    """sha256 of what :func:`grid` reads: the workload objects, the settings, the code."""
    from trnkb import workload as W
    from trnkb.workload.fromkb import model_ids

    h = hashlib.sha256()
    for m in model_ids(kb):  # every model: cheap, and the default list reads the KB's ids
        h.update(repr(W.model(kb, m)).encode())
    for s in systems:
        h.update(repr(W.system(kb, s, None)).encode())
    h.update(repr((GRID, TRAIN, METRICS, TRAIN_METRICS, _TRAIN_KW)).encode())
    root = Path(__file__).resolve().parents[1]
    files = [Path(__file__), *sorted(root.glob("*.py"))]
    files += sorted(f for pkg in _DEPENDS for f in (root / pkg).rglob("*")
                    if f.suffix in (".py", ".json", ".yaml") and "__pycache__" not in f.parts
                    and f.name not in ("peaks.json", "cores.json"))  # spec snapshots, not read here
    for f in files:
        h.update(str(f.relative_to(root)).encode() + f.read_bytes())
    return h.hexdigest()


SHIPPED = Path(__file__).with_name("planner_grid.json")


def cached_grid(kb: KnowledgeBase, systems: tuple[str, ...] = HEADLINE_SYSTEMS,
                progress: bool = False) -> dict[str, Any]:
    """:func:`grid`, reused when nothing it depends on changed: first the grid shipped in
    the package (:data:`SHIPPED`, written by ``python -m trnkb.site.serving_grid``; a test
    fails while it is stale), then the user cache (``TRNKB_NO_CACHE=1`` skips the cache)."""
    from trnkb.userdirs import cache_dir

    fp = _fingerprint(kb, systems)
    shipped = _read(SHIPPED)
    if shipped is not None and shipped.get("fingerprint") == fp:
        return dict(shipped["grid"])
    folder = cache_dir("planner")
    if folder is None:
        return grid(kb, systems=systems, progress=progress)
    path = folder / f"{fp}.json"
    cached = _read(path)
    if cached is not None:
        return cached
    if progress:
        print("site: computing the planner grid (a few minutes; cached afterwards)",
              file=sys.stderr, flush=True)
    out = grid(kb, systems=systems, progress=progress)
    try:
        for old in folder.glob("*.json"):
            old.unlink()
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(out, separators=(",", ":")), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass
    return out


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def write_shipped(kb: KnowledgeBase) -> Path:
    """Compute the grid for the shipped specs and write :data:`SHIPPED` with its fingerprint."""
    out = {"fingerprint": _fingerprint(kb, HEADLINE_SYSTEMS),
           "grid": grid(kb, systems=HEADLINE_SYSTEMS, progress=True)}
    tmp = SHIPPED.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, separators=(",", ":"), sort_keys=True) + "\n",
                   encoding="utf-8")
    tmp.replace(SHIPPED)
    return SHIPPED


if __name__ == "__main__":
    import trnkb

    print(f"wrote {write_shipped(trnkb.load())}")
