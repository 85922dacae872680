"""A versus B: the ratio of one metric on two systems, with shared assumptions tied.

Two results' ranges overlap whenever a shared assumption (utilisation, serving efficiency,
power price) is wide, even when that assumption moves both systems alike and cannot change
which is cheaper. :func:`ratio_range` therefore swings every input one at a time on both
sides at once when both sides hold the same assumption (same name, kind ``assumption``, same
range), and on its own side otherwise (a sourced figure, an assumption only one side has, or
one whose range differs), then combines the swings multiplicatively (each input's worst and
best factor on the central ratio), the same monotone reading :func:`trnkb.workload.ranges.
propagate` uses. The drivers say which input moves the ratio most and whether it is sourced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Versus:
    """A / B of ``metric``: central, low, high; drivers (input, kind, factor low, factor high),
    widest first; ``shared`` the inputs tied between the sides."""

    metric: str
    central: float
    low: float
    high: float
    drivers: tuple[tuple[str, str, float, float], ...]
    shared: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "central": self.central, "low": self.low,
                "high": self.high, "shared": list(self.shared),
                "moved_most_by": [{"input": n, "kind": k, "factor_low": a, "factor_high": b}
                                  for n, k, a, b in self.drivers[:5]]}


def _swings(result: Any, metric: str) -> dict[str, tuple[float, float]]:
    r = result.metrics[metric]
    return {n: (lo / r.mid, hi / r.mid) for n, lo, hi in r.drivers if r.mid}


def _same(a: Any, b: Any) -> bool:
    return (a.kind == b.kind == "assumption" and (a.lo, a.mid, a.hi) == (b.lo, b.mid, b.hi))


def ratio_range(ra: Any, rb: Any, metric: str) -> Versus:
    """A / B of ``metric`` for two :class:`~trnkb.workload.WorkloadResult` s (see the module
    docstring)."""
    a, b = ra.metrics[metric], rb.metrics[metric]
    central = a.mid / b.mid
    sa, sb = _swings(ra, metric), _swings(rb, metric)
    shared = tuple(n for n in sa.keys() | sb.keys()
                   if n in ra.inputs and n in rb.inputs and _same(ra.inputs[n], rb.inputs[n]))
    factors: list[tuple[str, str, float, float]] = []
    for n in sorted(sa.keys() | sb.keys()):
        if n in shared:
            fa, fb = sa.get(n, (1.0, 1.0)), sb.get(n, (1.0, 1.0))
            lo, hi = fa[0] / fb[0], fa[1] / fb[1]
            factors.append((n, "assumption (both)", lo, hi))
            continue
        if n in sa:
            factors.append((f"{n} (A)", ra.inputs[n].kind, *sa[n]))
        if n in sb:
            fb = sb[n]
            factors.append((f"{n} (B)", rb.inputs[n].kind, 1 / fb[0], 1 / fb[1]))
    low = central
    high = central
    for _, _, f1, f2 in factors:
        low *= min(f1, f2, 1.0)
        high *= max(f1, f2, 1.0)
    factors.sort(key=lambda f: -abs(f[3] - f[2]))
    return Versus(metric, central, low, high, tuple(factors), tuple(sorted(shared)))
