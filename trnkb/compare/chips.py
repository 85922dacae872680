"""Chips compared: peak FLOP/s by precision, memory, bandwidth and power with their
sources, derived ridge point and FLOP/s per watt, and where a chip stands."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd
import pint

from trnkb.calc import flops, memory
from trnkb.calc.derivation import Result
from trnkb.compare.tables import unit_str
from trnkb.kb import KnowledgeBase
from trnkb.spec.fields import Field
from trnkb.spec.schema import TABLES
from trnkb.units.qtypes import Quantity
from trnkb.views.display import short_name

# Dense peak rates, lowest precision last; sparse rates are never mixed in.
PRECISIONS = ("dense_fp32", "dense_tf32", "dense_bf16", "dense_fp8", "dense_mxfp8",
              "dense_int8", "dense_mxfp6", "dense_mxfp4", "dense_fp4")

CHIP_FIELDS = PRECISIONS + ("hbm_capacity", "hbm_bandwidth", "scaleup_bandwidth",
                            "scaleout_bandwidth", "tdp")
LONG_COLUMNS = ["id", "chip", "name", "vendor", "field", "unit", "magnitude", "source", "locator",
                "kind", "qualifier"]

# The comparison set of the chips notebook: Trainium3 against its generation's rivals.
HEADLINE = ("trainium3", "trainium2", "b200", "gb200", "gb300", "mi355x", "mi455x", "tpu-v7")


def accelerators(kb: KnowledgeBase) -> list[str]:
    """Chip ids that are accelerators: every chip not named as a rack's host CPU (KB order)."""
    racks = kb.table("racks")
    hosts = set(racks["host_cpu"].dropna()) if "host_cpu" in racks else set()
    return [i for i in kb.ids("chips") if i not in hosts]


def _names(kb: KnowledgeBase) -> dict[str, str]:
    chips = kb.table("chips")
    return dict(zip(chips["id"], chips["name"], strict=True))


def _short(kb: KnowledgeBase) -> dict[str, str]:
    return {i: short_name(n) for i, n in _names(kb).items()}


def _vendors(kb: KnowledgeBase) -> dict[str, str]:
    chips = kb.table("chips")
    return dict(zip(chips["id"], chips["vendor"], strict=True))


def _field(name: str) -> Field:
    f = TABLES["chips"].field(name)
    if f is None:
        raise KeyError(f"chips has no field {name!r}")
    return f


def chip_values(kb: KnowledgeBase, ids: Sequence[str] | None = None,
                fields: Iterable[str] = CHIP_FIELDS) -> pd.DataFrame:
    """Preferred values of chip ``fields``, long: one row per (chip, field) a source gives.

    Returns
    -------
    DataFrame
        ``id, chip, name, vendor, field, unit, magnitude, source, locator, kind, qualifier``
        (``chip`` the full display name, ``name`` the short one for axes); ``magnitude`` is
        in the field's unit from :data:`trnkb.spec.schema.TABLES` (e.g. TFLOPS, GB, TB/s, W);
        ``qualifier`` is what the source says the figure counts when that is not the
        field's plain meaning (MI455X FP8: "dense or sparse not stated"), else ''.
    """
    ids = list(ids) if ids is not None else accelerators(kb)
    fields = list(fields)
    f = kb.facts
    sub = f[(f["table"] == "chips") & f["preferred"] & f["id"].isin(ids) & f["field"].isin(fields)]
    sub = sub.assign(
        chip=sub["id"].map(_names(kb)), name=sub["id"].map(_short(kb)),
        vendor=sub["id"].map(_vendors(kb)), qualifier=sub["qualifier"].fillna("").astype(str),
        unit=[unit_str(_field(x).unit) for x in sub["field"]],
        order=[ids.index(i) * len(fields) + fields.index(x)
               for i, x in zip(sub["id"], sub["field"], strict=True)],
    )
    return sub.sort_values("order")[LONG_COLUMNS].reset_index(drop=True)


# Derived rows: (field prefix, denominator field, calculator). The formulas live in
# trnkb.calc; this table only says which KB fields feed them.
DERIVED = (
    ("ridge_point", "hbm_bandwidth", memory.ridge_point),
    ("flops_per_watt", "tdp", flops.flops_per_watt),
)


def _derived(kb: KnowledgeBase, chip: str, num: str, den: str,
             calculator: Callable[..., Result]) -> tuple[Quantity | None, str]:
    a, b = kb.get(chip, num), kb.get(chip, den)
    if a is None or b is None:
        return None, ""
    sources = " + ".join(dict.fromkeys(kb.provenance(chip, x)["source"] for x in (num, den)))
    return calculator(a, b).value, sources


def _qualifier(kb: KnowledgeBase, chip: str, field: str) -> str:
    """The preferred value's qualifier ('' when none or no value)."""
    try:
        return str(kb.attributes(chip, field)["qualifier"] or "")
    except KeyError:
        return ""


def ridge_point(kb: KnowledgeBase, chip: str, precision: str = "dense_bf16") -> Quantity | None:
    """Arithmetic intensity where a kernel turns compute-bound, FLOP/byte
    (:func:`trnkb.calc.memory.ridge_point` of the KB's peak and HBM bandwidth).

    None when the KB lacks either value.
    """
    return _derived(kb, chip, precision, "hbm_bandwidth", memory.ridge_point)[0]


def flops_per_watt(kb: KnowledgeBase, chip: str, precision: str = "dense_bf16") -> Quantity | None:
    """Peak FLOP/s per watt of TDP, TFLOPS/W (:func:`trnkb.calc.flops.flops_per_watt`);
    None when the KB lacks either value."""
    return _derived(kb, chip, precision, "tdp", flops.flops_per_watt)[0]


def comparison(kb: KnowledgeBase, ids: Sequence[str] | None = None,
               fields: Iterable[str] = CHIP_FIELDS,
               precisions: Iterable[str] = ("dense_bf16", "dense_fp8")) -> pd.DataFrame:
    """:func:`chip_values` plus derived rows: ridge point and FLOP/s per watt per precision.

    Derived rows have ``kind == "derived"``, ``locator`` naming the formula and ``source``
    joining the sources of both inputs with ``+``.
    """
    ids = list(ids) if ids is not None else accelerators(kb)
    names, short, vendors = _names(kb), _short(kb), _vendors(kb)
    rows = []
    for chip in ids:
        for p in precisions:
            short_p = p.removeprefix("dense_")
            for prefix, den, calculator in DERIVED:
                q, src = _derived(kb, chip, p, den, calculator)
                if q is not None:
                    rows.append({"id": chip, "chip": names[chip], "name": short[chip],
                                 "vendor": vendors[chip], "field": f"{prefix}_{short_p}",
                                 "unit": unit_str(q.units), "magnitude": float(q.magnitude),
                                 "source": src,
                                 "locator": f"{p} / {den}", "kind": "derived",
                                 "qualifier": _qualifier(kb, chip, p)})
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
    pairs = list(zip(long["field"], long["unit"], strict=True))
    rows = list(dict.fromkeys(f"{f} ({u})" for f, u in pairs))
    cols = list(dict.fromkeys(long["id"]))
    out = long.assign(metric=[f"{f} ({u})" for f, u in pairs])
    out = out.pivot(index="metric", columns="id", values=column).reindex(index=rows, columns=cols)
    out.index.name, out.columns.name = None, None
    return out


def columns(long: pd.DataFrame, fields: Sequence[str]) -> pd.DataFrame:
    """One row per chip with one magnitude column per field (chips lacking any are dropped).

    Returns ``id, chip`` (and ``name, vendor`` when the view has them), the ``fields`` and
    ``source`` (all their sources joined by ``+``), e.g. for a scatter of FLOP/s against bandwidth.
    """
    sub = long[long["field"].isin(fields)]
    keys = [k for k in ("id", "chip", "name", "vendor") if k in sub]
    out = sub.pivot(index=keys, columns="field", values="magnitude")
    out = out.reindex(columns=list(fields)).dropna().reset_index()
    src = sub.groupby("id")["source"].agg(lambda s: " + ".join(dict.fromkeys(s)))
    order = list(dict.fromkeys(long["id"]))
    out = out.assign(source=out["id"].map(src), o=out["id"].map(order.index)).sort_values("o")
    out.columns.name = None
    return out.drop(columns="o").reset_index(drop=True)


def standing(long: pd.DataFrame, field: str, chip: str) -> dict[str, Any]:
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
        ``budget, medium, state, lane`` (medium and state as one label), ``lanes, source``; a
        medium the sources do not give is left out. Cross-rack lanes count as active (they
        carry traffic in the domain).
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


def rack_skus(kb: KnowledgeBase, chip: str) -> list[str]:
    """One phrase per rack SKU of ``chip``: its name, scale-up domain size and cooling,
    each part only where the KB has it (``"Trainium3 NL72x2 Switched (144 chips per
    scale-up domain, liquid-cooled)"``)."""
    racks = kb.table("racks")
    out = []
    for rid, name in zip(racks["id"], racks["name"], strict=True):
        if kb.get(rid, "chip") != chip:
            continue
        size, cooling = kb.get(rid, "domain_size"), kb.get(rid, "cooling")
        parts = (([f"{int(size.magnitude)} chips per scale-up domain"] if size is not None else [])
                 + ([f"{cooling}-cooled"] if cooling is not None else []))
        out.append(f"{name} ({', '.join(parts)})" if parts else str(name))
    return out


def caveats(kb: KnowledgeBase, long: pd.DataFrame,
            fields: Iterable[str] = ("dense_fp8", "dense_fp4")) -> list[str]:
    """Sentences saying what a ranking of ``fields`` rests on, one per (chip, field) of
    the view that needs one: the qualifier of an ambiguous figure (MI455X FP8/FP4: "dense
    or sparse not stated") and, where sources disagree, which figure the view uses and
    what the others say (Trainium3 FP8: AWS's chip table, the MXFP8 rate, against the
    architecture guide's plain FP8 at the BF16 rate; ``trnkb conflicts`` lists them).
    Plain text (no markup), for :func:`trnkb.views.nbsetup.answer` or a Markdown escape.

    Values are the KB's, written by :func:`trnkb.units.format_quantity`.
    """
    from trnkb.units import format_quantity

    names = _names(kb)
    out = []
    fields = list(fields)
    sub = long[long["field"].isin(fields)]
    for chip, field in dict.fromkeys(zip(sub["id"], sub["field"], strict=True)):
        vals = kb.values(chip, field)
        if vals.empty:
            continue
        first = vals.iloc[0]
        used = format_quantity(first["value"])
        kind, _, precision = field.partition("_")
        label = f"{names.get(chip, chip)} {kind} {precision.upper()}"
        others = [r for _, r in vals.iloc[1:].iterrows() if _differs(r["value"], first["value"])]
        qual = str(first["qualifier"] or "")
        if not qual and not others:
            continue
        text = f"{label}: this view uses {used} from {first['source']} ({first['locator']}"
        text += f"; {first['note']})" if first["note"] else ")"
        if qual:
            text += f", qualified by the source: {qual}"
        for r in others:
            text += (f"; {r['source']} gives {format_quantity(r['value'])}"
                     + (f" ({r['note']})" if r["note"] else ""))
        out.append(text + ("; see trnkb conflicts." if others else "."))
    return out


def _differs(a: object, b: object) -> bool:
    """Whether two values of one field differ (quantities by more than 1e-9 relative)."""
    if isinstance(a, pint.Quantity) and isinstance(b, pint.Quantity):
        try:
            return bool(abs(float((a - b) / b)) > 1e-9)
        except (ZeroDivisionError, pint.DimensionalityError):
            return True
    return bool(a != b)
