"""Graph construction: a :class:`~trnkb.topology.spec.FabricSpec` as a networkx graph.

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

from trnkb.topology.spec import POSITION_NAMES, RACK_NAMES, FabricSpec, chip_name


def _lane_gbps(spec: FabricSpec, lanes: int | None, scale: float = 1.0) -> float | None:
    if spec.lane_rate_gbps is None or lanes is None:
        return None
    return lanes * spec.lane_rate_gbps * scale


def _add_link(g: nx.Graph[str], a: str, b: str, medium: str, lanes: int | None,
              ports: int, gbps: float | None) -> None:
    g.add_edge(a, b, medium=medium, lanes=lanes, ports=ports, gbit_s=gbps)


def _build_switched(spec: FabricSpec) -> nx.Graph[str]:
    import networkx as nx  # on first use: `trnkb workload` never builds a graph

    g: nx.Graph[str] = nx.Graph(fabric=spec.id)
    per_plane = max(1, spec.chips_per_tray // spec.planes)
    port_lanes = (spec.lanes_per_port or 0) * spec.ports_per_chip_per_switch
    active_scale = 1.0
    if spec.backplane_active_lanes and spec.backplane_wired_lanes > spec.backplane_active_lanes:
        active_scale = spec.backplane_active_lanes / spec.backplane_wired_lanes
    # Without a lane count (NVLink), a chip's bandwidth is split evenly over its switch links.
    links = spec.links_per_chip or spec.switches_per_plane * spec.ports_per_chip_per_switch
    even_gbps = (spec.chip_bandwidth.to("Gbit/s").magnitude / links
                 if spec.chip_bandwidth is not None else None)

    for r in range(spec.racks):
        rack = RACK_NAMES[r]
        for p in range(spec.planes):
            for s in range(spec.switches_per_plane):
                g.add_node(f"rack{rack}/plane{p + 1}/switch{s + 1:02d}", kind="switch",
                           rack=rack, plane=p + 1)
        for t in range(1, spec.trays_per_rack + 1):
            for k in range(spec.tray_switches_per_tray):
                g.add_node(f"rack{rack}/node{t:02d}/pswitch{k + 1}", kind="tray-switch",
                           rack=rack, node=t)
            for i in range(spec.chips_per_tray):
                pos = POSITION_NAMES[i]
                c = chip_name(rack, t, pos)
                plane = i // per_plane + 1
                g.add_node(c, kind="chip", rack=rack, node=t, pos=pos, plane=plane)
                for s in range(spec.switches_per_plane):
                    sw = f"rack{rack}/plane{plane}/switch{s + 1:02d}"
                    if spec.lanes_per_port is None:
                        _add_link(g, c, sw, "nvlink", None, spec.ports_per_chip_per_switch,
                                  even_gbps)
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


def _build_torus(spec: FabricSpec) -> nx.Graph[str]:
    import networkx as nx  # on first use: `trnkb workload` never builds a graph

    g: nx.Graph[str] = nx.Graph(fabric=spec.id)
    dims = spec.torus
    names = "xyz"
    z_per_rack = dims[2] // spec.racks if len(dims) == 3 else 1

    def name(c: tuple[int, ...]) -> str:
        return ".".join(f"{names[i]}{v}" for i, v in enumerate(c))

    for c in itertools.product(*(range(d) for d in dims)):
        rack = RACK_NAMES[c[2] // z_per_rack] if len(dims) == 3 else "A"
        g.add_node(name(c), kind="chip", rack=rack, coord=c)
    links = spec.links_per_chip or sum(min(2, d - 1) for d in dims)
    gbps = (spec.chip_bandwidth.to("Gbit/s").magnitude / links
            if spec.chip_bandwidth is not None else None)
    for c in itertools.product(*(range(d) for d in dims)):
        for i, d in enumerate(dims):
            if d < 2:
                continue
            n = list(c)
            n[i] = (c[i] + 1) % d
            medium = "aec" if i == 2 else "torus"
            _add_link(g, name(c), name(tuple(n)), medium, None, 1, gbps)
    return g


def build_graph(spec: FabricSpec) -> nx.Graph[str]:
    """The fabric as an undirected graph.

    Nodes carry ``kind`` (``chip``, ``switch``, ``tray-switch``), ``rack`` and, for chips,
    ``node``/``pos``/``plane`` (switched) or ``coord`` (torus). Edges carry ``medium``
    (``pcb``, ``backplane``, ``aec``, ``torus``, ``nvlink``), ``lanes``, ``ports`` and
    ``gbit_s``: usable bandwidth per direction in Gbit/s (missing when unknown).
    """
    if spec.wiring == "torus":
        return _build_torus(spec)
    return _build_switched(spec)
