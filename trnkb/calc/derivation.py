"""Lineage of a derived figure: the formula, the inputs with their units and sources.

Every calculator returns a :class:`Result`: the value (a pint Quantity; counts are
dimensionless) and a :class:`Derivation` that says how it was obtained. A Result unpacks
like a pair, ``value, derivation = memory.hbm_capacity(...)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pint

from trnkb.units import Q_, format_unit, parse
from trnkb.units.qtypes import Provenance, Quantity, QuantityLike


@dataclass(frozen=True)
class Input:
    """One input of a derivation.

    ``source`` is empty for a value the user typed; when the value was read from the
    knowledge base it holds the provenance (``source``, ``locator``, ``kind``, ``id``,
    ``field``) as given by ``kb.provenance``.
    """

    name: str
    value: Quantity
    source: Provenance = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {"name": self.name, **quantity_json(self.value)}
        if self.source:
            out["source"] = {k: _plain(v) for k, v in self.source.items()}
        return out


@dataclass(frozen=True)
class Derivation:
    """How a value was computed: ``formula`` in words/symbols, the ``inputs`` it used,
    ``outputs`` (secondary results, e.g. switches per layer) and free ``notes``."""

    calculator: str
    formula: str
    inputs: tuple[Input, ...]
    outputs: dict[str, Quantity] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "calculator": self.calculator,
            "formula": self.formula,
            "inputs": [i.to_dict() for i in self.inputs],
            "outputs": {k: quantity_json(v) for k, v in self.outputs.items()},
            "notes": list(self.notes),
        }

    def sources(self) -> list[str]:
        """Ids of the sources behind KB-read inputs, in input order, without repeats."""
        seen: list[str] = []
        for i in self.inputs:
            s = i.source.get("source")
            if s and s not in seen:
                seen.append(s)
        return seen


@dataclass(frozen=True)
class Result:
    """A derived value and its derivation."""

    value: Quantity
    derivation: Derivation

    def __iter__(self) -> Iterator[Any]:
        return iter((self.value, self.derivation))

    def output(self, name: str) -> Quantity:
        """The main value (``name == "value"``) or a named secondary output."""
        if name == "value":
            return self.value
        try:
            return self.derivation.outputs[name]
        except KeyError:
            raise KeyError(f"{self.derivation.calculator} has no output {name!r}; outputs are "
                           f"value, {', '.join(self.derivation.outputs)}") from None

    def to_dict(self, unit: str | None = None) -> dict[str, Any]:
        """JSON-ready ``{"value", "unit", "derivation"}`` (counts have unit "")."""
        return {**quantity_json(self.value, unit), "derivation": self.derivation.to_dict()}


def quantity_json(q: Quantity | float, unit: str | None = None) -> dict[str, Any]:
    """``{"value": magnitude, "unit": text}`` in ``unit`` (default: as the quantity is).

    Dimensionless quantities (counts, ratios) are written with unit ``""``.
    """
    if not isinstance(q, pint.Quantity):
        q = Q_(q, "")
    if q.dimensionless:
        return {"value": _number(q.to("").magnitude), "unit": ""}
    if unit:
        return {"value": _number(q.to(unit).magnitude), "unit": unit}
    return {"value": _number(q.magnitude), "unit": unit_text(q.units)}


def unit_text(unit: Any) -> str:
    """Short unit text that pint parses back to the same unit: :func:`trnkb.units.format_unit`
    (bits written ``bit``, ``Gbit/s``; pint's ``Gb`` is a gilbert)."""
    return format_unit(unit)


def count(x: QuantityLike) -> Quantity:
    """A dimensionless Quantity from a number, a string such as ``"144"`` or a dimensionless
    Quantity (e.g. lanes)."""
    q = x if isinstance(x, pint.Quantity) else parse(x) if isinstance(x, str) else Q_(x, "")
    if not q.dimensionless:
        raise ValueError(f"expected a plain count, got {q:~}")
    return q.to("")


def _number(m: Any) -> int | float:
    m = float(m)
    if math.isfinite(m) and m.is_integer() and abs(m) < 2**53:
        return int(m)
    # 128.00000000000003 from 12.8 Tbit/s / 100 Gbit/s is 128: keep 12 significant digits
    return float(f"{m:.12g}")


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    return v
