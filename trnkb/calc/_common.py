"""Small helpers shared by the calculators: input checks and building a Result."""

from __future__ import annotations

from typing import Any

import pint

from trnkb.calc.derivation import Derivation, Input, Result, count
from trnkb.units import DIMENSIONS, Q_, has_dimension, parse
from trnkb.units.qtypes import Quantity, QuantityLike, Sources


def quantity(x: QuantityLike, dim: str, name: str) -> Quantity:
    """``x`` as a Quantity of dimension ``dim`` (a key of ``trnkb.units.DIMENSIONS``)."""
    q = x if isinstance(x, pint.Quantity) else parse(x)
    if not has_dimension(q, dim):
        want = DIMENSIONS.get(dim, dim) or "a plain number"
        raise ValueError(f"{name}: {q:~} has the wrong dimension; expected {want}")
    return q


def positive_count(x: QuantityLike, name: str, integer: bool = True) -> Quantity:
    """A dimensionless count > 0 (``integer``: a whole number)."""
    q = count(x)
    m = q.magnitude
    if m <= 0:
        raise ValueError(f"{name} must be positive, got {m:g}")
    if integer and abs(m - round(m)) > 1e-9:
        raise ValueError(f"{name} must be a whole number, got {m:g}")
    return q


def fraction(x: QuantityLike, name: str) -> Quantity:
    """A dimensionless number in (0, 1] (utilization, MFU)."""
    q = count(x)
    if not 0 < q.magnitude <= 1:
        raise ValueError(f"{name} must be in (0, 1], got {q.magnitude:g}")
    return q


def result(calculator: str, formula: str, value: Quantity, inputs: dict[str, Any],
           sources: Sources = None, outputs: dict[str, Quantity] | None = None,
           notes: tuple[str, ...] = ()) -> Result:
    """Assemble a Result; ``sources`` maps input names to KB provenance dicts."""
    sources = sources or {}
    unknown = set(sources) - set(inputs)
    if unknown:
        raise ValueError(f"{calculator}: sources given for unknown inputs {sorted(unknown)}")
    ins = tuple(Input(k, v if isinstance(v, pint.Quantity) else Q_(v, ""), sources.get(k, {}))
                for k, v in inputs.items())
    return Result(value, Derivation(calculator, formula, ins, dict(outputs or {}), notes))
