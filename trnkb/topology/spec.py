"""What defines one scale-up fabric, read once from the knowledge base.

The wiring parameters (planes, switches per plane, lanes per port...) are rows of the
``fabrics`` table; chip, tray and rack counts come from ``racks``; switch lanes and ports,
lane rates and the per-chip lane budget from ``network``. :func:`fabric_spec` joins them
into a :class:`FabricSpec` of plain ints and pint quantities (per direction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

DEFAULT_GENERATION = "gen1"
RACK_NAMES = "ABCDEFGH"
POSITION_NAMES = "ABCDEFGH"

def chip_name(rack: str, node: int, position: str) -> str:
    """Name of a chip in a switched fabric, e.g. ``chip_name("A", 1, "B") == "rackA/node01/B"``."""
    return f"rack{rack}/node{node:02d}/{position}"


@dataclass(frozen=True)
class FabricSpec:
    """The numbers that define one fabric (a ``fabrics`` row joined with its references).

    Counts are plain ints (missing when no source gives them); ``lane_rate`` and
    ``chip_bandwidth`` are pint quantities per direction.
    """

    id: str
    domain: str
    generation: str | None
    wiring: str
    chip: str
    racks: int  # physical racks the domain spans (a half-rack domain counts 1)
    chips: int
    chips_per_tray: int
    trays_per_rack: int
    torus: tuple[int, ...] = ()
    planes: int = 1
    switches_per_plane: int = 0
    tray_switches_per_tray: int = 0
    lanes_per_port: int | None = None
    ports_per_chip_per_switch: int = 1
    tray_switch_lanes_per_chip: int | None = None
    links_per_chip: int | None = None
    switch: str | None = None
    switch_lanes: int | None = None
    switch_ports: int | None = None
    tray_switch: str | None = None
    tray_switch_lanes: int | None = None
    tray_switch_ports: int | None = None
    pcb_lanes: int | None = None
    backplane_lanes: int | None = None
    backplane_active_lanes: int | None = None
    cross_rack_lanes: int | None = None
    active_lanes: int | None = None
    lane_rate: Quantity | None = None
    chip_bandwidth: Quantity | None = None

    @property
    def chips_per_rack(self) -> int:
        return self.chips // self.racks

    @cached_property
    def lane_rate_gbps(self) -> float | None:
        """Lane rate as a plain float in Gbit/s (pint conversions are too slow per edge)."""
        return None if self.lane_rate is None else float(self.lane_rate.to("Gbit/s").magnitude)

    @property
    def backplane_wired_lanes(self) -> int:
        """Backplane lanes wired per chip: switches of its plane x ports x lanes per port."""
        return self.switches_per_plane * self.ports_per_chip_per_switch * (self.lanes_per_port or 0)


def _get(kb: KnowledgeBase, row: str | None, field: str) -> Any:
    """``kb.get(row, field)``, or nothing when there is no row (a quantity or a string)."""
    return kb.get(row, field) if row else None


def _count(kb: KnowledgeBase, row: str | None, field: str) -> int | None:
    v = _get(kb, row, field)
    if v is None:
        return None
    m = v.magnitude
    return int(m) if float(m).is_integer() else m


def fabric_ids(kb: KnowledgeBase, domain: str | None = None) -> list[str]:
    """Ids of the ``fabrics`` rows, optionally of one domain."""
    t = kb.table("fabrics")
    if domain is not None:
        t = t[t["domain"] == domain]
    return list(t["id"])


def find_row(kb: KnowledgeBase, domain: str, generation: str | None) -> str:
    t = kb.table("fabrics")
    mine = t[t["domain"] == domain]
    if mine.empty:
        known = sorted(set(t["domain"]))
        raise KeyError(f"no fabric for domain {domain!r}; domains are {', '.join(known)}")
    labels = mine["generation"] if "generation" in mine else [None] * len(mine)
    gens = {(g if isinstance(g, str) else None): i for g, i in zip(labels, mine["id"], strict=True)}
    if generation is None:
        if len(gens) == 1:
            return str(next(iter(gens.values())))
        generation = DEFAULT_GENERATION
    if generation not in gens:
        avail = ", ".join(sorted(g for g in gens if g)) or "none (omit --switch-gen)"
        raise KeyError(f"{domain} has no switch generation {generation!r}; choose from {avail}")
    return str(gens[generation])


def fabric_spec(kb: KnowledgeBase, domain: str, generation: str | None = None) -> FabricSpec:
    """Read the spec of ``domain`` under switch ``generation`` (default: the only one, or gen1)."""
    fid = find_row(kb, domain, generation)

    def txt(f: str) -> Any:
        return _get(kb, fid, f)

    def n(f: str) -> int | None:
        return _count(kb, fid, f)

    rack = domain
    chip = _get(kb, rack, "chip")
    wiring = txt("wiring")
    torus = tuple(x for x in (n("torus_x"), n("torus_y"), n("torus_z")) if x)
    chips = _count(kb, rack, "domain_size")
    if chips is None or chip is None:
        raise KeyError(f"rack {rack} needs chip and domain_size for its fabric")
    racks = max(1, math.ceil(_count(kb, rack, "racks_per_domain") or 1))
    per_tray = _count(kb, rack, "chips_per_tray") or 1
    trays = _count(kb, rack, "compute_trays_per_rack") or (chips // racks // per_tray)
    budget = txt("lane_budget")
    switch, tray_switch, link = txt("switch"), txt("tray_switch"), txt("link")
    active = _count(kb, budget, "active_lanes")
    lane_rate = _get(kb, link, "lane_rate")
    if active is not None and lane_rate is not None:
        chip_bw = (active * lane_rate).to("GB/s")
    elif _get(kb, chip, "scaleup_bandwidth") is not None:
        chip_bw = _get(kb, chip, "scaleup_bandwidth").to("GB/s")
    elif _get(kb, chip, "scaleup_bandwidth_bidir") is not None:
        chip_bw = (_get(kb, chip, "scaleup_bandwidth_bidir") / 2).to("GB/s")
    else:
        chip_bw = None
    return FabricSpec(
        id=fid, domain=domain, generation=txt("generation"), wiring=wiring, chip=chip,
        racks=racks, chips=chips, chips_per_tray=per_tray, trays_per_rack=trays, torus=torus,
        planes=n("planes") or 1, switches_per_plane=n("switches_per_plane") or 0,
        tray_switches_per_tray=n("tray_switches_per_tray") or 0,
        lanes_per_port=n("lanes_per_port"),
        ports_per_chip_per_switch=n("ports_per_chip_per_switch") or 1,
        tray_switch_lanes_per_chip=n("tray_switch_lanes_per_chip"),
        links_per_chip=n("links_per_chip"),
        switch=switch, switch_lanes=_count(kb, switch, "lanes"),
        switch_ports=_count(kb, switch, "ports"),
        tray_switch=tray_switch, tray_switch_lanes=_count(kb, tray_switch, "lanes"),
        tray_switch_ports=_count(kb, tray_switch, "ports"),
        pcb_lanes=_count(kb, budget, "pcb_lanes"),
        backplane_lanes=_count(kb, budget, "backplane_lanes"),
        backplane_active_lanes=_count(kb, budget, "backplane_active_lanes"),
        cross_rack_lanes=_count(kb, budget, "cross_rack_lanes"),
        active_lanes=active, lane_rate=lane_rate, chip_bandwidth=chip_bw,
    )
