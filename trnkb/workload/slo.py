"""SLO answers on top of the simulator: the highest throughput that meets a latency target, and
the throughput-interactivity frontier.

* :func:`parse_slo` reads ``"ttft_p99=2s,tpot_p99=80ms"`` (metric names of
  :data:`~trnkb.workload.simulate.SIM_METRICS` ending in ``_p50``/``_p90``/``_p99``, values
  with a time unit, through :func:`trnkb.units.parse`).
* :func:`max_throughput` bisects the Poisson request rate (MLPerf Server's load) for the
  highest rate whose central percentiles meet every target; the answer is the ranged
  :func:`~trnkb.workload.simulate.simulate` result at that rate, with the search in
  ``extra["slo"]``.
* :func:`frontier` sweeps a closed loop of 1 to the cache's worth of clients (geometric) and
  returns, per point, tokens/s per chip against tokens/s per user, each with its range: the
  curve serving dashboards draw.
"""

from __future__ import annotations

import math
from typing import Any

from trnkb.workload.models import Model
from trnkb.workload.result import WorkloadResult
from trnkb.workload.simulation import SIM_METRICS, simulate
from trnkb.workload.system import System


def parse_slo(text: str | dict[str, float]) -> dict[str, float]:
    """``{metric: seconds}`` from ``"ttft_p99=2s,tpot_p99=80ms"`` (or a dict, checked)."""
    from trnkb.units import parse

    if isinstance(text, dict):
        items = [(k, float(v)) for k, v in text.items()]
    else:
        items = []
        for part in str(text).split(","):
            if not part.strip():
                continue
            name, sep, val = part.partition("=")
            if not sep:
                raise ValueError(f"--slo expects METRIC=TIME[,...], e.g. ttft_p99=2s, not "
                                 f"{part.strip()[:40]!r}")
            try:
                q = parse(val.strip())
                seconds = float(q.to("s").magnitude)
            except Exception:
                raise ValueError(f"--slo {name.strip()}: {val.strip()[:40]!r} is not a time "
                                 f"such as 2s or 80ms") from None
            items.append((name.strip(), seconds))
    out: dict[str, float] = {}
    latency = sorted(k for k, u in SIM_METRICS.items() if u == "s")
    for name, seconds in items:
        if name not in latency:
            raise ValueError(f"--slo: unknown metric {name!r}; use one of {', '.join(latency)}")
        if not math.isfinite(seconds) or seconds <= 0:
            raise ValueError(f"--slo {name}: the target must be a positive time")
        out[name] = seconds
    if not out:
        raise ValueError("--slo names no target; e.g. ttft_p99=2s,tpot_p99=80ms")
    return out


def _meets(res: WorkloadResult, slo: dict[str, float], rate: float | None = None) -> bool:
    """Every central percentile within its target and, under a rate, the server keeping up:
    completing at least 90% of the requests arriving per second in the window (an overloaded
    server's queue grows without bound, however short a simulation hides it)."""
    ok = all(res.metrics[k].mid <= t for k, t in slo.items())
    if rate is not None:
        ok = ok and (res.breakdown["requests_per_s"]
                     >= 0.9 * res.breakdown["offered_requests_per_s"])
    return ok


def max_throughput(model: Model, system: System, chips: int, slo: str | dict[str, float], *,
                   iterations: int = 9, **kw: Any) -> WorkloadResult:
    """The highest-throughput Poisson load on ``chips`` chips that meets ``slo`` (see the
    module docstring); ``kw`` as :func:`~trnkb.workload.simulate.simulate` (not ``rate`` or
    ``concurrency``). ``extra["slo"]``: targets, ``met``, the rate found (requests/s) and
    every rate tried."""
    targets = parse_slo(slo)
    for k in ("rate", "concurrency"):
        if kw.get(k) is not None:
            raise ValueError(f"--slo searches the load itself; drop {k}")
    offline = simulate(model, system, chips, ranged=False, **kw)
    hi = offline.breakdown["requests_per_s"] * 1.05
    tried: list[dict[str, Any]] = []

    def at(rate: float) -> WorkloadResult:
        r = simulate(model, system, chips, rate=rate, ranged=False, **kw)
        tried.append({"rate_per_s": rate, "meets": _meets(r, targets, rate),
                      "tokens_per_s_per_chip": r.breakdown["tokens_per_s_per_chip"],
                      **{k: r.breakdown[k] for k in targets}})
        return r

    lo_rate = hi / 256
    best = at(lo_rate)
    if not _meets(best, targets, lo_rate):
        best = simulate(model, system, chips, rate=lo_rate, **kw)
        best.extra["slo"] = {"targets": targets, "met": False, "rate_per_s": lo_rate,
                             "tried": tried}
        best.notes.append(f"no load meets the SLO: even {lo_rate:.3g} requests/s misses it")
        return best
    top = at(hi)
    if _meets(top, targets, hi):
        best, lo_rate = top, hi
    else:
        a, b = lo_rate, hi
        for _ in range(iterations):
            m = math.sqrt(a * b)
            r = at(m)
            if _meets(r, targets, m):
                a, best = m, r
            else:
                b = m
        lo_rate = a
    best = simulate(model, system, chips, rate=lo_rate, **kw)  # the answer, ranged
    best.extra["slo"] = {"targets": targets, "met": True, "rate_per_s": lo_rate,
                         "tried": tried}
    return best


def frontier(model: Model, system: System, chips: int, *, points: int = 10,
             max_concurrency: int | None = None, **kw: Any) -> list[dict[str, Any]]:
    """Tokens/s per chip against tokens/s per user over a closed-loop concurrency sweep
    (see the module docstring). Each row: ``concurrency``, and for
    ``tokens_per_s_per_chip``, ``tokens_per_s_per_user``, ``ttft_p99`` and ``tpot_p50``
    a ``{"central", "low", "high"}`` in 1/s or s."""
    if points < 2:
        raise ValueError("a curve needs at least 2 points")
    probe = simulate(model, system, chips, concurrency=1, **kw)
    units = probe.settings["replicas"] * probe.settings["attention_dp"] * probe.settings["pp"]
    top = max_concurrency or units * int(probe.settings["max_seqs"])
    levels = sorted({max(1, round(top ** (i / (points - 1)))) for i in range(points)})
    rows = []
    for c in levels:
        r = probe if c == 1 else simulate(model, system, chips, concurrency=c, **kw)
        row: dict[str, Any] = {"concurrency": c}
        for k in ("tokens_per_s_per_chip", "tokens_per_s_per_user", "ttft_p99", "tpot_p50"):
            m = r.metrics[k]
            row[k] = {"central": m.mid, "low": m.lo, "high": m.hi, "unit": m.unit}
        rows.append(row)
    return rows
