"""Scale-up: per-chip bandwidth from lanes, the NeuronLink lane budget, switch counts.

Lane rates are per direction (PCIe 6.0: 64 Gbit/s per lane each way); a bidirectional
figure is twice the per-direction one and is always labelled as such.
"""

from __future__ import annotations

import math

from trnkb.calc._common import positive_count, quantity, result
from trnkb.calc.derivation import Result, count
from trnkb.units import Q_
from trnkb.units.qtypes import QuantityLike, Sources


def scaleup_bandwidth(
    lanes: QuantityLike, lane_rate: QuantityLike, *, sources: Sources = None
) -> Result:
    """Scale-up bandwidth per chip, per direction: ``lanes x lane_rate`` (GB/s).

    The output ``bidirectional`` is twice that.
    """
    n = positive_count(lanes, "lanes")
    r = quantity(lane_rate, "bandwidth", "lane_rate")
    per_dir = (n * r).to("GB/s")
    return result(
        "scaleup-bandwidth",
        "lanes x lane_rate (per direction)",
        per_dir,
        {"lanes": n, "lane_rate": r},
        sources,
        {"bidirectional": 2 * per_dir},
    )


def lane_budget(
    pcb: QuantityLike,
    backplane_active: QuantityLike,
    backplane_redundant: QuantityLike,
    cross_rack: QuantityLike,
    lane_rate: QuantityLike,
    *,
    sources: Sources = None,
) -> Result:
    """Per-chip scale-up lanes and bandwidth by medium (PCB, backplane, cross-rack).

    Redundant backplane lanes carry no extra bandwidth (they replace failed lanes).
    ``value = (pcb + backplane_active + cross_rack) x lane_rate`` per direction, GB/s.
    Outputs: lane totals, bandwidth per medium, the bidirectional total and
    ``cross_rack_to_backplane`` (cross-rack lanes / active backplane lanes).
    """
    p = count(pcb)
    b = count(backplane_active)
    red = count(backplane_redundant)
    x = count(cross_rack)
    for name, q in (
        ("pcb", p),
        ("backplane_active", b),
        ("backplane_redundant", red),
        ("cross_rack", x),
    ):
        if q.magnitude < 0:
            raise ValueError(f"{name} must not be negative")
    r = quantity(lane_rate, "bandwidth", "lane_rate")
    active = p + b + x
    if active.magnitude <= 0:
        raise ValueError("no active lanes")
    value = (active * r).to("GB/s")
    outputs = {
        "active_lanes": active,
        "total_lanes": active + red,
        "pcb_bandwidth": (p * r).to("GB/s"),
        "backplane_bandwidth": (b * r).to("GB/s"),
        "cross_rack_bandwidth": (x * r).to("GB/s"),
        "bidirectional": 2 * value,
    }
    if b.magnitude:
        outputs["cross_rack_to_backplane"] = (x / b).to("")
    return result(
        "lane-budget",
        "(pcb + backplane_active + cross_rack) x lane_rate (per direction)",
        value,
        {
            "pcb": p,
            "backplane_active": b,
            "backplane_redundant": red,
            "cross_rack": x,
            "lane_rate": r,
        },
        sources,
        outputs,
    )


def switches_per_rack(
    chips: QuantityLike,
    lanes_per_chip: QuantityLike,
    lanes_per_port: QuantityLike,
    switch_ports: QuantityLike,
    switch_lanes: QuantityLike | None = None,
    tray_switches: QuantityLike = 0,
    racks: QuantityLike = 1,
    *,
    sources: Sources = None,
) -> Result:
    """Scale-up switch chips per rack from the lanes each chip sends to the switch trays.

    ``ports_needed = chips x lanes_per_chip / lanes_per_port``;
    ``usable_ports = min(switch_ports, switch_lanes / lanes_per_port)``;
    ``switch_tray_switches = ceil(ports_needed / usable_ports)``;
    ``value = switch_tray_switches + tray_switches`` (e.g. small PCIe switches on the
    compute trays). The output ``per_domain`` multiplies by ``racks``.
    """
    c = positive_count(chips, "chips")
    lanes = positive_count(lanes_per_chip, "lanes_per_chip")
    lpp = positive_count(lanes_per_port, "lanes_per_port")
    ports = positive_count(switch_ports, "switch_ports")
    usable = ports
    ins = {"chips": c, "lanes_per_chip": lanes, "lanes_per_port": lpp, "switch_ports": ports}
    if switch_lanes is not None:
        sl = positive_count(switch_lanes, "switch_lanes")
        ins["switch_lanes"] = sl
        usable = Q_(min(ports.magnitude, math.floor(sl.magnitude / lpp.magnitude)), "")
    if usable.magnitude < 1:
        raise ValueError("a switch cannot serve one port of that width")
    extra = count(tray_switches)
    rk = positive_count(racks, "racks", integer=False)
    ins |= {"tray_switches": extra, "racks": rk}
    needed = count(c * lanes / lpp)
    tray = Q_(math.ceil(needed.magnitude / usable.magnitude - 1e-9), "")
    value = tray + extra
    return result(
        "switches-per-rack",
        "ceil(chips x lanes_per_chip / lanes_per_port / usable_ports) + tray_switches",
        value,
        ins,
        sources,
        {
            "ports_needed": needed,
            "usable_ports_per_switch": usable,
            "switch_tray_switches": tray,
            "per_domain": value * rk,
        },
    )
