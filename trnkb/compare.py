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

import networkx as nx
import pandas as pd
import pint

from trnkb import claims
from trnkb.calc import flops, memory, network, power, tco
from trnkb.kb import KnowledgeBase
from trnkb.schema import TABLES
from trnkb.units import Q_

__all__ = [
    "CHIP_FIELDS", "HEADLINE", "LANE_MEDIA", "PRECISIONS", "accelerators", "campus_power",
    "chip_values", "chips_per_mw", "cited", "claims_view", "code_points", "columns", "comparison", "conflicts", "format_errors",
    "engine_busy", "fabric_sweep", "gemm_sweep", "graph_layout", "hop_histograms", "port_speeds", "tco_sweep", "tor_fabrics",
    "timeline_frame", "verdict_counts", "w4a8", "flops_per_watt", "fmt", "lane_budget", "lnc_memory", "magnitudes",
    "memory_view", "profile",
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


# Derived rows: (field prefix, denominator field, calculator). The formulas live in
# trnkb.calc; this table only says which KB fields feed them.
DERIVED = (
    ("ridge_point", "hbm_bandwidth", memory.ridge_point),
    ("flops_per_watt", "tdp", flops.flops_per_watt),
)


def _derived(kb: KnowledgeBase, chip: str, num: str, den: str, calculator):
    a, b = kb.get(chip, num), kb.get(chip, den)
    if a is None or b is None:
        return None, ""
    sources = " + ".join(dict.fromkeys(kb.provenance(chip, x)["source"] for x in (num, den)))
    return calculator(a, b).value, sources


def ridge_point(kb: KnowledgeBase, chip: str, precision: str = "dense_bf16") -> pint.Quantity | None:
    """Arithmetic intensity where a kernel turns compute-bound, FLOP/byte
    (:func:`trnkb.calc.memory.ridge_point` of the KB's peak and HBM bandwidth).

    None when the KB lacks either value.
    """
    return _derived(kb, chip, precision, "hbm_bandwidth", memory.ridge_point)[0]


def flops_per_watt(kb: KnowledgeBase, chip: str, precision: str = "dense_bf16") -> pint.Quantity | None:
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
    names = _names(kb)
    rows = []
    for chip in ids:
        for p in precisions:
            short = p.removeprefix("dense_")
            for prefix, den, calculator in DERIVED:
                q, src = _derived(kb, chip, p, den, calculator)
                if q is not None:
                    rows.append({"id": chip, "chip": names[chip], "field": f"{prefix}_{short}",
                                 "unit": unit_str(q.units), "magnitude": float(q.magnitude),
                                 "source": src,
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


MEMORY_COLUMNS = ["id", "chip", "generation", "stacks", "stack_height", "die_density_Gbit",
                  "pin_rate_Gbps", "bus_width_bit", "capacity_GB", "capacity_derived_GB",
                  "bandwidth_TBps", "bandwidth_derived_TBps", "bandwidth_ratio", "source"]


def memory_view(kb: KnowledgeBase, chips: Sequence[str] | None = None) -> pd.DataFrame:
    """HBM per chip: the stack build, reported capacity and bandwidth, and what the build
    implies (:func:`trnkb.calc.memory.hbm_capacity`, :func:`~trnkb.calc.memory.hbm_bandwidth`).

    Returns
    -------
    DataFrame
        :data:`MEMORY_COLUMNS`: capacities in GB, bandwidths in TB/s, die density in Gbit,
        pin rate in Gbit/s, bus width in bit per stack; ``bandwidth_ratio`` is derived over
        reported; ``source`` joins the sources of the row's values. Derived columns are
        empty unless every input is sourced.
    """
    hbm = kb.table("hbm")
    if chips is not None:
        hbm = hbm.set_index("chip").loc[[c for c in chips if c in set(hbm["chip"])]].reset_index()

    def mag(row, field, unit):
        v = kb.get(row, field)
        return float(v.to(unit).magnitude) if v is not None else None

    out = []
    for row, chip in zip(hbm["id"], hbm["chip"], strict=True):
        stacks, height = kb.get(row, "stacks"), kb.get(row, "stack_height")
        density, width, pin = kb.get(row, "die_density"), kb.get(row, "bus_width_per_stack"), kb.get(row, "pin_rate")
        cap = memory.hbm_capacity(stacks, height, density).value if None not in (stacks, height, density) else None
        bw = memory.hbm_bandwidth(stacks, width, pin).value if None not in (stacks, width, pin) else None
        reported_bw = mag(row, "bandwidth", "TB/s")
        out.append({
            "id": row, "chip": chip, "generation": kb.get(row, "generation"),
            "stacks": int(stacks.magnitude) if stacks is not None else None,
            "stack_height": int(height.magnitude) if height is not None else None,
            "die_density_Gbit": mag(row, "die_density", "Gbit"),
            "pin_rate_Gbps": mag(row, "pin_rate", "Gbit/s"),
            "bus_width_bit": mag(row, "bus_width_per_stack", "bit"),
            "capacity_GB": mag(row, "capacity", "GB"),
            "capacity_derived_GB": float(cap.to("GB").magnitude) if cap is not None else None,
            "bandwidth_TBps": reported_bw,
            "bandwidth_derived_TBps": float(bw.to("TB/s").magnitude) if bw is not None else None,
            "bandwidth_ratio": (float(bw.to("TB/s").magnitude) / reported_bw
                                if bw is not None and reported_bw else None),
            "source": " + ".join(sources_of(kb, [row])),
        })
    df = pd.DataFrame(out, columns=MEMORY_COLUMNS)
    for c in MEMORY_COLUMNS[3:5]:
        df[c] = df[c].astype("Int64")
    for c in MEMORY_COLUMNS[5:-1]:
        df[c] = df[c].astype("Float64")
    return df


def lnc_memory(kb: KnowledgeBase, chip: str) -> pd.DataFrame:
    """HBM per logical device for each LNC setting named in the chip's ``logical_core_modes``
    (``LNC=2`` ...), by :func:`trnkb.calc.memory.lnc_memory`.

    Returns ``chip, lnc, logical_devices, memory_GB, source``; empty when the chip has no
    LNC modes, cores or HBM capacity in the KB.
    """
    cols = ["chip", "lnc", "logical_devices", "memory_GB", "source"]
    modes, cores, cap = (kb.get(chip, f) for f in ("logical_core_modes", "cores", "hbm_capacity"))
    if None in (modes, cores, cap):
        return pd.DataFrame(columns=cols)
    src = " + ".join(sources_of(kb, [chip], ["logical_core_modes", "cores", "hbm_capacity"]))
    out = []
    for lnc in sorted({int(x) for x in re.findall(r"LNC\s*=\s*(\d+)", str(modes))}):
        r = memory.lnc_memory(cap, cores, lnc)
        out.append({"chip": chip, "lnc": lnc,
                    "logical_devices": int(r.output("logical_devices").magnitude),
                    "memory_GB": float(r.value.to("GB").magnitude), "source": src})
    return pd.DataFrame(out, columns=cols)


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


def _archetypes(kb: KnowledgeBase) -> pd.DataFrame:
    dc = kb.table("datacenter")
    return dc[dc["category"] == "cooling-archetype"]


def _pue_of(kb: KnowledgeBase, archetype: str):
    # Peak (design-day) PUE: the one the sources give for every archetype, so the
    # archetypes are compared like for like.
    return kb.get(archetype, "pue_peak"), "pue_peak"


def chips_per_mw(kb: KnowledgeBase, chips: Sequence[str] | None = None) -> pd.DataFrame:
    """Accelerators per MW of facility power, per chip with a sourced TDP and per cooling
    archetype with a sourced peak PUE (:func:`trnkb.calc.power.chips_per_mw`).

    Counts chip TDP only (no host, network or cooling fans inside the IT load), so it is
    an upper bound. Returns ``id, archetype, pue, pue_field, tdp_W, chips_per_MW, source``.
    """
    cols = ["id", "archetype", "pue", "pue_field", "tdp_W", "chips_per_MW", "source"]
    out = []
    for chip in chips if chips is not None else accelerators(kb):
        tdp = kb.get(chip, "tdp")
        if tdp is None:
            continue
        for arch in _archetypes(kb)["id"]:
            pue, field = _pue_of(kb, arch)
            if pue is None:
                continue
            r = power.chips_per_mw(tdp, pue)
            out.append({"id": chip, "archetype": arch, "pue": float(pue.magnitude),
                        "pue_field": field, "tdp_W": float(tdp.to("W").magnitude),
                        "chips_per_MW": float(r.value.magnitude),
                        "source": " + ".join(dict.fromkeys(
                            [kb.provenance(chip, "tdp")["source"], kb.provenance(arch, field)["source"]]))})
    return pd.DataFrame(out, columns=cols)


def campus_power(kb: KnowledgeBase) -> pd.DataFrame:
    """IT power of each campus with a sourced facility power, under each cooling
    archetype's peak PUE (:func:`trnkb.calc.power.it_power`).

    Returns ``id, archetype, pue, facility_MW, it_MW, overhead_MW, source``.
    """
    cols = ["id", "archetype", "pue", "facility_MW", "it_MW", "overhead_MW", "source"]
    dc = kb.table("datacenter")
    out = []
    for campus in dc.loc[dc["category"] == "campus", "id"]:
        fp = kb.get(campus, "facility_power")
        if fp is None:
            continue
        for arch in _archetypes(kb)["id"]:
            pue, field = _pue_of(kb, arch)
            if pue is None:
                continue
            r = power.it_power(fp, pue)
            out.append({"id": campus, "archetype": arch, "pue": float(pue.magnitude),
                        "facility_MW": float(fp.to("MW").magnitude),
                        "it_MW": float(r.value.to("MW").magnitude),
                        "overhead_MW": float(r.output("overhead").to("MW").magnitude),
                        "source": " + ".join(dict.fromkeys(
                            [kb.provenance(campus, "facility_power")["source"],
                             kb.provenance(arch, field)["source"]]))})
    return pd.DataFrame(out, columns=cols)


def tco_sweep(assumptions: dict, over: str, values: Iterable) -> pd.DataFrame:
    """Cost per utilized chip-hour (:func:`trnkb.calc.tco.tco`) as one input varies.

    ``assumptions`` holds every argument of the TCO calculator (there are no defaults:
    prices are assumptions, not sourced facts); ``over`` names the one to vary. Returns
    ``over`` (as given), ``USD_per_hour`` and the capital and energy shares per year.
    """
    if over not in assumptions:
        raise KeyError(f"{over!r} is not one of the assumptions {sorted(assumptions)}")
    out = []
    for v in values:
        r = tco.tco(**{**assumptions, over: v})
        out.append({over: v, "USD_per_hour": float(r.value.to("USD/hour").magnitude),
                    "capital_USD_per_year": float(r.output("capital_per_year").magnitude),
                    "energy_USD_per_year": float(r.output("energy_per_year").magnitude)})
    return pd.DataFrame(out)


def claims_view(kb: KnowledgeBase) -> pd.DataFrame:
    """Every claim in ``claims.yaml`` evaluated against the KB (:mod:`trnkb.claims`): id,
    source, verdict, compare, claimed, computed, relative_difference, statement, reason."""
    return claims.claims_table(claims.validate_claims(kb))


def verdict_counts(table: pd.DataFrame, by: str = "source") -> pd.DataFrame:
    """Claims per ``by`` value and verdict, long (``by, verdict, claims``), verdicts in
    the order of :data:`trnkb.claims.VERDICTS`, groups by their number of claims."""
    counts = table.groupby([by, "verdict"]).size().rename("claims").reset_index()
    order = table[by].value_counts().index.tolist()
    counts = counts.assign(o=counts[by].map(order.index),
                           v=counts["verdict"].map(claims.VERDICTS.index))
    return counts.sort_values(["o", "v"]).drop(columns=["o", "v"]).reset_index(drop=True)


def hop_histograms(fabrics: Iterable) -> pd.DataFrame:
    """Chip pairs per hop count for each :class:`trnkb.topology.Fabric`, long:
    ``fabric, hops, pairs, share`` (share of the fabric's chip pairs)."""
    out = []
    for f in fabrics:
        hist = f.hop_histogram()
        total = sum(hist.values())
        out += [{"fabric": f.spec.id, "hops": int(h), "pairs": int(n), "share": n / total}
                for h, n in sorted(hist.items())]
    return pd.DataFrame(out, columns=["fabric", "hops", "pairs", "share"])


def graph_layout(fabric, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Node and edge tables to draw a fabric (:func:`trnkb.charts.graph`).

    A seeded spring layout, rounded so the drawing is byte-stable. Returns ``nodes``
    (``name, kind, x, y``) and ``edges`` (``x, y, x2, y2, medium``).
    """
    g = fabric.graph
    pos = nx.spring_layout(g, seed=seed, iterations=100)
    nodes = pd.DataFrame([{"name": n, "kind": d.get("kind", ""), "x": round(float(pos[n][0]), 3),
                           "y": round(float(pos[n][1]), 3)} for n, d in g.nodes(data=True)])
    edges = pd.DataFrame([{"x": round(float(pos[a][0]), 3), "y": round(float(pos[a][1]), 3),
                           "x2": round(float(pos[b][0]), 3), "y2": round(float(pos[b][1]), 3),
                           "medium": d.get("medium", "")} for a, b, d in g.edges(data=True)])
    return nodes, edges


def _scaleout_switches(kb: KnowledgeBase) -> list[str]:
    net = kb.table("network")
    rows = net[(net["category"] == "scaleout-switch")]
    return [i for i in rows["id"] if kb.get(i, "switch_bandwidth") is not None]


def port_speeds(kb: KnowledgeBase) -> list:
    """The distinct logical port speeds in the ``network`` table, slowest first."""
    f = kb.facts[(kb.facts["table"] == "network") & (kb.facts["field"] == "port_speed")]
    seen = {}
    for q in f["value"]:
        seen.setdefault(round(float(q.to("Gbit/s").magnitude), 6), q)
    return [seen[k] for k in sorted(seen)]


def fabric_sweep(kb: KnowledgeBase, layers: Iterable[int] = (1, 2, 3),
                 switches: Sequence[str] | None = None) -> pd.DataFrame:
    """Folded-Clos size for every scale-out switch class x port speed x layer count
    (:func:`trnkb.calc.network.fabric_size`), the high-radix argument in one table.

    Switches default to every scale-out switch row with a bandwidth; port speeds are those
    in the ``network`` table (:func:`port_speeds`). Returns
    ``switch, switch_Tbps, port_Gbps, layers, label, radix, endpoints, switches, links,
    source``.
    """
    out = []
    for sw in switches if switches is not None else _scaleout_switches(kb):
        bw = kb.value(sw, "switch_bandwidth")
        for ps in port_speeds(kb):
            if network.radix(bw, ps) < 2:
                continue
            for n in layers:
                r = network.fabric_size(bw, ps, n)
                out.append({
                    "switch": sw, "switch_Tbps": float(bw.to("Tbit/s").magnitude),
                    "port_Gbps": float(ps.to("Gbit/s").magnitude), "layers": n,
                    "label": f"{fmt(bw)}, {n} layer{'s' if n > 1 else ''}",
                    "radix": int(r.output("radix").magnitude), "endpoints": int(r.value.magnitude),
                    "switches": int(r.output("switches").magnitude),
                    "links": int(r.output("links").magnitude),
                    "source": kb.provenance(sw, "switch_bandwidth")["source"]})
    return pd.DataFrame(out)


def tor_fabrics(kb: KnowledgeBase, upper_layers: int = 2) -> pd.DataFrame:
    """The ToR-first plane (:func:`trnkb.calc.network.tor_fabric_size`) per scale-out switch
    class at its own port speed: ``switch, switch_Tbps, port_Gbps, radix, tors, pods,
    tors_per_pod, source`` (ToRs per plane; chips per ToR not assumed)."""
    out = []
    for sw in _scaleout_switches(kb):
        bw, ps = kb.value(sw, "switch_bandwidth"), kb.get(sw, "port_speed")
        if ps is None:
            continue
        r = network.tor_fabric_size(bw, ps, 1, upper_layers)
        out.append({"switch": sw, "switch_Tbps": float(bw.to("Tbit/s").magnitude),
                    "port_Gbps": float(ps.to("Gbit/s").magnitude),
                    **{k: int(r.output(k).magnitude) for k in ("radix", "tors", "pods", "tors_per_pod")},
                    "source": " + ".join(sources_of(kb, [sw], ["switch_bandwidth", "port_speed"]))})
    return pd.DataFrame(out)


def gemm_sweep(kb: KnowledgeBase, runs: Iterable[tuple[str, str]], sizes: Iterable[int]) -> pd.DataFrame:
    """Square GEMMs on one NeuronCore of the reference engine (cost only, no numerics).

    ``runs`` are ``(chip, dtype)`` pairs, ``sizes`` the m = k = n values. Returns ``chip,
    dtype, label, size, time_us, achieved_TFLOPS, peak_TFLOPS, utilization, bound_by,
    hbm_MB, intensity_FLOP_per_B`` (FLOPs over HBM bytes moved).
    """
    from trnkb.engine import NeuronCore, gemm  # the engine is optional for other views

    out = []
    for chip, dtype in runs:
        core = NeuronCore.from_kb(kb, chip)
        for n in sizes:
            r = gemm(core, n, n, n, dtype=dtype, execute=False)
            out.append({
                "chip": chip, "dtype": dtype, "label": f"{chip} {dtype}", "size": n,
                "time_us": float(r.seconds.to("us").magnitude),
                "achieved_TFLOPS": float(r.achieved.to("TFLOPS").magnitude),
                "peak_TFLOPS": float(r.peak.to("TFLOPS").magnitude),
                "utilization": r.utilization, "bound_by": r.bound_by,
                "hbm_MB": float(r.bytes["hbm"].to("MB").magnitude),
                "intensity_FLOP_per_B": float((r.flops / r.bytes["hbm"]).to("FLOP/B").magnitude),
            })
    return pd.DataFrame(out)


def engine_busy(results: dict) -> pd.DataFrame:
    """Per-engine busy time of engine results (``{label: trnkb.engine.Result}``), long:
    ``run, engine, busy_us, share`` (share of the run's makespan)."""
    out = []
    for label, r in results.items():
        total = r.seconds.to("us").magnitude
        out += [{"run": label, "engine": e, "busy_us": float(b.to("us").magnitude),
                 "share": float(b.to("us").magnitude / total)} for e, b in r.busy.items()]
    return pd.DataFrame(out)


def timeline_frame(result, label: str = "") -> pd.DataFrame:
    """A result's instruction timeline in microseconds: ``run, engine, op, start_us, end_us``."""
    t = result.timeline
    return pd.DataFrame({"run": label or result.chip, "engine": t["engine"], "op": t["op"],
                         "start_us": (t["start"] * 1e6).round(6), "end_us": (t["end"] * 1e6).round(6)})


def format_errors(x, formats: Iterable[str] = ("mxfp8", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp4", "nvfp4")) -> pd.DataFrame:
    """Quantize the same float32 array to each format (:mod:`trnkb.engine.numerics`) and
    measure the error against it.

    Returns ``format, bits_per_element`` (packed storage, scales included), ``rel_rms``,
    ``max_rel``, ``max_abs``.
    """
    from trnkb.engine import numerics

    out = []
    for f in formats:
        q = numerics.quantize_nvfp4(x) if f == "nvfp4" else numerics.quantize_mx(x, f)
        err = numerics.error_stats(x, q.dequantize())
        out.append({"format": f, "bits_per_element": q.nbytes * 8 / x.size, **err})
    return pd.DataFrame(out)


def code_points(elements: Iterable[str] = ("e2m1", "e2m3", "e3m2", "e4m3", "e5m2")) -> pd.DataFrame:
    """Every positive finite value of each element format: ``format, value, code``."""
    import numpy as np

    from trnkb.engine import numerics

    out = []
    for name in elements:
        fmt = numerics.ELEMENTS[name]
        codes = np.arange(2 ** (fmt.bits - 1), dtype=np.uint8)  # sign bit clear
        values = numerics.decode_element(codes, fmt)
        out += [{"format": name, "value": float(v), "code": int(c)}
                for c, v in zip(codes, values, strict=True) if np.isfinite(v) and v > 0]
    return pd.DataFrame(out)


def w4a8(kb: KnowledgeBase, chip: str, shapes: Iterable[tuple[int, int, int]]) -> pd.DataFrame:
    """MXFP8 GEMMs with MXFP8 weights (W8A8) and MXFP4 weights (W4A8) on one core of the
    reference engine: ``m, k, n, weights, hbm_MB, time_us, bound_by``."""
    from trnkb.engine import NeuronCore, gemm

    core = NeuronCore.from_kb(kb, chip)
    out = []
    for m, k, n in shapes:
        for label, w in (("W8A8", None), ("W4A8", "mxfp4")):
            r = gemm(core, m, k, n, dtype="mxfp8", weight_dtype=w, execute=False)
            out.append({"m": m, "k": k, "n": n, "weights": label,
                        "hbm_MB": float(r.bytes["hbm"].to("MB").magnitude),
                        "time_us": float(r.seconds.to("us").magnitude), "bound_by": r.bound_by})
    return pd.DataFrame(out)
