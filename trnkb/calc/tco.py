"""Total cost of ownership per chip-hour, from inputs the user sets explicitly.

There are no default prices: capex, lifetime, cost of capital, power price, PUE and
utilization are all required, because no source in the knowledge base gives them.
Money is in ``USD`` (a unit of its own dimension, defined in :mod:`trnkb.units`).
"""

from __future__ import annotations

from trnkb.calc._common import fraction, positive_count, quantity, result
from trnkb.calc.derivation import Result, count
from trnkb.calc.power import _pue
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity, QuantityLike, Sources


def _money(x: QuantityLike, name: str) -> Quantity:
    return quantity(x, "[currency]", name)


def tco(
    capex: QuantityLike,
    lifetime: QuantityLike,
    cost_of_capital: QuantityLike,
    chip_power: QuantityLike,
    power_price: QuantityLike,
    pue: QuantityLike,
    utilization: QuantityLike,
    opex_per_year: QuantityLike = "0 USD",
    flops: QuantityLike | None = None,
    *,
    sources: Sources = None,
) -> Result:
    """Cost per utilized chip-hour (USD/h).

    ``capital_per_year = capex x r / (1 - (1 + r)^-years)`` (annuity at cost of capital r;
    ``capex / years`` when r = 0); ``energy_per_year = chip_power x pue x 1 year x
    power_price``; ``value = (capital_per_year + energy_per_year + opex_per_year) /
    (1 year x utilization)``. With ``flops`` (a per-chip FLOP/s actually sustained) the
    output ``flop_per_usd`` is performance per TCO dollar.
    """
    c = _money(capex, "capex")
    years = quantity(lifetime, "time", "lifetime").to("year")
    r = count(cost_of_capital).magnitude
    if r < 0:
        raise ValueError("cost_of_capital must not be negative")
    w = quantity(chip_power, "power", "chip_power")
    price = quantity(power_price, "[currency] / [power] / [time]", "power_price")
    p = _pue(pue)
    u = fraction(utilization, "utilization")
    opex = quantity(opex_per_year, "[currency]", "opex_per_year")
    positive_count(years.magnitude, "lifetime", integer=False)
    n = years.magnitude
    factor = r / (1 - (1 + r) ** -n) if r else 1 / n
    capital = c * factor / Q_(1, "year")
    energy = (w * p * price).to("USD/year")
    per_year = capital + energy + opex / Q_(1, "year")
    value = (per_year / u).to("USD/hour")
    ins = {
        "capex": c,
        "lifetime": years,
        "cost_of_capital": Q_(r, ""),
        "chip_power": w,
        "power_price": price,
        "pue": p,
        "utilization": u,
        "opex_per_year": opex,
    }
    outputs = {
        "capital_per_year": capital.to("USD/year"),
        "energy_per_year": energy,
        "cost_per_year": per_year.to("USD/year"),
    }
    if flops is not None:
        f = quantity(flops, "compute_rate", "flops")
        ins["flops"] = f
        outputs["flop_per_usd"] = (f / value).to("FLOP/USD")
    return result(
        "tco",
        "(capex x annuity(r, years) + chip_power x pue x power_price x 1 year + opex) "
        "/ (1 year x utilization)",
        value,
        ins,
        sources,
        outputs,
    )
