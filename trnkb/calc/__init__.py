"""Derived calculators with lineage.

Pure functions, pint quantities in and out, each returning a
:class:`~trnkb.calc.derivation.Result` (value + :class:`~trnkb.calc.derivation.Derivation`).
They know nothing of YAML; :mod:`trnkb.calc.fromkb` reads knowledge-base values (with
their provenance) and calls them.

Modules: :mod:`~trnkb.calc.flops`, :mod:`~trnkb.calc.memory`, :mod:`~trnkb.calc.scaleup`,
:mod:`~trnkb.calc.network`, :mod:`~trnkb.calc.power`, :mod:`~trnkb.calc.tco`,
:mod:`~trnkb.calc.system`.

:data:`CALCULATORS` names every calculator for the command line and the claims registry
(``trnkb calc NAME --param value``); parameter names are the function's, with ``-`` for
``_``.

May import: :mod:`trnkb.spec` and :mod:`trnkb.units` only.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trnkb.calc import flops, memory, network, power, scaleup, system, tco
from trnkb.calc.derivation import Derivation, Input, Result
from trnkb.units.qtypes import Quantity, Sources

__all__ = [
    "CALCULATORS",
    "Calculator",
    "Derivation",
    "Input",
    "Result",
    "calculator",
    "flops",
    "memory",
    "network",
    "power",
    "run",
    "scaleup",
    "system",
    "tco",
]


@dataclass(frozen=True)
class Calculator:
    """A named calculator: the function and the unit its value is shown in."""

    name: str
    function: Callable[..., Result]
    unit: str  # "" for counts

    @property
    def params(self) -> list[inspect.Parameter]:
        return [
            p
            for p in inspect.signature(self.function).parameters.values()
            if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        ]

    @property
    def summary(self) -> str:
        return (inspect.getdoc(self.function) or "").split("\n\n")[0].replace("\n", " ")

    def usage(self) -> str:
        parts = []
        for p in self.params:
            flag = f"--{p.name.replace('_', '-')} VALUE"
            parts.append(flag if p.default is inspect.Parameter.empty else f"[{flag}]")
        return " ".join(parts)


CALCULATORS: dict[str, Calculator] = {
    c.name: c
    for c in (
        Calculator("peak-flops", flops.peak_flops, "TFLOPS"),
        Calculator("implied-clock", flops.implied_clock, "GHz"),
        Calculator("flops-per-watt", flops.flops_per_watt, "TFLOPS/W"),
        Calculator("time-for-flops", flops.time_for_flops, "day"),
        Calculator("training-flops", flops.training_flops, "FLOP"),
        Calculator("hbm-capacity", memory.hbm_capacity, "GB"),
        Calculator("hbm-bandwidth", memory.hbm_bandwidth, "TB/s"),
        Calculator("ridge-point", memory.ridge_point, "FLOP/B"),
        Calculator("lnc-memory", memory.lnc_memory, "GB"),
        Calculator("scaleup-bandwidth", scaleup.scaleup_bandwidth, "GB/s"),
        Calculator("lane-budget", scaleup.lane_budget, "GB/s"),
        Calculator("switches-per-rack", scaleup.switches_per_rack, ""),
        Calculator("fabric-size", network.fabric_size, ""),
        Calculator("tor-fabric-size", network.tor_fabric_size, ""),
        Calculator("it-power", power.it_power, "MW"),
        Calculator("facility-power", power.facility_power, "MW"),
        Calculator("chips-per-mw", power.chips_per_mw, ""),
        Calculator("rack-power-density", power.rack_power_density, "kW"),
        Calculator("training-energy", power.training_energy, "MWh"),
        Calculator("tco", tco.tco, "USD/hour"),
        Calculator("domain-total", system.domain_total, ""),
    )
}


def calculator(name: str) -> Calculator:
    """The calculator called ``name`` (``KeyError`` naming the known ones otherwise)."""
    try:
        return CALCULATORS[name]
    except KeyError:
        from trnkb.spec.specfile import show, suggest

        raise KeyError(
            f"no calculator {show(name)}{suggest(name, CALCULATORS)}; calculators "
            f"are {', '.join(CALCULATORS)}"
        ) from None


def run(name: str, args: dict[str, Any], sources: Sources = None) -> Result:
    """Call calculator ``name`` with ``args`` keyed by parameter name (``-`` or ``_``).

    Values are numbers, pint quantities or strings :func:`trnkb.units.parse` reads
    (``"12.8 Tbit/s"``). Unknown or missing parameters, negative inputs, zero inputs
    (except those in :data:`ZERO_ALLOWED` or defaulting to zero) and a non-finite result
    raise ``ValueError``.
    """

    calc = calculator(name)
    params = {p.name: p for p in calc.params}
    kwargs = {}
    for key, raw in args.items():
        pname = key.replace("-", "_")
        if pname not in params:
            from trnkb.spec.specfile import show, suggest

            flags = [f"--{p.replace('_', '-')}" for p in params]
            raise ValueError(
                f"{name}: unknown parameter --{show(key.replace('_', '-'))[1:-1]}"
                f"{suggest('--' + key.replace('_', '-'), flags)}; "
                f"usage: {name} {calc.usage()}"
            )
        kwargs[pname] = (
            parse_value(raw, f"--{pname.replace('_', '-')}") if isinstance(raw, str) else raw
        )
    missing = [
        p
        for p, spec in params.items()
        if spec.default is inspect.Parameter.empty and p not in kwargs
    ]
    if missing:
        raise ValueError(
            f"{name}: missing "
            + ", ".join(f"--{m.replace('_', '-')}" for m in missing)
            + f"; usage: {name} {calc.usage()}"
        )
    for pname, value in kwargs.items():
        _check_sign(name, pname, value, params[pname].default)
    try:
        res = calc.function(**kwargs, sources=sources)
    except ZeroDivisionError:
        raise ValueError(f"{name}: an input is zero where the formula divides by it") from None
    mag = getattr(res.value, "magnitude", res.value)
    if isinstance(mag, (int, float)) and not math.isfinite(mag):
        raise ValueError(f"{name}: the result is not a finite number ({mag}); check the inputs")
    return res


#: (calculator, parameter) that may be zero: a lane count of a medium a chip lacks, a
#: zero cost of capital. Parameters whose default is zero may be zero too.
ZERO_ALLOWED = {
    ("lane-budget", "pcb"),
    ("lane-budget", "backplane_active"),
    ("lane-budget", "backplane_redundant"),
    ("lane-budget", "cross_rack"),
    ("tco", "cost_of_capital"),
}


def _check_sign(name: str, pname: str, value: Any, default: Any) -> None:
    """Inputs are sizes, counts, rates and prices: never negative; zero only where allowed."""
    mag = getattr(value, "magnitude", value)
    if not isinstance(mag, (int, float)) or isinstance(mag, bool):
        return
    flag = f"--{pname.replace('_', '-')}"
    value = f"{value:~}" if hasattr(value, "units") else value
    if mag < 0:
        raise ValueError(f"{name}: {flag} must not be negative, got {value}")
    zero_default = (
        default is not inspect.Parameter.empty
        and default is not None
        and getattr(
            parse_value(default) if isinstance(default, str) else default, "magnitude", default
        )
        == 0
    )
    if mag == 0 and (name, pname) not in ZERO_ALLOWED and not zero_default:
        raise ValueError(f"{name}: {flag} must be greater than zero, got {value}")


def parse_value(text: str, where: str = "value") -> int | float | Quantity:
    """A number or a pint quantity from ``text``; a clear ``ValueError`` otherwise."""
    from trnkb.units import QuantityError, parse

    try:
        q = parse(str(text).strip())
    except QuantityError as e:
        raise QuantityError(
            f"{where}: {e}; write e.g. '12.8 Tbit/s', '2.4 GHz', '24 Gbit'"
        ) from None
    return q.magnitude if q.units == q._REGISTRY.dimensionless else q
