"""Derived versus reported: every figure the KB both states and can compute.

For each pair the table holds the reported value (with its source), the derived value
(with the calculator or declaration and the inputs' sources) and the relative difference
``|derived - reported| / reported``. Pairs that differ by more than :data:`THRESHOLD` are
flagged; nothing is dropped. A pair is formed only when both figures count the same thing:
same density (dense / sparse) and same direction (per direction / bidirectional); a
bidirectional total is never set against a per-direction figure.

Pairs checked:

* every declared derived value (:mod:`trnkb.kb.derive`) against every reported or estimated
  value of the same field of the same row (:func:`coverage` counts them: every derived
  value is examined, and says how many have a reported counterpart);

* HBM capacity = stacks x stack height x die density (``hbm`` rows; and the chip's
  ``hbm_capacity``);
* HBM bandwidth = stacks x bus width x pin rate (same);
* peak FLOP/s = cores x PE rows x PE cols x MACs per PE x 2 x tensor clock (``cores``
  rows; per chip and per core, for BF16, FP8 and MX formats);
* domain totals = domain size x per-chip figure (``racks`` rows);
* scale-up bandwidth = lanes x lane rate (chips with ``scaleup_lanes``; lane budgets).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pandas as pd

from trnkb.calc.derivation import Result
from trnkb.calc.fromkb import call, first
from trnkb.spec.attributes import comparable

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

Row = dict[str, Any]  # one pair, keyed by COLUMNS

THRESHOLD = 0.02
_SOURCE_IN_DERIVATION = re.compile(r"\[([a-z0-9-]+)\]")  # "per_chip = 671 TFLOPS [aws-...]"
COLUMNS = ["check", "id", "field", "reported", "reported_source", "derived", "calculator",
           "derived_sources", "unit", "relative_difference", "flagged", "note"]
GIB_PER_GB = 2**30 / 1e9

#: chip FLOP/s field -> the ``cores`` field giving MACs per PE per cycle (None: 1)
FLOP_FIELDS = {"dense_bf16": None, "dense_fp8": "fp8_pack", "dense_mxfp8": "mx_pack",
               "dense_mxfp4": "mx_pack"}
PER_CORE_FIELDS = {"dense_bf16_per_core": None, "dense_fp8_per_core": "fp8_pack",
                   "dense_mxfp8_per_core": "mx_pack"}
#: rack domain field -> chip fields, first present wins
DOMAIN_FIELDS = {
    "domain_bf16": ("dense_bf16",),
    "domain_fp8": ("dense_fp8", "dense_mxfp8"),
    "domain_fp4": ("dense_fp4", "dense_mxfp4"),
    "domain_hbm_capacity": ("hbm_capacity",),
    "domain_hbm_bandwidth": ("hbm_bandwidth",),
    "domain_scaleup_bandwidth": ("scaleup_bandwidth", "scaleup_bandwidth_bidir"),
}


def _row(kb: KnowledgeBase, check: str, row_id: str, field: str, res: Result, unit: str,
         direction: str = "", density: str = "") -> Row | None:
    """One pair, or None when the reported value does not count the same thing as the
    derived one (``direction``/``density``: what the derived value is; '' = either)."""
    reported = kb.value(row_id, field)
    prov = kb.provenance(row_id, field)
    if prov.get("kind") == "derived":
        return None  # a declared value: compared with its field's reported values below
    if (direction and prov.get("direction") not in ("", direction)) or (
            density and prov.get("density") not in ("", density)):
        return None
    return _pair(check, row_id, field, reported, prov["source"], res.value,
                 res.derivation.calculator, ", ".join(res.derivation.sources()), unit)


def _pair(check: str, row_id: str, field: str, reported: Any, reported_source: str,
          derived: Any, calculator: str, sources: str, unit: str) -> Row:
    rep = reported.to(unit).magnitude if unit else reported.to("").magnitude
    der = derived.to(unit).magnitude if unit else derived.to("").magnitude
    rel = abs(der - rep) / abs(rep) if rep else float("inf")
    note = ""
    # Only byte quantities can be a GB/GiB mix-up, and only when the 7.4% factor explains
    # the gap to well under the threshold (a 6% FLOP/s gap is not a prefix question).
    is_bytes = "[information]" in str(reported.dimensionality)
    if rel > THRESHOLD and is_bytes and reported.dimensionality == derived.dimensionality and any(
            abs(der * k - rep) <= 0.005 * abs(rep) for k in (GIB_PER_GB, 1 / GIB_PER_GB)):
        # e.g. 16 x 96 GB against a domain written as 1,536 GiB: same memory, two prefixes
        note = "unit ambiguity: matches if one side's GB are read as GiB"
    return {
        "check": check, "id": row_id, "field": field, "reported": rep,
        "reported_source": reported_source, "derived": der, "calculator": calculator,
        "derived_sources": sources, "unit": unit,
        "relative_difference": rel, "flagged": rel > THRESHOLD, "note": note,
    }


def _has(kb: KnowledgeBase, row_id: str, *fields: str) -> bool:
    return all(kb.get(row_id, f) is not None for f in fields)


def _ids(kb: KnowledgeBase, table: str) -> list[str]:
    return list(kb.table(table)["id"]) if table in kb.tables else []


def _hbm(kb: KnowledgeBase) -> Iterator[Row | None]:
    for hid in _ids(kb, "hbm"):
        chip = kb.get(hid, "chip")
        targets = [(hid, "capacity"), (chip, "hbm_capacity")]
        if _has(kb, hid, "stacks", "stack_height", "die_density"):
            res = call(kb, "hbm-capacity", stacks=f"kb:{hid}.stacks",
                       stack_height=f"kb:{hid}.stack_height", die_density=f"kb:{hid}.die_density")
            for rid, f in targets:
                if rid and _has(kb, rid, f):
                    yield _row(kb, "hbm-capacity", rid, f, res, "GB")
        if _has(kb, hid, "stacks", "bus_width_per_stack", "pin_rate"):
            res = call(kb, "hbm-bandwidth", stacks=f"kb:{hid}.stacks",
                       bus_width=f"kb:{hid}.bus_width_per_stack", pin_rate=f"kb:{hid}.pin_rate")
            for rid, f in ((hid, "bandwidth"), (chip, "hbm_bandwidth")):
                if rid and _has(kb, rid, f):
                    yield _row(kb, "hbm-bandwidth", rid, f, res, "TB/s")


def _peak(kb: KnowledgeBase) -> Iterator[Row | None]:
    for cid in _ids(kb, "cores"):
        chip = kb.get(cid, "chip")
        if not _has(kb, cid, "pe_rows", "pe_cols", "tensor_clock"):
            continue
        for target, fields, cores in ((chip, FLOP_FIELDS, f"kb:{chip}.cores"),
                                      (cid, PER_CORE_FIELDS, 1)):
            if target is None or (target == chip and not _has(kb, chip, "cores")):
                continue
            for field, pack in fields.items():
                if not _has(kb, target, field) or (pack and not _has(kb, cid, pack)):
                    continue
                res = call(kb, "peak-flops", cores=cores, rows=f"kb:{cid}.pe_rows",
                           cols=f"kb:{cid}.pe_cols", clock=f"kb:{cid}.tensor_clock",
                           macs_per_pe=f"kb:{cid}.{pack}" if pack else 1)
                yield _row(kb, "peak-flops", target, field, res, "TFLOPS", density="dense")


def domain_size_ref(kb: KnowledgeBase, rack_id: str) -> str | None:
    """``kb:`` reference to a rack's domain size, or None when the KB lacks it."""
    if _has(kb, rack_id, "domain_size"):
        return f"kb:{rack_id}.domain_size"
    return None


def _domains(kb: KnowledgeBase) -> Iterator[Row | None]:
    for rid in _ids(kb, "racks"):
        chip = kb.get(rid, "chip")
        size = domain_size_ref(kb, rid)
        if chip is None or size is None:
            continue
        for field, chip_fields in DOMAIN_FIELDS.items():
            if not _has(kb, rid, field):
                continue
            for cf in chip_fields if field == "domain_scaleup_bandwidth" else (
                    first(kb, chip, chip_fields),):
                if cf is None or not _has(kb, chip, cf):
                    continue
                res = call(kb, "domain-total", chips=size, per_chip=f"kb:{chip}.{cf}")
                unit = {"domain_hbm_capacity": "TB"}.get(field, "TB/s" if "bandwidth" in field
                                                        else "PFLOPS")
                direction = kb.attributes(chip, cf)["direction"]
                row = _row(kb, "domain-total", rid, field, res, unit, direction=direction,
                           density=kb.attributes(chip, cf)["density"])
                if row is not None:
                    row["check"] = f"domain-total ({cf})"
                    yield row


def _lane_rate(kb: KnowledgeBase, budget_id: str) -> str | None:
    if _has(kb, budget_id, "lane_rate"):
        return f"kb:{budget_id}.lane_rate"
    tech = kb.get(budget_id, "technology")
    for nid in _ids(kb, "network"):
        if nid != budget_id and tech and kb.get(nid, "technology") == tech and _has(
                kb, nid, "lane_rate"):
            return f"kb:{nid}.lane_rate"
    return None


def _scaleup(kb: KnowledgeBase) -> Iterator[Row | None]:
    for nid in _ids(kb, "network"):
        if kb.get(nid, "chip") is None or not _has(kb, nid, "active_lanes"):
            continue
        chip = kb.get(nid, "chip")
        rate = _lane_rate(kb, nid)
        if rate is None:
            continue
        lanes = f"kb:{chip}.scaleup_lanes" if _has(kb, chip, "scaleup_lanes") else \
            f"kb:{nid}.active_lanes"
        res = call(kb, "scaleup-bandwidth", lanes=lanes, lane_rate=rate)
        if _has(kb, chip, "scaleup_bandwidth"):
            yield _row(kb, "scaleup-bandwidth", chip, "scaleup_bandwidth", res, "GB/s",
                       direction="per-direction")
        if _has(kb, chip, "scaleup_bandwidth_bidir"):
            bidir = Result(res.derivation.outputs["bidirectional"], res.derivation)
            yield _row(kb, "scaleup-bandwidth (bidir)", chip, "scaleup_bandwidth_bidir",
                       bidir, "GB/s", direction="bidirectional")


def _lane_counts(kb: KnowledgeBase) -> Iterator[Row | None]:
    """Lane budgets: the media add up to the stated active and total lanes."""
    media = ("pcb_lanes", "backplane_active_lanes", "cross_rack_lanes")
    for nid in _ids(kb, "network"):
        if not _has(kb, nid, *media, "backplane_redundant_lanes"):
            continue
        rate = _lane_rate(kb, nid) or "1 Gbit/s"  # lane counts do not depend on the rate
        res = call(kb, "lane-budget", pcb=f"kb:{nid}.pcb_lanes",
                   backplane_active=f"kb:{nid}.backplane_active_lanes",
                   backplane_redundant=f"kb:{nid}.backplane_redundant_lanes",
                   cross_rack=f"kb:{nid}.cross_rack_lanes", lane_rate=rate)
        for field, out in (("active_lanes", "active_lanes"), ("total_lanes", "total_lanes")):
            if _has(kb, nid, field):
                yield _row(kb, "lane-budget", nid, field,
                           Result(res.derivation.outputs[out], res.derivation), "")


def _declared_pairs(kb: KnowledgeBase) -> Iterator[tuple[Row, Row | None, str]]:
    """(derived fact, other fact or None, why skipped) for every declared derived value."""
    facts = kb.facts.to_dict("records")
    groups: dict[tuple[str, str], list[dict[Any, Any]]] = {}
    for f in facts:
        groups.setdefault((f["id"], f["field"]), []).append(f)
    for group in groups.values():
        for d in (f for f in group if f["kind"] == "derived"):
            others = [f for f in group if f["kind"] != "derived"]
            if not others:
                yield d, None, "no reported value of this field"
            for o in others:
                yield d, o, "" if comparable(d, o) else (
                    f"not comparable: {d['density'] or d['direction']} vs "
                    f"{o['density'] or o['direction']}")


def _declared(kb: KnowledgeBase) -> Iterator[Row]:
    for d, o, why in _declared_pairs(kb):
        if o is None or why:
            continue
        unit = DISPLAY_UNITS.get(str(d["value"].dimensionality), "")
        calc = d["locator"].removeprefix("derived (").removesuffix(")")
        sources = ", ".join(dict.fromkeys(_SOURCE_IN_DERIVATION.findall(d["derivation"])))
        yield _pair(f"declared ({calc})", d["id"], d["field"], o["value"], o["source"],
                    d["value"], calc, sources, unit or _unit_of(o["value"]))


def _unit_of(q: Any) -> str:
    from trnkb.units import format_unit

    return "" if q.dimensionless else format_unit(q.units)


#: unit a pair is shown in, by dimensionality
DISPLAY_UNITS = {"[compute] / [time]": "TFLOPS", "[information]": "GB",
                 "[information] / [time]": "GB/s", "dimensionless": "", "1 / [time]": "GHz",
                 "[power]": "W"}


def coverage(kb: KnowledgeBase) -> dict[str, Any]:
    """How completely ``check`` covers the declared derived values.

    ``derived``: declared derived values in the KB; ``checked``: those examined (all);
    ``with_reported``: those with a reported or estimated value of the same field that
    counts the same thing (compared); ``without_reported``: those no source also states;
    ``not_comparable``: pairs skipped because density or direction differ;
    ``share``: checked / derived.
    """
    derived = int((kb.facts["kind"] == "derived").sum())
    seen: set[tuple[str, str, int]] = set()
    compared: set[tuple[str, str, int]] = set()
    alone: set[tuple[str, str, int]] = set()
    skipped = 0
    for d, o, why in _declared_pairs(kb):
        key = (d["id"], d["field"], d["line"])
        seen.add(key)
        if o is None:
            alone.add(key)
        elif why:
            skipped += 1
        else:
            compared.add(key)
    return {"derived": derived, "checked": len(seen), "with_reported": len(compared),
            "without_reported": len(alone), "not_comparable": skipped,
            "share": len(seen) / derived if derived else 1.0}


CHECKS: tuple[Callable[[KnowledgeBase], Iterator[Row | None]], ...] = (
    _declared, _hbm, _peak, _domains, _scaleup, _lane_counts)


def check(kb: KnowledgeBase) -> pd.DataFrame:
    """Every derived-vs-reported pair, worst first (columns: :data:`COLUMNS`)."""
    rows: list[Row] = []
    seen: set[tuple[Any, ...] | None] = set()
    for fn in CHECKS:
        for r in fn(kb):
            key = None if r is None else (r["id"], r["field"], r["reported_source"],
                                          round(r["derived"], 6))
            if r is not None and key not in seen:  # a calculator check repeating a
                seen.add(key)                        # declaration adds nothing
                rows.append(r)
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.sort_values(["flagged", "relative_difference"], ascending=False,
                          kind="stable").reset_index(drop=True)


