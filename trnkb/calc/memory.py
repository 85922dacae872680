"""Memory: HBM capacity and bandwidth from the stack build, ridge point, LNC memory.

Prefixes are as written: a ``24 Gbit`` die gives decimal gigabytes, a ``24 Gibit`` die
binary ones; the calculators never convert between the two conventions silently.
"""

from __future__ import annotations

import pint

from trnkb.calc._common import positive_count, quantity, result
from trnkb.calc.derivation import Result, count
from trnkb.units import Q_, parse
from trnkb.units.qtypes import Quantity, QuantityLike, Sources


def hbm_capacity(
    stacks: QuantityLike,
    stack_height: QuantityLike,
    die_density: QuantityLike,
    *,
    sources: Sources = None,
) -> Result:
    """HBM capacity per chip ``stacks x stack_height x die_density``, in GB.

    Parameters
    ----------
    stacks, stack_height : counts
        Stacks per chip and DRAM dies per stack (8-high, 12-high...).
    die_density : Quantity [information]
        Capacity of one DRAM die (``24 Gbit``).
    """
    s = positive_count(stacks, "stacks")
    h = positive_count(stack_height, "stack_height")
    d = quantity(die_density, "information", "die_density")
    value = (s * h * d).to("GB")
    return result(
        "hbm-capacity",
        "stacks x stack_height x die_density",
        value,
        {"stacks": s, "stack_height": h, "die_density": d},
        sources,
        {"per_stack": (h * d).to("GB")},
    )


def _pins(bus_width: QuantityLike) -> Quantity:
    """Bus width as a pin count: ``1024 bit`` (one bit per pin per transfer) or ``1024``."""
    q = bus_width if isinstance(bus_width, pint.Quantity) else parse(str(bus_width))
    if q.dimensionless:
        return positive_count(q, "bus_width")
    return positive_count(quantity(q, "information", "bus_width").to("bit").magnitude, "bus_width")


def hbm_bandwidth(
    stacks: QuantityLike,
    bus_width: QuantityLike,
    pin_rate: QuantityLike,
    *,
    sources: Sources = None,
) -> Result:
    """HBM bandwidth per chip ``stacks x bus_width x pin_rate``, in TB/s.

    Parameters
    ----------
    stacks : count
    bus_width : Quantity [information] or count
        Interface width of one stack (``1024 bit`` for HBM3/3E, ``2048 bit`` for HBM4);
        each bit is one data pin.
    pin_rate : Quantity [information]/[time]
        Data rate per pin (``9.6 Gbit/s``).
    """
    s = positive_count(stacks, "stacks")
    w = _pins(bus_width)
    r = quantity(pin_rate, "bandwidth", "pin_rate")
    value = (s * w * r).to("TB/s")
    return result(
        "hbm-bandwidth",
        "stacks x bus_width (pins) x pin_rate",
        value,
        {"stacks": s, "bus_width": w * Q_(1, "bit"), "pin_rate": r},
        sources,
        {"per_stack": (w * r).to("GB/s")},
    )


def ridge_point(flops: QuantityLike, bandwidth: QuantityLike, *, sources: Sources = None) -> Result:
    """Roofline ridge point ``flops / bandwidth`` in FLOP per byte: the arithmetic
    intensity above which a kernel is compute bound."""
    f = quantity(flops, "compute_rate", "flops")
    b = quantity(bandwidth, "bandwidth", "bandwidth")
    return result(
        "ridge-point",
        "flops / bandwidth",
        (f / b).to("FLOP/B"),
        {"flops": f, "bandwidth": b},
        sources,
    )


def lnc_memory(
    capacity: QuantityLike, cores: QuantityLike, lnc: QuantityLike, *, sources: Sources = None
) -> Result:
    """HBM seen by one logical device when ``lnc`` physical cores form one logical core.

    ``logical_devices = cores / lnc``; ``memory = capacity / logical_devices``.
    """
    c = quantity(capacity, "information", "capacity")
    n = positive_count(cores, "cores")
    k = positive_count(lnc, "lnc")
    if n.magnitude % k.magnitude:
        raise ValueError(f"lnc={k.magnitude:g} does not divide {n.magnitude:g} cores")
    devices = count(n / k)
    value = (c / devices).to(c.units)
    return result(
        "lnc-memory",
        "capacity / (cores / lnc)",
        value,
        {"capacity": c, "cores": n, "lnc": k},
        sources,
        {"logical_devices": devices},
    )
