"""Scale-up fabric models: one networkx graph per scale-up domain and switch generation.

The wiring parameters (planes, switches per plane, lanes per port...) are rows of the
``fabrics`` table; chip, tray and rack counts come from ``racks``; switch lanes and ports,
lane rates and the per-chip lane budget from ``network``. This module turns them into a
graph and measures it: switch counts, lane use, hop distances, bandwidths.

Hop definition
--------------
A *hop* is one traversal of a forwarding device between two chips: a switch (on a
switch tray or a compute tray) or an intermediate chip that forwards the traffic
(Trainium's auto-forwarding). So ``hops = links on the path - 1``; chips joined by a
direct link (PCB neighbours, the two ends of a cross-rack AEC) are 0 hops apart. This
is the definition that reproduces the worked paths of the SemiAnalysis deep dive
(seed ``004_406711927e432c17.txt``): on NL32x2 Gen1, chip A of node 1 reaches chip B of
node 2 through its PCB neighbour and one switch, which the source counts as 2 hops;
counting switches alone would give 1.

Wiring
------
Where the source gives counts but not the wiring, the model uses the simplest wiring
consistent with them (the ``fabrics`` rows mark such values ``kind: estimate``):

* ``switch-planes``: racks are named A, B...; compute trays (nodes) 1..n; chip positions
  on a tray A, B, C, D. The positions of a tray are split evenly over the planes (Gen1
  NL72x2: A, B, C, D on planes 1-4; Gen2: A, B on plane 1, C, D on plane 2). Each chip is
  wired to every switch of its plane in its own rack with ``ports_per_chip_per_switch``
  ports of ``lanes_per_port`` lanes (backplane). Switches are not wired to each other.
* Compute-tray switches (NL72x2 Scorpio P): every chip of the tray is wired to each with
  ``tray_switch_lanes_per_chip`` PCB lanes. Without them, two chips on a tray share one
  direct PCB link of the lane budget's PCB lanes (NL32x2).
* Cross-rack: each chip has one AEC link of the lane budget's cross-rack lanes to the
  chip at the same node and position of the paired rack (A <-> B).
* Redundant backplane lanes carry no bandwidth: where more backplane lanes are wired than
  are active (NL72x2: 10 switches x 8 = 80 wired, 64 active), every backplane link's
  bandwidth is scaled by active / wired.
* ``torus``: chips at integer coordinates, linked to the +-1 neighbour (wrapping) in each
  dimension; the chip's scale-up bandwidth (``chips`` table, per direction; half the
  bidirectional figure when only that is given) is split evenly over its distinct links.
  AWS splits Trainium2's figure into intra- and inter-instance parts, so this even split
  overstates the NL16 links a little and understates the NL64 x/y links. In
  the 3D torus, z runs across the four half racks; z = 0, 1 are rack A, z = 2, 3 rack B.

Bandwidths are per direction throughout.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np
import pandas as pd
import pint

from trnkb.units import Q_

__all__ = [
    "DEFAULT_GENERATION",
    "Fabric",
    "FabricSpec",
    "SOURCE_PATHS",
    "chip_name",
    "fabric",
    "fabric_spec",
    "fabrics",
    "summary_table",
    "topology_metric",
]

DEFAULT_GENERATION = "gen1"
RACK_NAMES = "ABCDEFGH"
POSITION_NAMES = "ABCDEFGH"

# The worked paths of the source, as (label, from chip, to chip, locator). The hop counts
# the source gives for them are claims (see tests/test_topology.py and the claims
# registry); only the chip pairs live here. Chips are (rack, node, position).
_SEED = "004_406711927e432c17.txt"
SOURCE_PATHS: dict[str, tuple[tuple[str, tuple, tuple, str], ...]] = {
    "trn3-nl32x2-switched": (
        ("Path A", ("A", 1, "A"), ("A", 16, "A"), "Trainium3 NL32x2 Switched with Gen1 Switch Trays"),
        ("Path B", ("A", 1, "A"), ("A", 2, "B"), "Trainium3 NL32x2 Switched with Gen1 Switch Trays"),
        ("Path C", ("A", 1, "A"), ("B", 2, "B"), "Trainium3 NL32x2 Switched with Gen1 Switch Trays"),
    ),
    "trn3-nl72x2-switched": (
        ("Path A", ("A", 1, "A"), ("A", 2, "A"), "Trainium3 NL72x2 Switched on Gen1 Switch Trays"),
        ("Path B", ("A", 1, "A"), ("A", 2, "C"), "Trainium3 NL72x2 Switched on Gen1 Switch Trays"),
        ("Path C", ("A", 1, "A"), ("B", 2, "C"), "Trainium3 NL72x2 Switched on Gen1 Switch Trays"),
    ),
}


def chip_name(rack: str, node: int, position: str) -> str:
    """Name of a chip in a switched fabric, e.g. ``chip_name("A", 1, "B") == "rackA/node01/B"``."""
    return f"rack{rack}/node{node:02d}/{position}"


# ---------------------------------------------------------------------------------------
# Spec: everything the graph needs, read once from the knowledge base
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FabricSpec:
    """The numbers that define one fabric (a ``fabrics`` row joined with its references).

    Counts are plain ints (``None`` when no source gives them); ``lane_rate`` and
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
    lane_rate: pint.Quantity | None = None
    chip_bandwidth: pint.Quantity | None = None

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


_PREFERRED: dict[int, dict[tuple[str, str], object]] = {}


def _get(kb, row: str | None, field: str):
    """``kb.get(row, field)`` from a per-KB dict (``kb.get`` filters the facts table per call)."""
    if id(kb) not in _PREFERRED:
        f = kb.facts[kb.facts["preferred"]]
        _PREFERRED[id(kb)] = dict(zip(zip(f["id"], f["field"], strict=True), f["value"], strict=True))
    return _PREFERRED[id(kb)].get((row, field)) if row else None


def _count(kb, row: str | None, field: str) -> int | None:
    v = _get(kb, row, field)
    if v is None:
        return None
    m = v.magnitude
    return int(m) if float(m).is_integer() else m


def fabric_ids(kb, domain: str | None = None) -> list[str]:
    """Ids of the ``fabrics`` rows, optionally of one domain."""
    t = kb.table("fabrics")
    if domain is not None:
        t = t[t["domain"] == domain]
    return list(t["id"])


def _find_row(kb, domain: str, generation: str | None) -> str:
    t = kb.table("fabrics")
    mine = t[t["domain"] == domain]
    if mine.empty:
        known = sorted(set(t["domain"]))
        raise KeyError(f"no fabric for domain {domain!r}; domains are {', '.join(known)}")
    labels = mine["generation"] if "generation" in mine else [None] * len(mine)
    gens = {(g if isinstance(g, str) else None): i for g, i in zip(labels, mine["id"], strict=True)}
    if generation is None:
        if len(gens) == 1:
            return next(iter(gens.values()))
        generation = DEFAULT_GENERATION
    if generation not in gens:
        avail = ", ".join(sorted(g for g in gens if g)) or "none (omit --switch-gen)"
        raise KeyError(f"{domain} has no switch generation {generation!r}; choose from {avail}")
    return gens[generation]


def fabric_spec(kb, domain: str, generation: str | None = None) -> FabricSpec:
    """Read the spec of ``domain`` under switch ``generation`` (default: the only one, or gen1)."""
    fid = _find_row(kb, domain, generation)
    txt = lambda f: _get(kb, fid, f)  # noqa: E731
    n = lambda f: _count(kb, fid, f)  # noqa: E731
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
        switch=switch, switch_lanes=_count(kb, switch, "lanes"), switch_ports=_count(kb, switch, "ports"),
        tray_switch=tray_switch, tray_switch_lanes=_count(kb, tray_switch, "lanes"),
        tray_switch_ports=_count(kb, tray_switch, "ports"),
        pcb_lanes=_count(kb, budget, "pcb_lanes"), backplane_lanes=_count(kb, budget, "backplane_lanes"),
        backplane_active_lanes=_count(kb, budget, "backplane_active_lanes"),
        cross_rack_lanes=_count(kb, budget, "cross_rack_lanes"),
        active_lanes=active, lane_rate=lane_rate, chip_bandwidth=chip_bw,
    )


# ---------------------------------------------------------------------------------------
# Graph construction
# ---------------------------------------------------------------------------------------


def _lane_gbps(spec: FabricSpec, lanes: int, scale: float = 1.0) -> float | None:
    return None if spec.lane_rate_gbps is None else lanes * spec.lane_rate_gbps * scale


def _add_link(g: nx.Graph, a: str, b: str, medium: str, lanes: int | None, ports: int, gbps):
    g.add_edge(a, b, medium=medium, lanes=lanes, ports=ports, gbit_s=gbps)


def _build_switched(spec: FabricSpec) -> nx.Graph:
    g = nx.Graph(fabric=spec.id)
    per_plane = max(1, spec.chips_per_tray // spec.planes)
    port_lanes = (spec.lanes_per_port or 0) * spec.ports_per_chip_per_switch
    active_scale = 1.0
    if spec.backplane_active_lanes and spec.backplane_wired_lanes > spec.backplane_active_lanes:
        active_scale = spec.backplane_active_lanes / spec.backplane_wired_lanes
    # Without a lane count (NVLink), a chip's bandwidth is split evenly over its switch links.
    links = spec.links_per_chip or spec.switches_per_plane * spec.ports_per_chip_per_switch
    even_gbps = spec.chip_bandwidth.to("Gbit/s").magnitude / links if spec.chip_bandwidth is not None else None

    for r in range(spec.racks):
        rack = RACK_NAMES[r]
        for p in range(spec.planes):
            for s in range(spec.switches_per_plane):
                g.add_node(f"rack{rack}/plane{p + 1}/switch{s + 1:02d}", kind="switch", rack=rack, plane=p + 1)
        for t in range(1, spec.trays_per_rack + 1):
            for k in range(spec.tray_switches_per_tray):
                g.add_node(f"rack{rack}/node{t:02d}/pswitch{k + 1}", kind="tray-switch", rack=rack, node=t)
            for i in range(spec.chips_per_tray):
                pos = POSITION_NAMES[i]
                c = chip_name(rack, t, pos)
                plane = i // per_plane + 1
                g.add_node(c, kind="chip", rack=rack, node=t, pos=pos, plane=plane)
                for s in range(spec.switches_per_plane):
                    sw = f"rack{rack}/plane{plane}/switch{s + 1:02d}"
                    if spec.lanes_per_port is None:
                        _add_link(g, c, sw, "nvlink", None, spec.ports_per_chip_per_switch, even_gbps)
                    else:
                        _add_link(g, c, sw, "backplane", port_lanes, spec.ports_per_chip_per_switch,
                                  _lane_gbps(spec, port_lanes, active_scale))
                for k in range(spec.tray_switches_per_tray):
                    lanes = spec.tray_switch_lanes_per_chip
                    _add_link(g, c, f"rack{rack}/node{t:02d}/pswitch{k + 1}", "pcb", lanes, 1,
                              _lane_gbps(spec, lanes))
            if spec.tray_switches_per_tray == 0 and spec.chips_per_tray == 2 and spec.pcb_lanes:
                a, b = chip_name(rack, t, "A"), chip_name(rack, t, "B")
                _add_link(g, a, b, "pcb", spec.pcb_lanes, 1, _lane_gbps(spec, spec.pcb_lanes))
    if spec.racks == 2 and spec.cross_rack_lanes:
        for t in range(1, spec.trays_per_rack + 1):
            for i in range(spec.chips_per_tray):
                pos = POSITION_NAMES[i]
                _add_link(g, chip_name("A", t, pos), chip_name("B", t, pos), "aec",
                          spec.cross_rack_lanes, 1, _lane_gbps(spec, spec.cross_rack_lanes))
    return g


def _build_torus(spec: FabricSpec) -> nx.Graph:
    g = nx.Graph(fabric=spec.id)
    dims = spec.torus
    names = "xyz"
    z_per_rack = dims[2] // spec.racks if len(dims) == 3 else 1

    def name(c):
        return ".".join(f"{names[i]}{v}" for i, v in enumerate(c))

    for c in itertools.product(*(range(d) for d in dims)):
        rack = RACK_NAMES[c[2] // z_per_rack] if len(dims) == 3 else "A"
        g.add_node(name(c), kind="chip", rack=rack, coord=c)
    links = spec.links_per_chip or sum(min(2, d - 1) for d in dims)
    gbps = spec.chip_bandwidth.to("Gbit/s").magnitude / links if spec.chip_bandwidth is not None else None
    for c in itertools.product(*(range(d) for d in dims)):
        for i, d in enumerate(dims):
            if d < 2:
                continue
            n = list(c)
            n[i] = (c[i] + 1) % d
            medium = "aec" if i == 2 else "torus"
            _add_link(g, name(c), name(tuple(n)), medium, None, 1, gbps)
    return g


def build_graph(spec: FabricSpec) -> nx.Graph:
    """The fabric as an undirected graph.

    Nodes carry ``kind`` (``chip``, ``switch``, ``tray-switch``), ``rack`` and, for chips,
    ``node``/``pos``/``plane`` (switched) or ``coord`` (torus). Edges carry ``medium``
    (``pcb``, ``backplane``, ``aec``, ``torus``, ``nvlink``), ``lanes``, ``ports`` and
    ``gbit_s``: usable bandwidth per direction in Gbit/s (``None`` when unknown).
    """
    if spec.wiring == "torus":
        return _build_torus(spec)
    return _build_switched(spec)


# ---------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------


class Fabric:
    """A built fabric and what can be measured on it. Use :func:`fabric` to get one."""

    def __init__(self, spec: FabricSpec):
        self.spec = spec
        self.graph = build_graph(spec)

    def __repr__(self) -> str:
        return f"<Fabric {self.spec.id}: {len(self.chips)} chips, {len(self.switches)} switches>"

    # -- nodes ------------------------------------------------------------------------
    @cached_property
    def chips(self) -> list[str]:
        return [n for n, d in self.graph.nodes(data=True) if d["kind"] == "chip"]

    @cached_property
    def switches(self) -> list[str]:
        """Every switch chip, switch trays and compute trays alike."""
        return [n for n, d in self.graph.nodes(data=True) if d["kind"] != "chip"]

    def _of_kind(self, kind: str) -> list[str]:
        return [n for n in self.switches if self.graph.nodes[n]["kind"] == kind]

    def rack_of(self, chip: str) -> str:
        return self.graph.nodes[chip]["rack"]

    # -- counts -----------------------------------------------------------------------
    @property
    def switch_tray_switches_per_rack(self) -> int:
        return len(self._of_kind("switch")) // self.spec.racks

    @property
    def tray_switches_per_rack(self) -> int:
        return len(self._of_kind("tray-switch")) // self.spec.racks

    @property
    def switches_per_rack(self) -> int:
        """Switch chips per rack, switch trays and compute trays together."""
        return len(self.switches) // self.spec.racks

    @property
    def switches_per_domain(self) -> int:
        return len(self.switches)

    def switch_usage(self) -> pd.DataFrame:
        """Lanes and ports used versus available, one row per kind of switch (worst switch).

        Available ports are those of the port width in use (``lanes // lanes_per_port``),
        capped by the switch's stated radix.
        """
        rows = []
        for kind, model, lanes_avail, ports_radix, width in (
            ("switch", self.spec.switch, self.spec.switch_lanes, self.spec.switch_ports,
             self.spec.lanes_per_port),
            ("tray-switch", self.spec.tray_switch, self.spec.tray_switch_lanes,
             self.spec.tray_switch_ports, self.spec.tray_switch_lanes_per_chip),
        ):
            nodes = self._of_kind(kind)
            if not nodes:
                continue
            lanes = [sum(d["lanes"] or 0 for *_, d in self.graph.edges(n, data=True)) for n in nodes]
            ports = [sum(d["ports"] for *_, d in self.graph.edges(n, data=True)) for n in nodes]
            avail_ports = ports_radix
            if lanes_avail and width:
                avail_ports = min(lanes_avail // width, ports_radix or lanes_avail)
            rows.append({
                "kind": kind, "switch": model, "count": len(nodes),
                "lanes_used": max(lanes) if any(lanes) else None, "lanes_available": lanes_avail,
                "ports_used": max(ports), "ports_available": avail_ports,
            })
        return pd.DataFrame(rows)

    def chip_lane_usage(self) -> dict[str, tuple[int, int | None]]:
        """Per medium: (most lanes any chip uses, the chip's lane budget for that medium)."""
        budget = {"pcb": self.spec.pcb_lanes, "backplane": self.spec.backplane_lanes,
                  "aec": self.spec.cross_rack_lanes}
        used: dict[str, int] = {}
        for c in self.chips:
            per: Counter = Counter()
            for *_, d in self.graph.edges(c, data=True):
                per[d["medium"]] += d["lanes"] or 0
            for m, v in per.items():
                used[m] = max(used.get(m, 0), v)
        return {m: (v, budget.get(m)) for m, v in used.items()}

    # -- hops -------------------------------------------------------------------------
    @cached_property
    def _hop_matrix(self) -> np.ndarray:
        """Hops between every two chips (rows and columns in :attr:`chips` order).

        Breadth-first search from all chips at once: one boolean matrix product per step.
        """
        nodes = list(self.graph.nodes)
        index = {n: i for i, n in enumerate(nodes)}
        adj = nx.to_numpy_array(self.graph, nodelist=nodes, weight=None, dtype=np.float32)
        rows = [index[c] for c in self.chips]
        dist = np.full((len(rows), len(nodes)), -1, dtype=np.int32)
        frontier = np.zeros_like(dist, dtype=bool)
        frontier[np.arange(len(rows)), rows] = True
        seen = frontier.copy()
        dist[frontier] = 0
        step = 0
        while frontier.any():
            step += 1
            frontier = ((frontier.astype(np.float32) @ adj) > 0) & ~seen
            dist[frontier] = step
            seen |= frontier
        links = dist[:, rows]
        if (links < 0).any():
            raise ValueError(f"{self.spec.id}: the fabric graph is not connected")
        return np.maximum(links - 1, 0)

    @cached_property
    def _rack_index(self) -> np.ndarray:
        return np.array([RACK_NAMES.index(self.rack_of(c)) for c in self.chips])

    @cached_property
    def _chip_index(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.chips)}

    def hops(self, a: str, b: str) -> int:
        """Hops between two chips: forwarding devices (switches or chips) on a shortest path."""
        for c in (a, b):
            if c not in self._chip_index:
                raise KeyError(f"no chip {c!r} in {self.spec.id} (chips look like {self.chips[0]!r})")
        return int(self._hop_matrix[self._chip_index[a], self._chip_index[b]])

    def path(self, a: str, b: str) -> list[str]:
        """One shortest path from chip ``a`` to chip ``b`` (both ends included)."""
        self.hops(a, b)
        return nx.shortest_path(self.graph, a, b)

    def _pair_hops(self, in_rack: bool = False) -> np.ndarray:
        """Hops of every unordered pair of distinct chips (optionally of the same rack only)."""
        i, j = np.triu_indices(len(self.chips), k=1)
        if in_rack:
            keep = self._rack_index[i] == self._rack_index[j]
            i, j = i[keep], j[keep]
        return self._hop_matrix[i, j]

    def max_hops(self, in_rack: bool = False) -> int:
        """Diameter in hops: across the domain, or only between chips of one rack."""
        return int(self._pair_hops(in_rack).max())

    def hop_histogram(self) -> dict[int, int]:
        """Number of unordered chip pairs at each hop distance."""
        values, counts = np.unique(self._pair_hops(), return_counts=True)
        return {int(v): int(n) for v, n in zip(values, counts, strict=True)}

    def mean_hops(self) -> float:
        return float(self._pair_hops().mean())

    def worst_pair(self, in_rack: bool = False) -> tuple[str, str, int]:
        """The first pair (in chip order) at the largest hop distance."""
        m = self._hop_matrix.copy()
        if in_rack:
            m[self._rack_index[:, None] != self._rack_index[None, :]] = -1
        a, b = np.unravel_index(int(np.argmax(m)), m.shape)
        return self.chips[a], self.chips[b], int(m[a, b])

    # -- bandwidth --------------------------------------------------------------------
    def _bw(self, gbps: float | None) -> pint.Quantity | None:
        return None if gbps is None else Q_(gbps, "Gbit/s").to("GB/s")

    def _chip_links(self, chip: str, cross_rack: bool | None = None, medium: str | None = None):
        for _, other, d in self.graph.edges(chip, data=True):
            if medium is not None and d["medium"] != medium:
                continue
            if cross_rack is not None:
                if self.graph.nodes[other]["kind"] != "chip":
                    crosses = False
                else:
                    crosses = self.rack_of(other) != self.rack_of(chip)
                if crosses != cross_rack:
                    continue
            yield d["gbit_s"]

    def _sum(self, values) -> float | None:
        values = list(values)
        if any(v is None for v in values):
            return None
        return sum(values)

    @property
    def injection_bandwidth(self) -> pint.Quantity | None:
        """Bandwidth one chip can send into the fabric (per direction), capped by its active lanes."""
        worst = min((self._sum(self._chip_links(c)) or 0.0) for c in self.chips)
        if self.spec.chip_bandwidth is not None:
            worst = min(worst, self.spec.chip_bandwidth.to("Gbit/s").magnitude)
        return self._bw(worst) if worst else None

    @property
    def cross_rack_bandwidth_per_chip(self) -> pint.Quantity | None:
        """Bandwidth of one chip's links to chips in another rack (per direction)."""
        return self._bw(max(self._sum(self._chip_links(c, cross_rack=True)) or 0.0 for c in self.chips))

    @property
    def in_rack_bandwidth_per_chip(self) -> pint.Quantity | None:
        """Bandwidth of one chip's links inside its rack: PCB, backplane (active lanes), torus."""
        return self._bw(min(self._sum(self._chip_links(c, cross_rack=False)) or 0.0 for c in self.chips))

    @property
    def backplane_bandwidth_per_chip(self) -> pint.Quantity | None:
        """Active backplane bandwidth of one chip (switch-tray links), per direction."""
        return self._bw(min(self._sum(self._chip_links(c, medium="backplane")) or 0.0 for c in self.chips))

    @property
    def cross_rack_bandwidth(self) -> pint.Quantity | None:
        """All cross-rack bandwidth of the domain, one direction (rack A to rack B)."""
        total = self._sum(d["gbit_s"] for a, b, d in self.graph.edges(data=True)
                          if self.graph.nodes[a]["kind"] == "chip" and self.graph.nodes[b]["kind"] == "chip"
                          and self.rack_of(a) != self.rack_of(b))
        return self._bw(total)

    def _cuts(self) -> list[tuple[str, set[str]]]:
        """Balanced chip partitions to try for the bisection: racks, tray halves, position halves, torus halves."""
        nodes = self.graph.nodes
        cuts = []
        if self.spec.racks > 1:
            cuts.append(("racks", {c for c in self.chips if nodes[c]["rack"] < RACK_NAMES[self.spec.racks // 2]}))
        if self.spec.wiring == "torus":
            for i, d in enumerate(self.spec.torus):
                cuts.append((f"{'xyz'[i]} halves", {c for c in self.chips if nodes[c]["coord"][i] < d // 2}))
        else:
            half = self.spec.trays_per_rack // 2
            cuts.append(("tray halves", {c for c in self.chips if nodes[c]["node"] <= half}))
            if self.spec.chips_per_tray > 1:
                k = self.spec.chips_per_tray // 2
                cuts.append(("position halves", {c for c in self.chips if POSITION_NAMES.index(nodes[c]["pos"]) < k}))
        return [(n, s) for n, s in cuts if 2 * len(s) == len(self.chips)]

    def _max_flow(self, side: set[str]) -> float:
        """Max flow (Gbit/s) from the chips in ``side`` to all other chips.

        Every chip is tied to the source or the sink with unbounded capacity, so each
        side can be contracted into its terminal exactly; what remains is the two
        terminals and the switches, which keeps the flow problem small.
        """
        def end(n: str) -> str:
            if self.graph.nodes[n]["kind"] != "chip":
                return n
            return "_source" if n in side else "_sink"

        d = nx.DiGraph()
        for a, b, e in self.graph.edges(data=True):
            u, v = end(a), end(b)
            if u == v:
                continue
            cap = round(e["gbit_s"] * 1000)  # Mbit/s as integers keep the flow exact
            for x, y in ((u, v), (v, u)):
                if d.has_edge(x, y):
                    d[x][y]["capacity"] += cap
                else:
                    d.add_edge(x, y, capacity=cap)
        if "_source" not in d or "_sink" not in d:
            return 0.0
        return nx.maximum_flow_value(d, "_source", "_sink") / 1000

    @cached_property
    def _bisection(self) -> tuple[float | None, str]:
        if any(e["gbit_s"] is None for *_, e in self.graph.edges(data=True)):
            return None, ""
        results = [(self._max_flow(side), name) for name, side in self._cuts()]
        return min(results)

    @property
    def bisection_bandwidth(self) -> pint.Quantity | None:
        """Bisection bandwidth, one direction, in TB/s.

        The smallest max-flow between the two halves over the natural balanced cuts
        (the two racks, tray halves, position halves, torus halves); the flow may pass
        through switches and forwarding chips.
        """
        gbps, _ = self._bisection
        return None if gbps is None else Q_(gbps, "Gbit/s").to("TB/s")

    @property
    def bisection_cut(self) -> str:
        return self._bisection[1]

    def all_to_all_time(self, message_size: pint.Quantity) -> tuple[pint.Quantity | None, str]:
        """Bandwidth-bound time of an all-to-all where every chip sends ``message_size`` to every other.

        The largest of three lower bounds (latency ignored, ideal routing):
        injection ``(N-1) m / B_inj``; bisection ``(N/2)^2 m / B_bis``; link load
        ``sum over pairs of links on the path x m / sum of link capacities`` (both
        directions, every ordered pair). Returns (time in us, name of the binding bound).
        """
        n = len(self.chips)
        inj, bis = self.injection_bandwidth, self.bisection_bandwidth
        if inj is None or bis is None:
            return None, ""
        m = message_size
        links_total = 2 * float((self._pair_hops() + 1).sum())  # ordered pairs
        cap = 2 * sum(e["gbit_s"] for *_, e in self.graph.edges(data=True))
        bounds = {
            "injection": (n - 1) * m / inj,
            "bisection": (n // 2) * (n - n // 2) * m / bis,
            "link load": links_total * m / Q_(cap, "Gbit/s"),
        }
        name = max(bounds, key=lambda k: bounds[k].to("s").magnitude)
        return bounds[name].to("us"), name

    # -- examples and summary ---------------------------------------------------------
    def path_examples(self) -> list[dict]:
        """The source's worked paths for this domain, then the worst pair in a rack and in the domain."""
        out = []
        for label, a, b, locator in SOURCE_PATHS.get(self.spec.domain, ()):
            ca, cb = chip_name(*a), chip_name(*b)
            out.append({**self._example(label, ca, cb), "source": f"{_SEED}: {locator}"})
        a, b, _ = self.worst_pair(in_rack=True)
        out.append(self._example("worst case in a rack", a, b))
        if self.spec.racks > 1:
            a, b, _ = self.worst_pair()
            out.append(self._example("worst case in the domain", a, b))
        return out

    def _example(self, label: str, a: str, b: str) -> dict:
        return {"label": label, "from": a, "to": b, "path": self.path(a, b), "hops": self.hops(a, b),
                "source": "computed"}

    def summary(self, message_size: pint.Quantity | None = None) -> dict:
        """Everything measured, JSON-ready (quantities as ``{"value", "unit"}``)."""
        m = message_size if message_size is not None else Q_(1, "MB")
        t, bound = self.all_to_all_time(m)
        usage = self.switch_usage()
        return {
            "fabric": self.spec.id,
            "domain": self.spec.domain,
            "switch_generation": self.spec.generation,
            "wiring": self.spec.wiring,
            "chips": len(self.chips),
            "racks": self.spec.racks,
            "planes": self.spec.planes if self.spec.wiring != "torus" else None,
            "switches_per_rack": self.switches_per_rack,
            "switch_tray_switches_per_rack": self.switch_tray_switches_per_rack,
            "tray_switches_per_rack": self.tray_switches_per_rack,
            "switches_per_domain": self.switches_per_domain,
            "switch_usage": usage.astype(object).where(usage.notna(), None).to_dict("records"),
            "chip_lanes": {m_: {"used": u, "budget": b} for m_, (u, b) in self.chip_lane_usage().items()},
            "hop_definition": "forwarding devices (switches or chips) between the two chips = links - 1",
            "max_hops_in_rack": self.max_hops(in_rack=True),
            "max_hops_in_domain": self.max_hops(),
            "mean_hops": round(self.mean_hops(), 4),
            "hop_histogram": {str(k): v for k, v in self.hop_histogram().items()},
            "injection_bandwidth": _q(self.injection_bandwidth, "GB/s"),
            "in_rack_bandwidth_per_chip": _q(self.in_rack_bandwidth_per_chip, "GB/s"),
            "backplane_bandwidth_per_chip": _q(self.backplane_bandwidth_per_chip, "GB/s"),
            "cross_rack_bandwidth_per_chip": _q(self.cross_rack_bandwidth_per_chip, "GB/s"),
            "bisection_bandwidth": _q(self.bisection_bandwidth, "TB/s"),
            "bisection_cut": self.bisection_cut,
            "all_to_all": {"message_size": _q(m, "MB"), "time": _q(t, "us"), "bound": bound},
            "path_examples": self.path_examples(),
        }


def _q(q: pint.Quantity | None, unit: str) -> dict | None:
    if q is None:
        return None
    return {"value": round(float(q.to(unit).magnitude), 6), "unit": unit}


# ---------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------

_CACHE: dict[tuple[int, str], Fabric] = {}


_DEFAULT: list = []


def _kb(kb):
    """The given knowledge base, or the shipped one (loaded once)."""
    if kb is not None:
        return kb
    if not _DEFAULT:
        from trnkb.kb import load

        _DEFAULT.append(load())
    return _DEFAULT[0]


def fabric(domain: str, generation: str | None = None, kb=None) -> Fabric:
    """The fabric of a scale-up ``domain`` (a racks id) under a switch ``generation``.

    ``generation`` is one of gen1, pex90144-x8, pex90144-x4, gen2, gen3 for the Trainium3
    switched racks (default gen1) and omitted for fabrics with one wiring. Built fabrics
    are cached per knowledge base.
    """
    kb = _kb(kb)
    fid = _find_row(kb, domain, generation)
    key = (id(kb), fid)
    if key not in _CACHE:
        _CACHE[key] = Fabric(fabric_spec(kb, domain, generation))
    return _CACHE[key]


def fabrics(kb=None) -> list[Fabric]:
    """Every fabric of the knowledge base, in ``fabrics`` table order."""
    kb = _kb(kb)
    t = kb.table("fabrics")
    gens = t["generation"] if "generation" in t else [None] * len(t)
    return [fabric(d, g if isinstance(g, str) else None, kb) for d, g in zip(t["domain"], gens, strict=True)]


def topology_metric(domain: str, generation: str | None, name: str, kb=None):
    """One measured figure, for the claims registry: a ``Fabric`` attribute or method name.

    Examples: ``topology_metric("trn3-nl72x2-switched", "gen1", "switches_per_domain") == 368``;
    names ending in ``_in_rack`` call ``max_hops(in_rack=True)``; ``hops:A/1/A:A/2/C``
    gives the hops between two chips written rack/node/position.
    """
    f = fabric(domain, generation, kb)
    if name.startswith("hops:"):
        a, b = (chip_name(r, int(n), p) for r, n, p in (x.split("/") for x in name[5:].split(":")))
        return f.hops(a, b)
    if name == "max_hops_in_rack":
        return f.max_hops(in_rack=True)
    if name == "max_hops_in_domain":
        return f.max_hops()
    if name == "cross_to_backplane_ratio":
        return (f.cross_rack_bandwidth_per_chip / f.backplane_bandwidth_per_chip).to("").magnitude
    if name == "cross_to_in_rack_ratio":
        return (f.cross_rack_bandwidth_per_chip / f.in_rack_bandwidth_per_chip).to("").magnitude
    if not hasattr(f, name):
        raise KeyError(f"no topology metric {name!r}")
    v = getattr(f, name)
    return v() if callable(v) else v


def summary_table(kb=None, message_size: pint.Quantity | None = None) -> pd.DataFrame:
    """One row per fabric, plain magnitudes with the unit in the column name (chart-ready)."""
    rows = []
    m = message_size if message_size is not None else Q_(1, "MB")
    for f in fabrics(kb):
        t, bound = f.all_to_all_time(m)
        mag = lambda q, u: None if q is None else float(q.to(u).magnitude)  # noqa: E731
        rows.append({
            "fabric": f.spec.id, "domain": f.spec.domain, "generation": f.spec.generation or "",
            "chips": len(f.chips), "racks": f.spec.racks,
            "planes": f.spec.planes if f.spec.wiring != "torus" else None,
            "switch_tray_switches_per_rack": f.switch_tray_switches_per_rack,
            "tray_switches_per_rack": f.tray_switches_per_rack,
            "switches_per_domain": f.switches_per_domain,
            "max_hops_in_rack": f.max_hops(in_rack=True), "max_hops_in_domain": f.max_hops(),
            "mean_hops": f.mean_hops(),
            "injection_GBps": mag(f.injection_bandwidth, "GB/s"),
            "cross_rack_GBps_per_chip": mag(f.cross_rack_bandwidth_per_chip, "GB/s"),
            "in_rack_GBps_per_chip": mag(f.in_rack_bandwidth_per_chip, "GB/s"),
            "bisection_TBps": mag(f.bisection_bandwidth, "TB/s"),
            "all_to_all_us": mag(t, "us"), "all_to_all_bound": bound,
        })
    df = pd.DataFrame(rows)
    df.attrs["message_size_MB"] = float(m.to("MB").magnitude)
    return df
