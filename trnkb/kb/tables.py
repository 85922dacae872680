"""Wide views: one row per id, the preferred value of each field in a column.

Two shapes of the same table:

- pint-pandas (the default): quantity columns carry their unit (``pint[TB/s]``), counts
  are ``Int64`` (or ``Float64``), text and labels ``str``;
- plain (``units="columns"``): quantity and count columns are ``float64`` with the unit in
  the column name (``dense_bf16 (TFLOP/s)``), missing values NaN (never zero), so the
  frame works with ``sort_values``, ``nlargest``, ``describe``, ``to_parquet`` and altair
  with no extra step. The unit is in parentheses, not brackets: Vega-Lite reads
  ``a [b]`` in a field name as a nested accessor and would plot nothing.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

import trnkb.units.frames  # noqa: F401  (binds pint[...] columns to the project registry)
from trnkb.spec.fields import Table
from trnkb.spec.schema import TABLES
from trnkb.units import format_unit


def wide_table(table: Table, labels: list[dict[str, Any]],
               preferred: dict[str, dict[str, dict[str, Any]]]) -> pd.DataFrame:
    """The pint-pandas wide view. ``preferred`` maps field -> id -> preferred fact."""
    ids = [x["id"] for x in labels]
    out = pd.DataFrame({"id": pd.Series(ids, dtype="str")})
    names = table.names + sorted(set(preferred) - set(table.names))
    for name in names:
        f = table.field(name)
        assert f is not None  # table.names and the facts' fields are the table's
        if f.kind == "label":
            vals = [x.get(name) for x in labels]
            if any(v is not None for v in vals):
                out[name] = pd.Series(vals, dtype="str")
            continue
        if name not in preferred:
            continue
        got = [preferred[name].get(i) for i in ids]
        if f.kind in ("text", "ref"):
            out[name] = pd.Series([g["value"] if g else None for g in got], dtype="str")
            continue
        mags = [g["magnitude"] if g else math.nan for g in got]
        if f.kind == "count":
            integral = all(math.isnan(m) or float(m).is_integer() for m in mags)
            out[name] = pd.array([None if math.isnan(m) else m for m in mags],
                                 dtype="Int64" if integral else "Float64")
        else:
            # a pint-pandas dtype string: unknown to pandas-stubs
            arr = pd.array(mags, dtype=f"pint[{f.unit}][Float64]")  # type: ignore[call-overload]
            out[name] = pd.Series(arr)
    return out


def column_name(table: str, field: str) -> str:
    """The plain column name of a field: ``dense_bf16 (TFLOP/s)``; counts and text keep
    their bare name."""
    f = TABLES[table].field(field)
    if f is not None and f.kind == "quantity" and f.unit:
        return f"{field} ({format_unit(f.unit)})"
    return field


def plain_columns(name: str, wide: pd.DataFrame) -> pd.DataFrame:
    """``wide`` (pint-pandas) with quantity and count columns as float64 (NaN for missing),
    quantity columns renamed ``field (unit)`` (the field's display unit)."""
    out: dict[str, Any] = {}
    for col in wide.columns:
        s = wide[col]
        if s.dtype.name.startswith("pint"):
            f = TABLES[name].field(col)
            in_unit = s.pint.to(f.unit) if f is not None and f.unit else s
            mags = in_unit.pint.magnitude
            out[column_name(name, col)] = pd.to_numeric(pd.Series(mags, index=s.index),
                                                        errors="coerce").astype("float64")
        elif pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
            out[col] = s.astype("Float64").astype("float64")
        else:
            out[col] = s
    return pd.DataFrame(out, index=wide.index)
