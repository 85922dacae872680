"""Columns the explorer computes from other columns, with their inputs and formula.

Each derived cell carries what it was computed from, so the page can mark it and show
the formula and the sources of its inputs:

- ``hbm_physical``: stacks x dies per stack x die density (GiB; :mod:`trnkb.site.memory`),
  with the vendor's label beside it;
- ``flops_per_watt``: dense BF16 over TDP (GFLOP/s per W);
- ``bytes_per_flop``: HBM bandwidth over dense BF16 (bytes per FLOP);
- ``ridge_point``: dense BF16 over HBM bandwidth (FLOP per byte, the roofline's ridge);
- ``usd_per_pflop_hour``: the lowest public price per chip-hour in the ``prices`` table over
  dense BF16 in PFLOP/s (only where a price is sourced).
"""

from __future__ import annotations

from typing import Any

from trnkb.kb import KnowledgeBase
from trnkb.site.memory import physical_hbm

DERIVED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("hbm_physical", "HBM physical", "GiB"),
    ("flops_per_watt", "BF16 per watt", "GFLOP/s/W"),
    ("bytes_per_flop", "HBM bytes per BF16 FLOP", "B/FLOP"),
    ("ridge_point", "ridge point (BF16)", "FLOP/B"),
    ("usd_per_pflop_hour", "cloud price per BF16 PFLOP-hour", "USD"),
)


def _input(kb: KnowledgeBase, row: str, field: str,
           unit: str) -> tuple[float, dict[str, str]] | None:
    v = kb.get(row, field)
    if v is None or not hasattr(v, "magnitude"):
        return None
    p = kb.provenance(row, field)
    mag = float(v.to(unit).magnitude)
    return mag, {"field": field, "value": f"{mag:.6g} {unit}", "source": str(p["source"]),
                 "kind": str(p["kind"]), "qualifier": str(p.get("qualifier") or "")}


def _cell(value: float, unit: str, formula: str, inputs: list[dict[str, str]],
          label: str = "") -> dict[str, Any]:
    kinds = {i["kind"] for i in inputs}
    quals = [f"{i['field']}: {i['qualifier']}" for i in inputs if i["qualifier"]]
    out: dict[str, Any] = {
        "v": float(f"{value:.6g}"), "t": None, "u": unit,
        "s": " + ".join(dict.fromkeys(i["source"] for i in inputs)),
        "k": "estimate" if "estimate" in kinds else "derived", "l": formula, "f": formula,
        "in": inputs}
    if quals:
        out["q"] = "; ".join(quals)
    if label:
        out["lab"] = label
    return out


def _prices(kb: KnowledgeBase) -> dict[str, tuple[float, dict[str, str]]]:
    """Chip -> lowest sourced USD per chip-hour, with its input record."""
    if "prices" not in kb.tables:
        return {}
    best: dict[str, tuple[float, dict[str, str]]] = {}
    for r in kb.ids("prices"):
        chip, price, n = kb.get(r, "chip"), kb.get(r, "price"), kb.get(r, "chips_per_instance")
        if chip is None or price is None or n is None:
            continue
        per = float(price.to("USD/hour").magnitude) / float(n.magnitude)
        p = kb.provenance(r, "price")
        rec = {"field": f"price ({r})", "value": f"{per:.6g} USD per chip-hour",
               "source": str(p["source"]), "kind": str(p["kind"]), "qualifier": ""}
        if str(chip) not in best or per < best[str(chip)][0]:
            best[str(chip)] = (per, rec)
    return best


def derived_cells(kb: KnowledgeBase) -> dict[str, dict[str, dict[str, Any] | None]]:
    """Chip id -> derived field -> cell (the explorer's cell format, see
    :func:`trnkb.site.explorer.explorer_data`) or None when an input is missing."""
    phys = physical_hbm(kb)
    prices = _prices(kb)
    out: dict[str, dict[str, dict[str, Any] | None]] = {}
    for chip in kb.ids("chips"):
        cells: dict[str, dict[str, Any] | None] = {f: None for f, _, _ in DERIVED_COLUMNS}
        ph = phys.get(chip)
        if ph is not None and ph.gib is not None:
            ins = [{"field": "stacks x stack_height x die_density", "value": ph.build,
                    "source": s, "kind": "reported", "qualifier": ""} for s in ph.build_sources]
            cells["hbm_physical"] = _cell(ph.gib, "GiB", "stacks x dies per stack x die density",
                                          ins, label=ph.label)
        bf16 = _input(kb, chip, "dense_bf16", "TFLOPS")
        tdp = _input(kb, chip, "tdp", "W")
        bw = _input(kb, chip, "hbm_bandwidth", "TB/s")
        if bf16 and tdp:
            cells["flops_per_watt"] = _cell(bf16[0] * 1e3 / tdp[0], "GFLOP/s/W",
                                            "dense BF16 / TDP", [bf16[1], tdp[1]])
        if bf16 and bw:
            cells["bytes_per_flop"] = _cell(bw[0] / bf16[0], "B/FLOP",
                                            "HBM bandwidth / dense BF16", [bw[1], bf16[1]])
            cells["ridge_point"] = _cell(bf16[0] / bw[0], "FLOP/B",
                                         "dense BF16 / HBM bandwidth", [bf16[1], bw[1]])
        if bf16 and chip in prices:
            usd, rec = prices[chip]
            cells["usd_per_pflop_hour"] = _cell(usd / (bf16[0] / 1e3), "USD",
                                                "USD per chip-hour / dense BF16 PFLOP/s",
                                                [rec, bf16[1]])
        out[chip] = cells
    return out
