"""Cost and power: USD per chip-hour from an explicit TCO, facility power per chip, per-MW rates.

TCO per utilised chip-hour (the formula of :func:`trnkb.calc.tco.tco`, evaluated on floats):
``(capex x r / (1 - (1 + r)^-years) + chip_power x PUE x power_price x 8766 h + opex)
/ (8766 h x utilisation)``. Every input is explicit: capex per chip and chip power come from
the system (sourced where the KB has them, labelled assumptions otherwise); depreciation
years, cost of capital, power price and utilisation are assumptions below, all user-settable.
A user-set cloud price per chip-hour replaces the whole TCO.

Facility power per chip = all-in chip power x PUE (PUE from the ``datacenter`` table by the
rack's cooling, see :func:`trnkb.workload.fromkb.system`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trnkb.workload.ranges import Input, assumption

if TYPE_CHECKING:
    from trnkb.workload.system import System

__all__ = ["COST_ASSUMPTIONS", "HOURS_PER_YEAR", "PRICING", "cost_inputs", "facility_watts",
           "usd_per_chip_hour"]

PRICING = ("tco", "cloud")

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


def cost_inputs(system: System, pricing: str = "tco") -> dict[str, Input]:
    """The cost inputs of a result: the TCO assumptions, plus the system's sourced cloud
    price per chip-hour when ``pricing`` is ``cloud`` (refused when the KB has none)."""
    if pricing not in PRICING:
        raise ValueError(f"pricing must be one of {', '.join(PRICING)}, not {pricing!r}")
    if pricing == "tco":
        return dict(COST_ASSUMPTIONS)
    if system.cloud_price is None:
        raise ValueError(f"the knowledge base has no cloud price for {system.chip} (prices table); "
                         "use pricing tco")
    return {**COST_ASSUMPTIONS, "cloud_price": system.cloud_price}


def usd_per_chip_hour(v: dict[str, float]) -> float:
    """USD per utilised chip-hour from floats named as in :data:`COST_ASSUMPTIONS` plus
    ``capex_per_chip`` (USD), ``chip_power`` (W), ``pue``; ``cloud_price`` (USD per chip-hour)
    if present and positive wins."""
    cloud = v.get("cloud_price", 0.0)
    if cloud and cloud > 0:
        return cloud
    r, n = v["cost_of_capital"], v["depreciation_years"]
    factor = r / (1 - (1 + r) ** -n) if r else 1 / n
    capital = v["capex_per_chip"] * factor
    energy = v["chip_power"] / 1000 * v["pue"] * v["power_price"] * HOURS_PER_YEAR
    opex = v["capex_per_chip"] * v["opex_fraction"]
    return (capital + energy + opex) / (HOURS_PER_YEAR * v["utilisation"])


def facility_watts(v: dict[str, float]) -> float:
    """Facility power of one chip, W: all-in chip power x PUE."""
    return v["chip_power"] * v["pue"]
