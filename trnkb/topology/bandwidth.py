"""Bandwidths of a fabric: per chip, cross-rack, bisection (max-flow), the all-to-all bound.

Bandwidths are per direction throughout, in pint quantities.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, cast

from trnkb.topology.parts import FabricParts
from trnkb.topology.spec import POSITION_NAMES, RACK_NAMES
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    import networkx as nx



class BandwidthMixin(FabricParts):
    """Bandwidth measurements of a :class:`~trnkb.topology.fabric.Fabric`."""

    def _bw(self, gbps: float | None) -> Quantity | None:
        return None if gbps is None else Q_(gbps, "Gbit/s").to("GB/s")

    def _chip_links(self, chip: str, cross_rack: bool | None = None,
                    medium: str | None = None) -> Iterator[float | None]:
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

    def _sum(self, values: Iterable[float | None]) -> float | None:
        values = list(values)
        if any(v is None for v in values):
            return None
        return sum(cast("list[float]", values))

    @property
    def injection_bandwidth(self) -> Quantity | None:
        """Bandwidth one chip can send into the fabric (per direction), capped by its active
        lanes."""
        worst = min((self._sum(self._chip_links(c)) or 0.0) for c in self.chips)
        if self.spec.chip_bandwidth is not None:
            worst = min(worst, self.spec.chip_bandwidth.to("Gbit/s").magnitude)
        return self._bw(worst) if worst else None

    @property
    def cross_rack_bandwidth_per_chip(self) -> Quantity | None:
        """Bandwidth of one chip's links to chips in another rack (per direction)."""
        return self._bw(max(self._sum(self._chip_links(c, cross_rack=True)) or 0.0
                            for c in self.chips))

    @property
    def in_rack_bandwidth_per_chip(self) -> Quantity | None:
        """Bandwidth of one chip's links inside its rack: PCB, backplane (active lanes), torus."""
        return self._bw(min(self._sum(self._chip_links(c, cross_rack=False)) or 0.0
                            for c in self.chips))

    @property
    def backplane_bandwidth_per_chip(self) -> Quantity | None:
        """Active backplane bandwidth of one chip (switch-tray links), per direction."""
        return self._bw(min(self._sum(self._chip_links(c, medium="backplane")) or 0.0
                            for c in self.chips))

    @property
    def cross_rack_bandwidth(self) -> Quantity | None:
        """All cross-rack bandwidth of the domain, one direction (rack A to rack B)."""
        nodes = self.graph.nodes
        total = self._sum(d["gbit_s"] for a, b, d in self.graph.edges(data=True)
                          if nodes[a]["kind"] == "chip" and nodes[b]["kind"] == "chip"
                          and self.rack_of(a) != self.rack_of(b))
        return self._bw(total)

    def _cuts(self) -> list[tuple[str, set[str]]]:
        """Balanced chip partitions to try for the bisection: racks, tray halves, position
        halves, torus halves."""
        nodes = self.graph.nodes
        cuts: list[tuple[str, set[str]]] = []
        if self.spec.racks > 1:
            first_b = RACK_NAMES[self.spec.racks // 2]
            cuts.append(("racks", {c for c in self.chips if nodes[c]["rack"] < first_b}))
        if self.spec.wiring == "torus":
            for i, d in enumerate(self.spec.torus):
                cuts.append((f"{'xyz'[i]} halves",
                             {c for c in self.chips if nodes[c]["coord"][i] < d // 2}))
        else:
            half = self.spec.trays_per_rack // 2
            cuts.append(("tray halves", {c for c in self.chips if nodes[c]["node"] <= half}))
            if self.spec.chips_per_tray > 1:
                k = self.spec.chips_per_tray // 2
                cuts.append(("position halves",
                             {c for c in self.chips if POSITION_NAMES.index(nodes[c]["pos"]) < k}))
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

        return contracted_max_flow(self.graph, end)

    @cached_property
    def _bisection(self) -> tuple[float | None, str]:
        if any(e["gbit_s"] is None for *_, e in self.graph.edges(data=True)):
            return None, ""
        results = [(self._max_flow(side), name) for name, side in self._cuts()]
        return min(results)

    @property
    def bisection_bandwidth(self) -> Quantity | None:
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

    def all_to_all_time(self, message_size: Quantity) -> tuple[Quantity | None, str]:
        """Bandwidth-bound time of an all-to-all: every chip sends ``message_size`` to every
        other.

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


def contracted_max_flow(graph: nx.Graph[str], end: Callable[[str], str]) -> float:
    """Max flow in Gbit/s from ``_source`` to ``_sink`` after mapping every node with ``end``
    (chips to a terminal, switches to themselves); links keep their ``gbit_s`` both ways."""
    import networkx as nx

    d: nx.DiGraph[str] = nx.DiGraph()
    for a, b, e in graph.edges(data=True):
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
    return float(nx.maximum_flow_value(d, "_source", "_sink") / 1000)
