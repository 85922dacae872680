"""Comparison views over the knowledge base: tidy tables of magnitudes with their sources.

Every view returns plain magnitudes in a stated unit (the field's unit from
:mod:`trnkb.schema`, or the unit named in the column) next to the source of each value,
ready for a table or a chart (:mod:`trnkb.charts`). Missing values stay missing: a chip
whose sources give no TDP has no FLOP/s per watt.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import pandas as pd
import pint

from trnkb.kb import KnowledgeBase
from trnkb.schema import TABLES
from trnkb.units import Q_

__all__ = [
    "CHIP_FIELDS", "HEADLINE", "LANE_MEDIA", "PRECISIONS", "accelerators", "chip_values", "cited",
    "columns", "comparison", "flops_per_watt", "fmt", "lane_budget", "magnitudes", "profile",
    "ridge_point", "rows", "sources_of", "standing", "unit_str", "wide",
]

# Dense peak rates, lowest precision last; sparse rates are never mixed in.
PRECISIONS = ("dense_fp32", "dense_tf32", "dense_bf16", "dense_fp8", "dense_mxfp8",
              "dense_int8", "dense_mxfp6", "dense_mxfp4", "dense_fp4")
CHIP_FIELDS = PRECISIONS + ("hbm_capacity", "hbm_bandwidth", "scaleup_bandwidth",
                            "scaleout_bandwidth", "tdp")
LONG_COLUMNS = ["id", "chip", "field", "unit", "magnitude", "source", "locator", "kind"]
# The comparison set of the chips notebook: Trainium3 against its generation's rivals.
HEADLINE = ("trainium3", "trainium2", "b200", "gb200", "gb300", "mi355x", "mi455x", "tpu-v7")


def unit_str(unit) -> str:
    """A unit as analysts write it: ``TB/s``, ``Gbit/s``, ``PFLOPS``, ``FLOP/byte``."""
    s = f"{Q_(1, unit).units:~P}"
    s = re.sub(r"\bflops\b", "FLOPS", re.sub(r"flops\b", "FLOPS", s))
    s = re.sub(r"flop\b", "FLOP", s)
    return re.sub(r"\b([kMGTP]?)b\b", r"\1bit", s)


def fmt(value, digits: int = 4) -> str:
    """A value as prose, ``digits`` significant digits, no exponent: ``144 GB``,
    ``1.2 TB/s``, ``20,000 TFLOPS``, ``8`` (counts); text unchanged."""
    if isinstance(value, pint.Quantity):
        mag = _number(float(value.magnitude), digits)
        return mag if value.dimensionless else f"{mag} {unit_str(value.units)}"
    return str(value)


def _number(x: float, digits: int) -> str:
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    r = float(f"{x:.{digits}g}")
    decimals = max(digits - 1 - math.floor(math.log10(abs(r))), 0)
    text = f"{r:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def accelerators(kb: KnowledgeBase) -> list[str]:
    """Chip ids that are accelerators: every chip not named as a rack's host CPU (KB order)."""
    racks = kb.table("racks")
    hosts = set(racks["host_cpu"].dropna()) if "host_cpu" in racks else set()
    return [i for i in kb.ids("chips") if i not in hosts]


def _names(kb: KnowledgeBase) -> dict[str, str]:
    chips = kb.table("chips")
    return dict(zip(chips["id"], chips["name"], strict=True))


def chip_values(kb: KnowledgeBase, ids: Sequence[str] | None = None,
                fields: Iterable[str] = CHIP_FIELDS) -> pd.DataFrame:
    """Preferred values of chip ``fields``, long: one row per (chip, field) a source gives.

    Returns
    -------
    DataFrame
        ``id, chip, field, unit, magnitude, source, locator, kind``; ``magnitude`` is in
        the field's unit from :data:`trnkb.schema.TABLES` (e.g. TFLOPS, GB, TB/s, W).
    """
    ids = list(ids) if ids is not None else accelerators(kb)
    fields = list(fields)
    f = kb.facts
    sub = f[(f["table"] == "chips") & f["preferred"] & f["id"].isin(ids) & f["field"].isin(fields)]
    sub = sub.assign(
        chip=sub["id"].map(_names(kb)),
        unit=[TABLES["chips"].field(x).unit for x in sub["field"]],
        order=[ids.index(i) * len(fields) + fields.index(x) for i, x in zip(sub["id"], sub["field"], strict=True)],
    )
    return sub.sort_values("order")[LONG_COLUMNS].reset_index(drop=True)


def _derived(kb: KnowledgeBase, chip: str, num: str, den: str, unit: str):
    a, b = kb.get(chip, num), kb.get(chip, den)
    if a is None or b is None:
        return None, ""
    sources = " + ".join(dict.fromkeys(kb.provenance(chip, x)["source"] for x in (num, den)))
    return (a / b).to(unit), sources


def ridge_point(kb: KnowledgeBase, chip: str, precision: str = "dense_bf16") -> pint.Quantity | None:
    """Arithmetic intensity where a kernel turns compute-bound, FLOP/byte.

    ``ridge = peak FLOP/s / HBM bandwidth``; None when the KB lacks either value.
    """
    return _derived(kb, chip, precision, "hbm_bandwidth", "FLOP/byte")[0]


def flops_per_watt(kb: KnowledgeBase, chip: str, precision: str = "dense_bf16") -> pint.Quantity | None:
    """Peak FLOP/s per watt of TDP, TFLOPS/W; None when the KB lacks either value."""
    return _derived(kb, chip, precision, "tdp", "TFLOPS/W")[0]


def comparison(kb: KnowledgeBase, ids: Sequence[str] | None = None,
               fields: Iterable[str] = CHIP_FIELDS,
               precisions: Iterable[str] = ("dense_bf16", "dense_fp8")) -> pd.DataFrame:
    """:func:`chip_values` plus derived rows: ridge point and FLOP/s per watt per precision.

    Derived rows have ``kind == "derived"``, ``locator`` naming the formula and ``source``
    joining the sources of both inputs with ``+``.
    """
    ids = list(ids) if ids is not None else accelerators(kb)
    names = _names(kb)
    rows = []
    for chip in ids:
        for p in precisions:
            short = p.removeprefix("dense_")
            for field, den, unit in ((f"ridge_point_{short}", "hbm_bandwidth", "FLOP/byte"),
                                     (f"flops_per_watt_{short}", "tdp", "TFLOPS/W")):
                q, src = _derived(kb, chip, p, den, unit)
                if q is not None:
                    rows.append({"id": chip, "chip": names[chip], "field": field, "unit": unit,
                                 "magnitude": float(q.magnitude), "source": src,
                                 "locator": f"{p} / {den}", "kind": "derived"})
    derived = pd.DataFrame(rows, columns=LONG_COLUMNS)
    parts = [x for x in (chip_values(kb, ids, fields), derived) if len(x)]
    return pd.concat(parts, ignore_index=True) if parts else derived


def wide(long: pd.DataFrame, column: str = "magnitude") -> pd.DataFrame:
    """Pivot a long view to one row per ``field (unit)`` and one column per chip id.

    ``column="source"`` gives the matching table of sources. Row and column order follow
    the long table.
    """
    if long.empty:
        return pd.DataFrame()
    rows = list(dict.fromkeys(f"{f} ({u})" for f, u in zip(long["field"], long["unit"], strict=True)))
    cols = list(dict.fromkeys(long["id"]))
    out = long.assign(metric=[f"{f} ({u})" for f, u in zip(long["field"], long["unit"], strict=True)])
    out = out.pivot(index="metric", columns="id", values=column).reindex(index=rows, columns=cols)
    out.index.name, out.columns.name = None, None
    return out


def columns(long: pd.DataFrame, fields: Sequence[str]) -> pd.DataFrame:
    """One row per chip with one magnitude column per field (chips lacking any are dropped).

    Returns ``id, chip``, the ``fields`` and ``source`` (all their sources joined by ``+``),
    e.g. for a scatter of FLOP/s against bandwidth.
    """
    sub = long[long["field"].isin(fields)]
    out = sub.pivot(index=["id", "chip"], columns="field", values="magnitude")
    out = out.reindex(columns=list(fields)).dropna().reset_index()
    src = sub.groupby("id")["source"].agg(lambda s: " + ".join(dict.fromkeys(s)))
    order = list(dict.fromkeys(long["id"]))
    out = out.assign(source=out["id"].map(src), o=out["id"].map(order.index)).sort_values("o")
    out.columns.name = None
    return out.drop(columns="o").reset_index(drop=True)


def standing(long: pd.DataFrame, field: str, chip: str) -> dict:
    """Where ``chip`` stands on ``field`` among the chips of a long view.

    Returns a dict: ``value`` (magnitude or None), ``unit``, ``rank`` (1 = highest; None
    when the chip has no value), ``count`` (chips with a value), ``top``/``top_value``
    and ``bottom``/``bottom_value`` (chip ids and magnitudes), ``ids`` (chips with a
    value, highest first).
    """
    sub = long[long["field"] == field].sort_values("magnitude", ascending=False, kind="stable")
    if sub.empty:
        raise KeyError(f"no chip has a value for {field!r}")
    ids = list(sub["id"])
    mine = sub[sub["id"] == chip]
    return {
        "value": float(mine["magnitude"].iloc[0]) if len(mine) else None,
        "unit": sub["unit"].iloc[0],
        "rank": ids.index(chip) + 1 if chip in ids else None,
        "count": len(ids),
        "top": ids[0], "top_value": float(sub["magnitude"].iloc[0]),
        "bottom": ids[-1], "bottom_value": float(sub["magnitude"].iloc[-1]),
        "ids": ids,
    }


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


def profile(kb: KnowledgeBase, chip: str) -> pd.DataFrame:
    """Every sourced value about ``chip`` and the rows that reference it.

    Covers the chip row and every package, HBM, rack, network (lane budget) and core row
    whose ``chip`` field names it.

    Returns
    -------
    DataFrame
        ``table, id, field, value, source, locator, kind`` with ``value`` written with its
        unit (:func:`fmt`), preferred values only.
    """
    kb.table_of(chip)  # raises KeyError for an unknown id
    f = kb.facts[kb.facts["preferred"]]
    linked = set(f.loc[(f["field"] == "chip") & (f["value"] == chip), "id"])
    sub = f[((f["id"] == chip) | f["id"].isin(linked)) & (f["field"] != "chip")]
    order = {t: i for i, t in enumerate(TABLES)}
    sub = sub.assign(value=sub["value"].map(fmt), t=sub["table"].map(order))
    sub = sub.sort_values(["t", "id"], kind="stable")
    return sub[["table", "id", "field", "value", "source", "locator", "kind"]].reset_index(drop=True)


def rows(kb: KnowledgeBase, table: str, chip: str | None = None,
         columns: Sequence[str] | None = None, units: dict[str, str] | None = None,
         ids: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of a wide table as plain magnitudes with ``column (unit)`` headers.

    ``chip`` keeps only rows whose ``chip`` field names it (HBM, packages, racks, lane
    budgets); ``ids`` keeps those rows, in that order; ``columns`` picks and orders
    columns (``id`` is always first).
    """
    df = kb.table(table)
    if ids is not None:
        df = df.set_index("id").loc[[i for i in ids if i in set(df["id"])]].reset_index()
    if chip is not None:
        kb.table_of(chip)  # raises KeyError for an unknown id
        df = df[df["chip"] == chip] if "chip" in df else df.iloc[0:0]
    if columns is not None:
        df = df[["id"] + [c for c in columns if c in df.columns and c != "id"]]
    return magnitudes(df, units).reset_index(drop=True)


def sources_of(kb: KnowledgeBase, ids: Iterable[str], fields: Iterable[str] | None = None) -> list[str]:
    """Sorted source ids behind the preferred values of rows ``ids`` (optionally only ``fields``)."""
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


# How a lane budget splits by medium: (field, medium, state). Rows, not branches.
LANE_MEDIA = (
    ("pcb_lanes", "PCB", "active"),
    ("backplane_active_lanes", "backplane", "active"),
    ("backplane_redundant_lanes", "backplane", "redundant"),
    ("cross_rack_lanes", "cross-rack", "active"),
)


def lane_budget(kb: KnowledgeBase, chip: str) -> pd.DataFrame:
    """Scale-up lanes of ``chip`` by medium, from its ``lane-budget`` network row(s).

    Returns
    -------
    DataFrame
        ``budget, medium, state, lane`` (medium and state as one label), ``lanes, source``; a medium the sources do not give is
        left out. Cross-rack lanes count as active (they carry traffic in the domain).
    """
    net = kb.table("network")
    cols = ["budget", "medium", "state", "lane", "lanes", "source"]
    if "chip" not in net:
        return pd.DataFrame(columns=cols)
    budgets = net[(net["category"] == "lane-budget") & (net["chip"] == chip)]["id"]
    out = []
    for b in budgets:
        for field, medium, state in LANE_MEDIA:
            v = kb.get(b, field)
            if v is not None:
                out.append({"budget": b, "medium": medium, "state": state,
                            "lane": f"{medium} ({state})", "lanes": int(v.magnitude),
                            "source": kb.provenance(b, field)["source"]})
    return pd.DataFrame(out, columns=cols)
