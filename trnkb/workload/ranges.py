"""Ranges, not false precision: inputs with a low, central and high value, and their propagation.

Every input of a workload result is an :class:`Input`: a sourced value (its range is the
spread of the values the knowledge base holds for that field, both ends kept when sources
conflict), an assumption (a stated range with its basis, e.g. MFU 0.30-0.50), or a value the
user set (no spread). :func:`propagate` evaluates a model at the central inputs, then one
input at a time at each end (the sensitivity: which inputs move the result most), then with
every input at the end that lowers (raises) each metric. For a result that is monotone in
each input (all of ours are) the last two evaluations are the exact ends of the range.

Magnitudes are plain floats in fixed units named by ``unit`` (the workload core runs in
floats so a plan search can evaluate 10^4 plans a minute); results go back to quantities
at the edges (:meth:`Ranged.quantity`, JSON with units).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trnkb.units import Q_
from trnkb.units.qtypes import Quantity


@dataclass(frozen=True)
class Input:
    """One input of a workload model.

    ``kind`` is ``sourced`` (``basis`` lists the sources, preferred first), ``assumption``
    (``basis`` says why this range), ``fitted`` (a constant fitted to published operator
    measurements; ``basis`` names the data, fit and residual) or ``user`` (set on the command
    line / by the caller).
    """

    name: str
    lo: float
    mid: float
    hi: float
    unit: str
    kind: str
    basis: str
    sources: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if all(math.isnan(x) for x in (self.lo, self.mid, self.hi)):
            return  # unknown: results that need it come out NaN
        if not (self.lo <= self.mid <= self.hi):
            raise ValueError(f"{self.name}: expected lo <= central <= hi, got "
                             f"{self.lo:g}, {self.mid:g}, {self.hi:g}")

    @property
    def spread(self) -> bool:
        return self.hi > self.lo

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "unit": self.unit, "central": self.mid,
                               "low": self.lo, "high": self.hi, "kind": self.kind,
                               "basis": self.basis}
        if self.sources:
            out["sources"] = list(self.sources)
        return out


def assumption(name: str, lo: float, mid: float, hi: float, unit: str, basis: str) -> Input:
    return Input(name, lo, mid, hi, unit, "assumption", basis)


def user_value(name: str, value: float, unit: str) -> Input:
    return Input(name, value, value, value, unit, "user", "set by the user")


#: assumptions a workload model divides by: zero is outside their domain
_DIVIDES_BY = ("mfu", "efficiency", "utilisation", "usable_hbm", "years", "bandwidth",
               "capacity")


def check_assumptions(given: Mapping[str, Input | float] | None,
                      defaults: Mapping[str, Input]) -> dict[str, Input]:
    """The caller's overrides of ``defaults``, checked: a known name (else ``ValueError``
    with a suggestion), an :class:`Input` or a number (taken as a user value in the
    default's unit), every end finite and in the default's domain. A default whose range
    lies in [0, 1] without a unit is a fraction: an override must lie in [0, 1]; any other
    must be 0 or more. An input the models divide by (:data:`_DIVIDES_BY`: MFU,
    efficiencies, utilisation...) must moreover be above 0.
    """
    from trnkb.spec.specfile import show, suggest

    out: dict[str, Input] = {}
    for name, value in (given or {}).items():
        default = defaults.get(name) if isinstance(name, str) else None
        if default is None:
            raise ValueError(f"unknown assumption {show(name)}{suggest(name, sorted(defaults))}"
                             f"; inputs are {', '.join(sorted(defaults))}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = user_value(name, float(value), default.unit)
        if not isinstance(value, Input):
            raise ValueError(f"assumption {name}: expected a number or an Input, got "
                             f"{show(value)}")
        ends = (value.lo, value.mid, value.hi)
        if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in ends):
            raise ValueError(f"assumption {name}: {show(ends)} is not finite")
        zero_ok = not any(w in name for w in _DIVIDES_BY)
        fraction = not default.unit and 0 <= default.lo and default.hi <= 1
        low_ok = (min(ends) >= 0) if zero_ok else (min(ends) > 0)
        if not low_ok or (fraction and max(ends) > 1):
            domain = ("[0, 1]" if zero_ok else "(0, 1]") if fraction else (
                ">= 0" if zero_ok else "> 0")
            raise ValueError(f"assumption {name}: {', '.join(f'{x:g}' for x in ends)} is "
                             f"outside its domain {domain}")
        out[name] = value
    return out


@dataclass(frozen=True)
class Ranged:
    """A result: central value, low and high ends, and the inputs that move it most.

    ``drivers`` holds (input name, metric at the input's low end, at its high end), the
    widest swing first.
    """

    name: str
    unit: str
    mid: float
    lo: float
    hi: float
    drivers: tuple[tuple[str, float, float], ...] = ()

    def quantity(self, which: str = "mid") -> Quantity:
        return Q_(getattr(self, which), self.unit)

    @property
    def central(self) -> Quantity:
        """The central value as a pint quantity."""
        return self.quantity("mid")

    @property
    def low(self) -> Quantity:
        return self.quantity("lo")

    @property
    def high(self) -> Quantity:
        return self.quantity("hi")

    def to_dict(self, top: int = 3) -> dict[str, Any]:
        return {"central": _json(self.mid), "low": _json(self.lo), "high": _json(self.hi),
                "unit": self.unit,
                "moved_most_by": [{"input": n, "at_input_low": _json(a), "at_input_high": _json(b)}
                                  for n, a, b in self.drivers[:top]]}


def _json(x: float | None) -> float | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return float(f"{x:.6g}")


def _finite(x: object) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def propagate(fn: Callable[[dict[str, float]], Mapping[str, float]], inputs: Mapping[str, Input],
              units: Mapping[str, str]) -> dict[str, Ranged]:
    """Evaluate ``fn`` over the ranges of ``inputs``; one :class:`Ranged` per metric in ``units``.

    ``fn`` takes ``{input name: value}`` and returns ``{metric: float}`` (NaN or inf where
    a metric does not exist for those inputs, e.g. a plan that does not fit).
    """
    mid = {k: i.mid for k, i in inputs.items()}
    central = fn(mid)
    ends: dict[str, tuple[Mapping[str, float], Mapping[str, float]]] = {}
    for k, i in inputs.items():
        if i.spread:
            ends[k] = (fn({**mid, k: i.lo}), fn({**mid, k: i.hi}))
    out = {}
    for metric, unit in units.items():
        c = central.get(metric, math.nan)
        drivers, low_pick, high_pick = [], {}, {}
        for k, (at_lo, at_hi) in ends.items():
            a, b = at_lo.get(metric, math.nan), at_hi.get(metric, math.nan)
            if not (_finite(a) and _finite(b)):
                continue
            if a != b:
                drivers.append((k, a, b))
            low_pick[k] = inputs[k].lo if a <= b else inputs[k].hi
            high_pick[k] = inputs[k].hi if a <= b else inputs[k].lo
        drivers.sort(key=lambda d: -abs(d[2] - d[1]))
        if drivers and _finite(c):
            lo = fn({**mid, **low_pick}).get(metric, math.nan)
            hi = fn({**mid, **high_pick}).get(metric, math.nan)
            lo, hi = (lo if _finite(lo) else c), (hi if _finite(hi) else c)
            lo, hi = min(lo, hi, c), max(lo, hi, c)
        else:
            lo = hi = c
        out[metric] = Ranged(metric, unit, c, lo, hi, tuple(drivers))
    return out
