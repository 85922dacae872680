"""Planner answers on top of serve and train: a fleet from a power budget, the interactivity a
cost ceiling allows, and the chips, cost and energy to train N tokens in D days. All ranges.

Serving operating points come from :func:`frontier`, the one adapter to the serving model:
by default the step-level simulator of :func:`trnkb.workload.simulate` under a closed loop of
1, 2, 4... concurrent clients (continuous batching, chunked prefill, prefill interfering with
decode), or with ``engine="closed-form"`` :func:`~trnkb.workload.serve` at batch 1, 2, 4... up
to the KV-cache limit. Each point is a result with ranged tokens/s per chip, tokens/s per
user, $/Mtok and tokens/s per MW; :func:`load_of` gives its concurrency (or batch).

- :func:`plan_fleet`: facility power P (MW) -> at the point with the most tokens/s per chip
  whose central tokens/s per user meets the target: chips = P / facility W per chip (chip
  power x PUE), racks = chips / chips per rack, fleet tokens/s = P x tokens/s per MW, $/Mtok,
  and which inputs drive the $/Mtok range (:func:`trnkb.workload.cost.range_shares`).
- :func:`cost_target`: the highest tokens/s per user whose $/Mtok is <= the ceiling, at the
  central inputs and at each end of the $/Mtok range (optimistic: low end <= ceiling;
  pessimistic: high end <= ceiling).
- :func:`train_plan`: chips = tokens / (days x 86400 s x tokens/s per chip) measured by
  :func:`~trnkb.workload.train` at one rack's worth of chips, rounded up to whole racks, then
  train is run at that size for its time, cost and energy (scaling loss between the two sizes
  is in the second run's collectives).
"""

from __future__ import annotations

import math
from typing import Any

from trnkb.workload.cost import range_shares
from trnkb.workload.models import Model
from trnkb.workload.ranges import Ranged
from trnkb.workload.result import WorkloadResult, check_positive
from trnkb.workload.system import System


def _ranged(r: Ranged) -> dict[str, float]:
    return {"central": r.mid, "low": r.lo, "high": r.hi, "unit": r.unit}  # type: ignore[dict-item]


ENGINES = ("simulate", "closed-form")
_MAX_LOAD = 1024  # concurrent clients / batch the sweep stops at


def replica_chips(model: Model, system: System, precision: str, input_len: int,
                  output_len: int, pricing: str) -> int:
    """The smallest power-of-two replica (from 8, or the domain if smaller) whose KV cache
    holds at least one sequence per attention replica."""
    from trnkb.workload.serving import serve

    chips = min(8, system.domain_size)
    while True:
        r = serve(model, system, chips, chips, input_len, output_len, precision, curve=False,
                  pricing=pricing)
        if r.breakdown["max_batch"] >= chips or chips * 2 > max(system.domain_size, 64):
            return chips
        chips *= 2


def load_of(r: WorkloadResult) -> int:
    """Concurrent clients of a simulated point, or the batch of a closed-form one."""
    load = str(r.settings.get("load", ""))
    if load.startswith("concurrency="):
        return int(load.split("=", 1)[1])
    return int(r.settings.get("batch", 0))


def frontier(model: Model, system: System, chips: int, input_len: int, output_len: int,
             precision: str, pricing: str = "owner",
             engine: str = "simulate") -> list[WorkloadResult]:
    """Operating points of one replica of ``chips`` chips, least loaded first (see the
    module docstring); empty when the model does not fit."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "simulate":
        from trnkb.workload.simulation import simulate

        out: list[WorkloadResult] = []
        c = 1
        while c <= _MAX_LOAD:
            try:
                out.append(simulate(model, system, chips, input_len=input_len,
                                    output_len=output_len, precision=precision,
                                    concurrency=c, pricing=pricing))
            except ValueError:
                if not out:
                    return []
                break
            c *= 2
        return out
    from trnkb.workload.serving import layout, serve

    first = serve(model, system, chips, chips, input_len, output_len, precision, curve=False,
                  pricing=pricing)
    limit = int(first.breakdown["max_batch"])
    dp = layout(model, chips)[1]
    pts, b = [], 1
    while b < dp:
        b *= 2
    while b <= limit:
        pts.append(serve(model, system, chips, b, input_len, output_len, precision,
                         curve=False, pricing=pricing))
        b *= 2
    return pts


def per_user(r: WorkloadResult) -> float:
    """Central tokens/s per user of an operating point (either engine)."""
    if "tokens_per_s_per_user" in r.metrics:
        return float(r.metrics["tokens_per_s_per_user"].mid)
    return 1.0 / r.breakdown["tpot"]


def _point(r: WorkloadResult) -> dict[str, Any]:
    return {"load": load_of(r), "tokens_per_s_per_user": per_user(r),
            "tokens_per_s_per_chip": _ranged(r["tokens_per_s_per_chip"]),
            "usd_per_million_tokens": _ranged(r["usd_per_million_tokens"]),
            "tokens_per_s_per_mw": _ranged(r["tokens_per_s_per_mw"])}


def operating_point(model: Model, system: System, tokens_per_s_per_user: float,
                    precision: str = "fp8", *, input_len: int = 2048, output_len: int = 512,
                    chips: int | None = None, pricing: str = "owner",
                    engine: str = "simulate") -> tuple[WorkloadResult, bool]:
    """The serve result with the most tokens/s per chip among the frontier points whose
    central tokens/s per user meets the target, and whether any does (if none: the most
    interactive point, and False)."""
    n = chips or replica_chips(model, system, precision, input_len, output_len, pricing)
    pts = frontier(model, system, n, input_len, output_len, precision, pricing, engine)
    if not pts:
        raise ValueError(f"{model.id} in {precision} does not fit one replica of {n} chips of "
                         f"{system.id}")
    ok = [p for p in pts if per_user(p) >= tokens_per_s_per_user]
    if ok:
        return max(ok, key=lambda p: p["tokens_per_s_per_chip"].mid), True
    return pts[0], False


def plan_fleet(model: Model, system: System, power_mw: float, tokens_per_s_per_user: float,
               precision: str = "fp8", *, input_len: int = 2048, output_len: int = 512,
               chips: int | None = None, pricing: str = "owner",
               engine: str = "simulate") -> dict[str, Any]:
    """The fleet ``power_mw`` MW of facility power buys of ``system`` serving ``model`` at
    ``tokens_per_s_per_user`` (see the module docstring). ``reachable`` is False when no
    point reaches the target; the answer is then at the least loaded (most interactive) point."""
    check_positive(power_mw=power_mw, tokens_per_s_per_user=tokens_per_s_per_user)
    best, ok = operating_point(model, system, tokens_per_s_per_user, precision,
                               input_len=input_len, output_len=output_len, chips=chips,
                               pricing=pricing, engine=engine)
    n = best.chips
    cp, pue = best.inputs["chip_power"], best.inputs["pue"]
    fw = (cp.lo * pue.lo, cp.mid * pue.mid, cp.hi * pue.hi)  # facility W per chip
    watts = power_mw * 1e6
    chips_n = tuple(math.floor(watts / w) for w in (fw[2], fw[1], fw[0]))
    per_rack = system.chips_per_rack or system.domain_size
    racks = tuple(c // per_rack for c in chips_n)
    tpm = best["tokens_per_s_per_mw"]
    return {"model": model.id, "system": system.id, "precision": precision, "pricing": pricing,
            "power_mw": power_mw, "target_tokens_per_s_per_user": tokens_per_s_per_user,
            "engine": engine, "reachable": ok, "replica_chips": n, "load": load_of(best),
            "tokens_per_s_per_user": per_user(best),
            "facility_w_per_chip": {"central": fw[1], "low": fw[0], "high": fw[2], "unit": "W"},
            "chips": {"central": chips_n[1], "low": chips_n[0], "high": chips_n[2]},
            "racks": {"central": racks[1], "low": racks[0], "high": racks[2],
                      "chips_per_rack": per_rack},
            "fleet_tokens_per_s": {"central": tpm.mid * power_mw, "low": tpm.lo * power_mw,
                                   "high": tpm.hi * power_mw, "unit": "1/s"},
            "usd_per_million_tokens": _ranged(best["usd_per_million_tokens"]),
            "usd_per_million_tokens_rests_on": range_shares(best, "usd_per_million_tokens"),
            "notes": list(best.notes)}


def cost_target(model: Model, system: System, max_usd_per_mtok: float, precision: str = "fp8",
                *, input_len: int = 2048, output_len: int = 512, chips: int | None = None,
                pricing: str = "owner", engine: str = "simulate") -> dict[str, Any]:
    """The highest tokens/s per user ``system`` reaches at <= ``max_usd_per_mtok`` USD per
    million output tokens: central, optimistic and pessimistic (None: not reachable)."""
    check_positive(max_usd_per_mtok=max_usd_per_mtok)
    n = chips or replica_chips(model, system, precision, input_len, output_len, pricing)
    pts = frontier(model, system, n, input_len, output_len, precision, pricing, engine)

    def best(which: str) -> float | None:
        ok = [per_user(p) for p in pts
              if getattr(p["usd_per_million_tokens"], which) <= max_usd_per_mtok]
        return max(ok) if ok else None

    return {"model": model.id, "system": system.id, "precision": precision, "pricing": pricing,
            "max_usd_per_million_tokens": max_usd_per_mtok, "replica_chips": n, "engine": engine,
            "tokens_per_s_per_user": {"central": best("mid"), "optimistic": best("lo"),
                                      "pessimistic": best("hi")},
            "frontier": [_point(p) for p in pts],
            "rests_on": range_shares(_at(pts, best("mid")), "usd_per_million_tokens")
            if pts else []}


def _at(pts: list[WorkloadResult], wanted: float | None) -> WorkloadResult:
    """The point at ``wanted`` tokens/s per user (the most interactive one if None)."""
    for p in pts:
        if wanted is not None and per_user(p) == wanted:
            return p
    return pts[0]


def train_plan(model: Model, system: System, tokens: float, days: float,
               precision: str = "bf16", *, pricing: str = "owner",
               seq_len: int = 8192, batch_tokens: float = 16 * 2**20) -> dict[str, Any]:
    """Chips and racks to train ``model`` on ``tokens`` tokens in ``days`` days on ``system``,
    with the time, cost and energy of a run at that size (see the module docstring).
    ``batch_tokens`` defaults to 16 Mi tokens per step (Llama 3 405B's final batch) so that
    thousands of chips have sequences to share."""
    from trnkb.workload.training import train

    check_positive(tokens=tokens, days=days)
    per_rack = system.chips_per_rack or system.domain_size
    probe_chips = max(per_rack, system.domain_size)
    kw: dict[str, Any] = {"seq_len": seq_len, "batch_tokens": batch_tokens, "pricing": pricing}
    probe = train(model, system, probe_chips, None, tokens, precision, **kw)
    rate = probe["tokens_per_s_per_chip"].mid
    need = tokens / (days * 86400 * rate)
    racks = max(1, math.ceil(need / per_rack))
    run, tried = None, []
    # the first size (up to +25%) a plan fits; at most ~17 sizes tried, so an absurd token
    # count (1e30) is refused in seconds instead of trying every rack count up to +25%
    span = max(2, racks // 4)
    for extra in range(0, span + 1, max(1, math.ceil(span / 16))):
        n = (racks + extra) * per_rack
        try:
            run = train(model, system, n, None, tokens, precision, **kw)
            racks += extra
            break
        except ValueError as e:
            tried.append(str(e))
    if run is None:
        raise ValueError(tried[0])
    return {"model": model.id, "system": system.id, "precision": precision, "pricing": pricing,
            "tokens": tokens, "target_days": days, "chips": racks * per_rack, "racks": racks,
            "chips_per_rack": per_rack, "plan": getattr(run.plan, "label", None),
            "days": _ranged(run["days"]), "cost_usd": _ranged(run["cost_usd"]),
            "energy_mwh": _ranged(run["energy_mwh"]), "facility_mw": _ranged(run["facility_mw"]),
            "cost_rests_on": range_shares(run, "cost_usd"), "notes": list(run.notes)}
