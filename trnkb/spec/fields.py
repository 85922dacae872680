"""The vocabulary of the field dictionary: :class:`Field`, :class:`Table` and their constructors.

:mod:`trnkb.spec.schema` documents the field kinds and builds the tables from these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ID_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*\Z"  # \Z: "$" would accept a final newline
VALUE_KINDS = ("reported", "estimate", "derived")
SOURCE_KINDS = ("vendor", "analyst", "press", "seed", "derived", "paper")
STATUSES = ("shipping", "announced", "retired")


@dataclass(frozen=True)
class Field:
    """One column of a table.

    ``lo``/``hi`` bound the magnitude in ``unit`` (inclusive); values outside are refused
    as implausible. ``tolerance`` is the relative difference above which two sources
    disagree (a conflict).
    """

    name: str
    kind: str  # quantity | count | text | ref | label
    description: str
    dim: str = ""  # key of trnkb.units.DIMENSIONS for quantities
    unit: str = ""  # display / export unit
    lo: float | None = None
    hi: float | None = None
    ref: str = ""  # target table for kind == "ref"
    choices: tuple[str, ...] = ()
    required: bool = False
    tolerance: float = 0.01
    integer: bool = True  # counts only: a whole number (lanes, stacks); False for ratios


@dataclass(frozen=True)
class Table:
    name: str
    description: str
    fields: tuple[Field, ...]
    prefix_fields: tuple[Field, ...] = field(default=())  # e.g. sparse_* families

    def field(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        for f in self.prefix_fields:
            if name.startswith(f.name):
                return Field(**{**f.__dict__, "name": name})
        return None

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]


def _q(name: str, dim: str, unit: str, lo: float, hi: float, description: str, **kw: Any) -> Field:
    return Field(name, "quantity", description, dim=dim, unit=unit, lo=lo, hi=hi, **kw)


def _n(name: str, lo: float, hi: float, description: str, **kw: Any) -> Field:
    return Field(name, "count", description, lo=lo, hi=hi, **kw)


def _t(name: str, description: str, **kw: Any) -> Field:
    return Field(name, "text", description, **kw)


def _flops(name: str, what: str) -> Field:
    # up to 1 EFLOPS: a wafer-scale chip (Cerebras WSE-3, 125 PF) is one chip
    return _q(name, "compute_rate", "TFLOPS", 0.01, 1e6, f"Peak {what} per chip, FLOP/s.")


NAME = Field("name", "label", "Display name.", required=True)
VENDOR = Field("vendor", "label", "Company that designs or sells it.", required=True)
NOTES = Field("notes", "label", "Free-text remarks about the row.")
