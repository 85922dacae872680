"""``trnkb workload`` output for people: ranges with separators and no exponent, tables
through rich (the JSON forms are the results' own ``to_dict``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from trnkb.cli.kbcmds import _console, _rich_table
from trnkb.units import format_number

if TYPE_CHECKING:
    from trnkb.workload import Ranged, WorkloadResult


def num(x: float | None, sig: int = 4) -> str:
    """A prediction for people: ``sig`` significant digits, separators, no exponent
    (``320,100``; large ones rounded too: a model has no seven-digit precision)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return format_number(float(f"{x:.{sig}g}"), sig)


def fmt(r: Ranged) -> str:
    """``320,100 (148,300 to 562,100) /s/MW``: counts per second are written ``/s``."""
    unit = r.unit.removeprefix("1") if r.unit.startswith("1/") else r.unit
    unit = "days" if unit == "day" else unit
    return f"{num(r.mid)} ({num(r.lo)} to {num(r.hi)}) {unit}".rstrip()


def show_result(res: WorkloadResult) -> None:
    print(f"{res.kind}: {res.model} on {res.chips} x {res.system} ({res.precision})")
    plan: Any = res.plan
    if plan is not None:
        print(f"  plan: {plan.label}")
    for k, r in res.metrics.items():
        drivers = ", ".join(d[0] for d in r.drivers[:3])
        print(f"  {k}: {fmt(r)}" + (f"   moved most by: {drivers}" if drivers else ""))
    for n in res.notes:
        print(f"  note: {n}")


def _range(d: dict[str, Any]) -> str:
    return f"{num(d['central'])} ({num(d['low'])} to {num(d['high'])})"


def show_curve(out: dict[str, Any]) -> None:
    """The throughput-interactivity frontier: one row per client count."""
    t = _rich_table("clients", "tok/s/chip (range)", "tok/s/user (range)",
                    title=f"frontier: {out['model']} on {out['chips']} x {out['system']} "
                          f"({num(out['input_len'])} in / {num(out['output_len'])} out)")
    for r in out["curve"]:
        t.add_row(str(r["concurrency"]), _range(r["tokens_per_s_per_chip"]),
                  _range(r["tokens_per_s_per_user"]))
    _console().print(t)


def show_slo(found: dict[str, Any] | None) -> None:
    """The highest load that met (or missed) the latency targets."""
    if found:
        print(f"  slo: {'met' if found['met'] else 'NOT met'} at "
              f"{num(found['rate_per_s'])} requests/s "
              + ", ".join(f"{k}<={num(v, 3)} s" for k, v in found["targets"].items()))


def show_batches(rows: list[dict[str, Any]]) -> None:
    """The closed-form serving answer at each batch size."""
    t = _rich_table("batch", "TPOT ms", "tok/s/chip", "tok/s/user")
    for r in rows:
        t.add_row(str(r["batch"]), num(r["tpot_ms"], 3), num(r["tokens_per_s_per_chip"]),
                  num(r["tokens_per_s_per_user"]))
    if rows:
        _console().print(t)


def show_plans(rows: list[dict[str, Any]], what: str) -> None:
    """Parallelism plans that fit, fastest first."""
    if not rows:
        print(f"no plan fits {what}")
        return
    t = _rich_table("days", "step s", "GB/chip", "MFU", "plan", title=f"plans: {what}")
    for d in rows:
        t.add_row(num(d["days"]), num(d["step_time_s"]), num(d["memory_GB"]),
                  f"{d['achieved_mfu']:.2f}", d["plan"])
    _console().print(t)
