"""Cost and power: USD per chip-hour in two views (owner, cloud), facility power per chip.

Two views of one cost model (``pricing``):

- ``owner`` (alias ``tco``): what owning the chip costs per utilised hour. Where the prices
  table has an analyst's all-in owner cost per chip-hour (``offer: owner-tco`` rows, e.g. the
  InferenceX dashboard tiers) that range is the input ``owner_price`` (divided by
  utilisation); otherwise the TCO formula below, with capex and chip power labelled.
- ``cloud``: what a renter pays: the sourced price per chip-hour (``cloud_price``, every
  rented-offer row of the chip: on-demand, capacity block, spot, commitment, index); refused
  for a chip with no such row.

TCO per utilised chip-hour (the formula of :func:`trnkb.calc.tco.tco`, evaluated on floats):
``(capex x r / (1 - (1 + r)^-years) + chip_power x PUE x power_price x 8766 h + opex)
/ (8766 h x utilisation)``. Every input is explicit: capex per chip and chip power come from
the system (sourced where the KB has them, labelled assumptions otherwise); depreciation
years, cost of capital, power price and utilisation are assumptions below, all user-settable.
A cloud price per chip-hour replaces the whole TCO. :func:`range_shares` says, for any
metric, which inputs are sourced and which are assumptions and what share of the metric's
range each drives (one-at-a-time swings, normalised to sum to 1).

Facility power per chip = all-in chip power x PUE (PUE from the ``datacenter`` table by the
rack's cooling, see :func:`trnkb.workload.fromkb.system`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trnkb.workload.ranges import Input, assumption

if TYPE_CHECKING:
    from trnkb.workload.system import System

PRICING = ("owner", "cloud", "tco")  # tco: the owner view's former name

HOURS_PER_YEAR = 8766.0  # 365.25 days

COST_ASSUMPTIONS: dict[str, Input] = {
    "depreciation_years": assumption("depreciation_years", 4.0, 5.0, 6.0, "year",
                                     "accelerator depreciation life (hyperscalers use 5-6 years)"),
    "cost_of_capital": assumption("cost_of_capital", 0.05, 0.08, 0.12, "",
                                  "annual cost of capital (annuity rate)"),
    "power_price": assumption("power_price", 0.05, 0.08, 0.12, "USD/kWh",
                              "industrial electricity price in the US"),
    "utilisation": assumption("utilisation", 0.6, 0.8, 0.9, "",
                              "fraction of hours doing paid work"),
    "opex_fraction": assumption("opex_fraction", 0.03, 0.05, 0.08, "",
                                "yearly operations and maintenance as a fraction of capex"),
}


def cost_inputs(system: System, pricing: str = "owner") -> dict[str, Input]:
    """The cost inputs of a result in the ``owner`` (alias ``tco``) or ``cloud`` view.

    owner: the TCO assumptions, plus ``owner_price`` (sourced all-in owner cost per chip-hour)
    when the prices table has one for the chip. cloud: plus ``cloud_price`` (refused when the
    prices table has none for the chip, naming where to look).
    """
    if pricing not in PRICING:
        raise ValueError(f"pricing must be one of {', '.join(PRICING)}, not {pricing!r}")
    if pricing in ("tco", "owner"):
        owner = getattr(system, "owner_price", None)
        return {**COST_ASSUMPTIONS, **({"owner_price": owner} if owner is not None else {})}
    if system.cloud_price is None:
        raise ValueError(f"the knowledge base has no cloud price for {system.chip} (prices table; "
                         "`trnkb prices` lists them); use --pricing owner")
    return {**COST_ASSUMPTIONS, "cloud_price": system.cloud_price}


def usd_per_chip_hour(v: dict[str, float]) -> float:
    """USD per utilised chip-hour from floats named as in :data:`COST_ASSUMPTIONS` plus
    ``capex_per_chip`` (USD), ``chip_power`` (W), ``pue``; ``cloud_price`` (USD per chip-hour,
    paid per hour used) if present and positive wins, then ``owner_price`` (USD per owned
    chip-hour) / utilisation."""
    cloud = v.get("cloud_price", 0.0)
    if cloud and cloud > 0:
        return cloud
    owner = v.get("owner_price", 0.0)
    if owner and owner > 0:
        return owner / v["utilisation"]
    r, n = v["cost_of_capital"], v["depreciation_years"]
    factor = r / (1 - (1 + r) ** -n) if r else 1 / n
    capital = v["capex_per_chip"] * factor
    energy = v["chip_power"] / 1000 * v["pue"] * v["power_price"] * HOURS_PER_YEAR
    opex = v["capex_per_chip"] * v["opex_fraction"]
    return (capital + energy + opex) / (HOURS_PER_YEAR * v["utilisation"])


def facility_watts(v: dict[str, float]) -> float:
    """Facility power of one chip, W: all-in chip power x PUE."""
    return v["chip_power"] * v["pue"]


def range_shares(result: Any, metric: str) -> list[dict[str, Any]]:
    """Every input that moves ``metric`` of a :class:`~trnkb.workload.WorkloadResult`: its
    kind (sourced / assumption / user), basis, the metric at the input's low and high end
    (one at a time) and its share of the sum of those swings (0-1), widest first."""
    r = result.metrics[result.ALIASES.get(metric, metric)]
    total = sum(abs(b - a) for _, a, b in r.drivers) or 1.0
    out = []
    for name, a, b in r.drivers:
        i = result.inputs[name]
        out.append({"input": name, "kind": i.kind, "basis": i.basis,
                    "sources": list(i.sources), "at_input_low": a, "at_input_high": b,
                    "share": abs(b - a) / total})
    return out
