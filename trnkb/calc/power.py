"""Power: IT power from facility power and PUE, facility power for a fleet, density, energy.

PUE (power usage effectiveness) is facility power / IT power, so IT = facility / PUE.
"""

from __future__ import annotations

from trnkb.calc._common import fraction, positive_count, quantity, result
from trnkb.calc.derivation import Result, count
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity, QuantityLike, Sources


def _pue(x: QuantityLike) -> Quantity:
    q = count(x)
    if q.magnitude < 1:
        raise ValueError(f"PUE is facility / IT power and cannot be below 1 (got {q.magnitude:g})")
    return q


def it_power(facility_power: QuantityLike, pue: QuantityLike, *, sources: Sources = None) -> Result:
    """IT power ``facility_power / pue`` (MW)."""
    f = quantity(facility_power, "power", "facility_power")
    p = _pue(pue)
    return result(
        "it-power",
        "facility_power / pue",
        (f / p).to("MW"),
        {"facility_power": f, "pue": p},
        sources,
        {"overhead": (f - f / p).to("MW")},
    )


def facility_power(
    chips: QuantityLike,
    chip_power: QuantityLike,
    pue: QuantityLike,
    rack_overhead: QuantityLike | None = None,
    chips_per_rack: QuantityLike | None = None,
    *,
    sources: Sources = None,
) -> Result:
    """Facility power for ``chips`` accelerators (MW).

    ``it = chips x chip_power + racks x rack_overhead`` with
    ``racks = chips / chips_per_rack`` when a per-rack overhead (CPUs, switches, NICs,
    fans) is given; ``facility = it x pue``.
    """
    n = positive_count(chips, "chips", integer=False)
    w = quantity(chip_power, "power", "chip_power")
    p = _pue(pue)
    ins = {"chips": n, "chip_power": w, "pue": p}
    it = n * w
    formula = "chips x chip_power x pue"
    if rack_overhead is not None:
        if chips_per_rack is None:
            raise ValueError("rack_overhead needs chips_per_rack")
        o = quantity(rack_overhead, "power", "rack_overhead")
        r = positive_count(chips_per_rack, "chips_per_rack")
        it = it + n / r * o
        ins |= {"rack_overhead": o, "chips_per_rack": r}
        formula = "(chips x chip_power + chips / chips_per_rack x rack_overhead) x pue"
    return result(
        "facility-power", formula, (it * p).to("MW"), ins, sources, {"it_power": it.to("MW")}
    )


def chips_per_mw(
    chip_power: QuantityLike, pue: QuantityLike = 1, *, sources: Sources = None
) -> Result:
    """Accelerators per MW ``1 MW / (chip_power x pue)``; with ``pue = 1`` per MW of IT
    power, otherwise per MW of facility power."""
    w = quantity(chip_power, "power", "chip_power")
    p = _pue(pue)
    value = (Q_(1, "MW") / (w * p)).to("")
    return result(
        "chips-per-mw", "1 MW / (chip_power x pue)", value, {"chip_power": w, "pue": p}, sources
    )


def rack_power_density(
    chips_per_rack: QuantityLike,
    chip_power: QuantityLike,
    rack_overhead: QuantityLike = "0 W",
    *,
    sources: Sources = None,
) -> Result:
    """Power per rack ``chips_per_rack x chip_power + rack_overhead`` (kW)."""
    r = positive_count(chips_per_rack, "chips_per_rack")
    w = quantity(chip_power, "power", "chip_power")
    o = quantity(rack_overhead, "power", "rack_overhead")
    return result(
        "rack-power-density",
        "chips_per_rack x chip_power + rack_overhead",
        (r * w + o).to("kW"),
        {"chips_per_rack": r, "chip_power": w, "rack_overhead": o},
        sources,
    )


def training_energy(
    work: QuantityLike,
    rate: QuantityLike,
    mfu: QuantityLike,
    power: QuantityLike,
    pue: QuantityLike = 1,
    *,
    sources: Sources = None,
) -> Result:
    """Energy of a training run (MWh): time at ``rate x mfu`` times ``power x pue``.

    ``rate`` and ``power`` describe the same set of chips (one chip, or the cluster).
    """
    w = quantity(work, "compute", "work")
    r = quantity(rate, "compute_rate", "rate")
    u = fraction(mfu, "mfu")
    pw = quantity(power, "power", "power")
    p = _pue(pue)
    time = w / (r * u)
    return result(
        "training-energy",
        "work / (rate x mfu) x power x pue",
        (time * pw * p).to("MWh"),
        {"work": w, "rate": r, "mfu": u, "power": pw, "pue": p},
        sources,
        {"time": time.to("day")},
    )
