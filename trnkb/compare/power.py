"""Datacenter power: IT power under a PUE, accelerators per MW, cost per chip-hour."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd

from trnkb.calc import power, tco
from trnkb.compare.chips import accelerators
from trnkb.compare.tables import fmt
from trnkb.kb import KnowledgeBase
from trnkb.units import Q_
from trnkb.views.display import header

PUE_FIELD = "pue_peak"  # design-day PUE: the sources give it for every archetype


def _under_each_pue(kb: KnowledgeBase, ids: Iterable[str],
                    field: str) -> Iterator[tuple[str, Any, str, Any, str]]:
    """``(id, value, archetype, pue, source)`` for every row of ``ids`` with ``field``
    and every cooling archetype with a peak PUE; ``source`` joins both sources."""
    dc = kb.table("datacenter")
    archetypes = dc.loc[dc["category"] == "cooling-archetype", "id"]
    for row in ids:
        value = kb.get(row, field)
        if value is None:
            continue
        for arch in archetypes:
            pue = kb.get(arch, PUE_FIELD)
            if pue is not None:
                source = " + ".join(dict.fromkeys([kb.provenance(row, field)["source"],
                                                   kb.provenance(arch, PUE_FIELD)["source"]]))
                yield row, value, arch, pue, source


def chips_per_mw(kb: KnowledgeBase, chips: Sequence[str] | None = None) -> pd.DataFrame:
    """Accelerators per MW of facility power, per chip with a sourced TDP and per cooling
    archetype with a sourced peak PUE (:func:`trnkb.calc.power.chips_per_mw`).

    Counts chip TDP only (no host, network or cooling fans inside the IT load), so it is
    an upper bound. Returns ``id, archetype, pue, tdp_W, chips_per_MW, source``.
    """
    chips = chips if chips is not None else accelerators(kb)
    out = [{"id": chip, "archetype": arch, "pue": float(pue.magnitude),
            "tdp_W": float(tdp.to("W").magnitude),
            "chips_per_MW": float(power.chips_per_mw(tdp, pue).value.magnitude), "source": src}
           for chip, tdp, arch, pue, src in _under_each_pue(kb, chips, "tdp")]
    return pd.DataFrame(out, columns=["id", "archetype", "pue", "tdp_W", "chips_per_MW", "source"])


def campus_power(kb: KnowledgeBase) -> pd.DataFrame:
    """IT power of each campus with a sourced facility power, under each cooling
    archetype's peak PUE (:func:`trnkb.calc.power.it_power`).

    Returns ``id, archetype, pue, facility_MW, it_MW, overhead_MW, source``.
    """
    dc = kb.table("datacenter")
    campuses = dc.loc[dc["category"] == "campus", "id"]
    out = []
    for campus, fp, arch, pue, src in _under_each_pue(kb, campuses, "facility_power"):
        r = power.it_power(fp, pue)
        out.append({"id": campus, "archetype": arch, "pue": float(pue.magnitude),
                    "facility_MW": float(fp.to("MW").magnitude),
                    "it_MW": float(r.value.to("MW").magnitude),
                    "overhead_MW": float(r.output("overhead").to("MW").magnitude), "source": src})
    return pd.DataFrame(out, columns=["id", "archetype", "pue", "facility_MW", "it_MW",
                                      "overhead_MW", "source"])


def tco_sweep(assumptions: dict[str, Any], over: str, values: Iterable[Any]) -> pd.DataFrame:
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


def assumptions_table(assumptions: dict[str, Any],
                      sources: dict[str, str] | None = None) -> pd.DataFrame:
    """The inputs of a cost model as a table a reader can check: ``input``, ``value``
    (with its unit: ``30,000 USD``, ``1.4 kW``, ``10%`` for a bare fraction), ``basis``
    (``knowledge base`` for the inputs named in ``sources``, else ``assumption``) and
    ``source`` (their source ids; missing for an assumption)."""
    sources = sources or {}
    rows = []
    for name, v in assumptions.items():
        q = Q_(v) if isinstance(v, str) else v
        if isinstance(q, (int, float)) and not isinstance(q, bool) and 0 < q < 1:
            text = f"{fmt(Q_(100 * q, ''))}%"
        else:
            text = fmt(q)
        rows.append({"input": header(name).removesuffix(" (%)"), "value": text,
                     "basis": "knowledge base" if name in sources else "assumption",
                     "source": sources.get(name)})
    return pd.DataFrame(rows)
