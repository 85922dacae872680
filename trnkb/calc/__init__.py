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
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from trnkb.calc import flops, memory, network, power, scaleup, system, tco
from trnkb.calc.derivation import Derivation, Input, Result

__all__ = [
    "CALCULATORS", "Calculator", "Derivation", "Input", "Result", "calculator", "flops",
    "memory", "network", "power", "run", "scaleup", "system", "tco",
]


@dataclass(frozen=True)
class Calculator:
    """A named calculator: the function and the unit its value is shown in."""

    name: str
    function: Callable[..., Result]
    unit: str  # "" for counts

    @property
    def params(self) -> list[inspect.Parameter]:
        return [p for p in inspect.signature(self.function).parameters.values()
                if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]

    @property
    def summary(self) -> str:
        return (inspect.getdoc(self.function) or "").split("\n\n")[0].replace("\n", " ")

    def usage(self) -> str:
        parts = []
        for p in self.params:
            flag = f"--{p.name.replace('_', '-')} VALUE"
            parts.append(flag if p.default is inspect.Parameter.empty else f"[{flag}]")
        return " ".join(parts)


CALCULATORS: dict[str, Calculator] = {c.name: c for c in (
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
)}


def calculator(name: str) -> Calculator:
    """The calculator called ``name`` (``KeyError`` naming the known ones otherwise)."""
    try:
        return CALCULATORS[name]
    except KeyError:
        raise KeyError(f"no calculator {name!r}; calculators are "
                       f"{', '.join(CALCULATORS)}") from None


def run(name: str, args: dict, sources: dict | None = None) -> Result:
    """Call calculator ``name`` with ``args`` keyed by parameter name (``-`` or ``_``).

    Values are numbers, pint quantities or strings pint parses (``"12.8 Tbit/s"``).
    Unknown or missing parameters raise ``ValueError``.
    """

    calc = calculator(name)
    params = {p.name: p for p in calc.params}
    kwargs = {}
    for key, raw in args.items():
        pname = key.replace("-", "_")
        if pname not in params:
            raise ValueError(f"{name}: unknown parameter --{key.replace('_', '-')}; "
                             f"usage: {name} {calc.usage()}")
        kwargs[pname] = parse_value(raw, f"--{pname.replace('_', '-')}") if isinstance(
            raw, str) else raw
    missing = [p for p, spec in params.items()
               if spec.default is inspect.Parameter.empty and p not in kwargs]
    if missing:
        raise ValueError(f"{name}: missing " + ", ".join(f"--{m.replace('_', '-')}" for m in missing)
                         + f"; usage: {name} {calc.usage()}")
    return calc.function(**kwargs, sources=sources)


def parse_value(text: str, where: str = "value"):
    """A number or a pint quantity from ``text``; a clear ``ValueError`` otherwise."""
    from trnkb.units import QuantityError, parse

    try:
        q = parse(str(text))
    except QuantityError as e:
        raise ValueError(f"{where}: {e}; write e.g. '12.8 Tbit/s', '2.4 GHz', '24 Gbit'") from None
    return q.magnitude if q.units == q._REGISTRY.dimensionless else q
