"""Generic table views: quantities as prose, pint columns as magnitudes, rows of a
table, sources and conflicts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
import pint

from trnkb.kb import KnowledgeBase
from trnkb.spec.schema import TABLES
from trnkb.units import format_number, format_unit


def unit_str(unit: Any) -> str:
    """A unit as analysts write it: :func:`trnkb.units.format_unit` (``TB/s``, ``Gbit/s``,
    ``PFLOP/s``, ``FLOP/B``), with two display-only touches: a rate per watt stays
    ``TFLOPS/W`` (one slash reads better than ``TFLOP/(s*W)``) and powers are superscripts
    (``mm²``)."""
    s = format_unit(unit)
    s = re.sub(r"\b([kMGTPE]?)FLOP/\(s\*([kM]?W)\)", r"\1FLOPS/\2", s)
    return s.replace("**2", "\u00b2").replace("**3", "\u00b3")


def fmt(value: Any, digits: int = 4) -> str:
    """A value as prose, ``digits`` significant digits, no exponent: ``144 GB``,
    ``1.2 TB/s``, ``20,000 TFLOP/s``, ``8`` (counts); text unchanged. Numbers go through
    :func:`trnkb.units.format_number` (the one formatter)."""
    if isinstance(value, pint.Quantity):
        mag = _number(float(value.magnitude), digits)
        return mag if value.dimensionless else f"{mag} {unit_str(value.units)}"
    return str(value)


def _number(x: float, digits: int) -> str:
    return format_number(x, sig=digits)


def magnitudes(df: pd.DataFrame, units: dict[str, str] | None = None) -> pd.DataFrame:
    """Replace pint columns by plain magnitudes named ``column (unit)``.

    ``units`` picks the unit per column (default: the column's own unit, abbreviated).
    Non-pint columns are kept as they are.
    """
    units = units or {}
    out = {}
    for c in df.columns:
        s = df[c]
        if s.dtype.name.startswith("pint"):
            u = units.get(c) or unit_str(s.pint.units)
            out[f"{c} ({u})"] = s.pint.to(u).pint.magnitude.astype("Float64")
        else:
            out[c] = s
    return pd.DataFrame(out, index=df.index)


def rows(kb: KnowledgeBase, table: str, chip: str | None = None,
         columns: Sequence[str] | None = None, units: dict[str, str] | None = None,
         ids: Sequence[str] | None = None, sources: bool = False) -> pd.DataFrame:
    """Rows of a wide table as plain magnitudes with ``column (unit)`` headers.

    ``chip`` keeps only rows whose ``chip`` field names it (HBM, packages, racks, lane
    budgets); ``ids`` keeps those rows, in that order; ``columns`` picks and orders
    columns (``id`` is always first). ``sources`` adds a last ``sources`` column: the
    sources behind the preferred values shown in each row (``a + b``).
    """
    df = kb.table(table)
    if ids is not None:
        df = df.set_index("id").loc[[i for i in ids if i in set(df["id"])]].reset_index()
    if chip is not None:
        kb.table_of(chip)  # raises KeyError for an unknown id
        df = df[df["chip"] == chip] if "chip" in df else df.iloc[0:0]
    if columns is not None:
        df = df[["id"] + [c for c in columns if c in df.columns and c != "id"]]
    out = magnitudes(df, units).reset_index(drop=True)
    if sources:
        shown = [c for c in df.columns if c != "id"]
        out["sources"] = [" + ".join(sources_of(kb, [i], shown)) or None for i in df["id"]]
    return out


def sources_of(kb: KnowledgeBase, ids: Iterable[str],
               fields: Iterable[str] | None = None) -> list[str]:
    """Sorted source ids behind the preferred values of rows ``ids`` (optionally only
    ``fields``)."""
    f = kb.facts[kb.facts["preferred"] & kb.facts["id"].isin(list(ids))]
    if fields is not None:
        f = f[f["field"].isin(list(fields))]
    return sorted(set(f["source"]))


def cited(kb: KnowledgeBase, source_ids: Iterable[str]) -> pd.DataFrame:
    """The bibliography entries (``id, title, publisher, date, kind, url``) of ``source_ids``.

    ``"a + b"`` strings (derived values) are split into their sources.
    """
    ids = {s.strip() for x in source_ids for s in str(x).split("+") if s.strip()}
    out = kb.sources[kb.sources["id"].isin(ids)].sort_values("id")
    return out[["id", "title", "publisher", "date", "kind", "url"]].reset_index(drop=True)


def conflicts(kb: KnowledgeBase, table: str | None = None, ids: Iterable[str] | None = None,
              kind: str | None = None) -> pd.DataFrame:
    """:attr:`KnowledgeBase.conflicts`, optionally only one table, some row ids, or one
    ``type`` (``value``, ``unit-ambiguity``, ``qualifier``, ``text``)."""
    c = kb.conflicts
    if table is not None:
        c = c[c["table"] == table]
    if ids is not None:
        c = c[c["id"].isin(list(ids))]
    if kind is not None:
        c = c[c["type"] == kind]
    return c.reset_index(drop=True)


def profile(kb: KnowledgeBase, chip: str) -> pd.DataFrame:
    """Every sourced value about ``chip`` and the rows that reference it.

    Covers the chip row and every package, HBM, rack, network (lane budget) and core row
    whose ``chip`` field names it.

    Returns
    -------
    DataFrame
        ``table, id, field, value, source, locator, kind`` with ``value`` written with its
        unit (:func:`fmt`) and, in parentheses, the source's qualifier where it has one
        (``20 PFLOP/s (dense or sparse not stated)``); preferred values only.
    """
    kb.table_of(chip)  # raises KeyError for an unknown id
    f = kb.facts[kb.facts["preferred"]]
    linked = set(f.loc[(f["field"] == "chip") & (f["value"] == chip), "id"])
    sub = f[((f["id"] == chip) | f["id"].isin(linked)) & (f["field"] != "chip")]
    order = {t: i for i, t in enumerate(TABLES)}
    qual = sub["qualifier"].fillna("").astype(str)
    text = [fmt(v) + (f" ({q})" if q else "") for v, q in zip(sub["value"], qual, strict=True)]
    sub = sub.assign(value=text, t=sub["table"].map(order))
    sub = sub.sort_values(["t", "id"], kind="stable")
    keep = ["table", "id", "field", "value", "source", "locator", "kind"]
    return sub[keep].reset_index(drop=True)
