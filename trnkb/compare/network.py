"""Scale-out fabric size (the high-radix argument) and scale-up fabric views."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import networkx as nx
import pandas as pd

from trnkb.calc import network
from trnkb.compare.tables import fmt, sources_of
from trnkb.kb import KnowledgeBase
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.topology import Fabric


def hop_histograms(fabrics: Iterable[Fabric]) -> pd.DataFrame:
    """Chip pairs per hop count for each :class:`trnkb.topology.Fabric`, long:
    ``fabric, hops, pairs, share`` (share of the fabric's chip pairs)."""
    out = []
    for f in fabrics:
        hist = f.hop_histogram()
        total = sum(hist.values())
        out += [{"fabric": f.spec.id, "hops": int(h), "pairs": int(n), "share": n / total}
                for h, n in sorted(hist.items())]
    return pd.DataFrame(out, columns=["fabric", "hops", "pairs", "share"])


def _structured_positions(g: Any) -> dict[Any, tuple[float, float]] | None:
    """Positions that follow the hardware, or None when the graph has no such attributes.

    Switched domains: one panel per rack, side by side; in a rack each compute tray
    (``node``) is a row, its chips (``pos`` A, B...) are columns in the middle, and each
    switch plane is a column of switch chips, plane 1 left of the chips and the others
    right. Tori: chips on their ``coord`` grid, one panel per third coordinate.
    """
    nodes = dict(g.nodes(data=True))
    if nodes and all("coord" in d for d in nodes.values()):
        return {n: _torus_xy(d["coord"], _torus_depth(nodes)) for n, d in nodes.items()}
    racks = sorted({str(d.get("rack", "")) for d in nodes.values()})
    if not all("rack" in d for d in nodes.values()):
        return None
    chips = [d for d in nodes.values() if d.get("kind") == "chip"]
    if not chips or not all("node" in d and "pos" in d for d in chips):
        return None
    slots = sorted({str(d["pos"]) for d in chips})
    planes = sorted({d.get("plane", 1) for d in nodes.values() if d.get("kind") != "chip"})
    trays = max(int(d["node"]) for d in chips)
    width = len(slots) + 2 * max(len(planes), 1) + 3
    pos: dict[Any, tuple[float, float]] = {}
    for n, d in nodes.items():
        x0 = racks.index(str(d["rack"])) * width
        if d.get("kind") == "chip":
            pos[n] = (x0 + max(len(planes), 1) + 1 + slots.index(str(d["pos"])), -int(d["node"]))
    for r in racks:
        x0 = racks.index(r) * width
        for p in planes:
            members = sorted(n for n, d in nodes.items()
                             if d.get("kind") != "chip" and str(d["rack"]) == r
                             and d.get("plane", 1) == p)
            i = planes.index(p)
            x = x0 + (0 if i == 0 else max(len(planes), 1) + 1 + len(slots) + i)
            for k, n in enumerate(members):
                pos[n] = (x, -1 - k * (trays - 1) / max(len(members) - 1, 1))
    return pos if len(pos) == len(nodes) else None


def _torus_depth(nodes: dict[Any, Any]) -> int:
    return 1 + int(max((tuple(d["coord"]) + (0, 0, 0))[2] for d in nodes.values()))


def _torus_xy(coord: Iterable[int], depth: int) -> tuple[float, float]:
    """A torus coordinate on the page: x across, y down, z as diagonal layers."""
    c = tuple(coord) + (0, 0, 0)
    step = depth + 1
    return c[0] * step + c[2], -(c[1] * step) - 0.6 * c[2]


def _torus_edges(g: Any, pos: Mapping[Any, Any]) -> list[dict[str, Any]] | None:
    """Edges of a torus with wrap-around links drawn as two outward stubs, not as lines
    across the whole drawing. ``pos`` is (x, y) per node: tuples from the structured
    layout or arrays from networkx."""
    nodes = dict(g.nodes(data=True))
    if not nodes or not all("coord" in d for d in nodes.values()):
        return None
    depth = _torus_depth(nodes)
    out = []
    for a, b, d in g.edges(data=True):
        ca, cb = (tuple(nodes[n]["coord"]) + (0, 0, 0) for n in (a, b))
        wrap = [k for k in range(3) if abs(ca[k] - cb[k]) > 1]
        if not wrap:
            out.append({"a": pos[a], "b": pos[b], "medium": d.get("medium", "")})
            continue
        k = wrap[0]
        low, high = (a, b) if ca[k] < cb[k] else (b, a)
        unit = [0, 0, 0]
        unit[k] = 1
        ox, oy = _torus_xy(unit, depth)
        for n, sign in ((low, -0.4), (high, 0.4)):
            x, y = pos[n]
            out.append({"a": (x, y), "b": (x + sign * ox / (depth + 1 if k < 2 else 1),
                                           y + sign * oy / (depth + 1 if k < 2 else 1)),
                        "medium": f"{d.get('medium', '')} (wrap-around)"})
    return out


def graph_layout(fabric: Fabric, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Node and edge tables to draw a fabric (:func:`trnkb.views.charts.graph`).

    Laid out by rack, tray and switch plane (or torus coordinate) from the node
    attributes of ``fabric.graph`` so a reader can follow a path; a seeded spring layout
    only for a graph without them. Rounded so the drawing is byte-stable. Returns
    ``nodes`` (``name, kind, rack, x, y``) and ``edges`` (``x, y, x2, y2, medium``).
    """
    g = fabric.graph
    pos = _structured_positions(g) or nx.spring_layout(g, seed=seed, iterations=100)
    nodes = pd.DataFrame([{"name": n, "kind": d.get("kind", ""), "rack": str(d.get("rack", "")),
                           "x": round(float(pos[n][0]), 3), "y": round(float(pos[n][1]), 3)}
                          for n, d in g.nodes(data=True)])
    segments = _torus_edges(g, pos) or [{"a": pos[a], "b": pos[b], "medium": d.get("medium", "")}
                                        for a, b, d in g.edges(data=True)]
    edges = pd.DataFrame([{"x": round(float(e["a"][0]), 3), "y": round(float(e["a"][1]), 3),
                           "x2": round(float(e["b"][0]), 3), "y2": round(float(e["b"][1]), 3),
                           "medium": e["medium"]} for e in segments])
    return nodes, edges


def _scaleout_switches(kb: KnowledgeBase) -> list[str]:
    net = kb.table("network")
    rows = net[(net["category"] == "scaleout-switch")]
    return [i for i in rows["id"] if kb.get(i, "switch_bandwidth") is not None]


def port_speeds(kb: KnowledgeBase) -> list[Quantity]:
    """The distinct logical port speeds in the ``network`` table, slowest first."""
    f = kb.facts[(kb.facts["table"] == "network") & (kb.facts["field"] == "port_speed")]
    seen: dict[float, Quantity] = {}
    for q in f["value"]:
        seen.setdefault(round(float(q.to("Gbit/s").magnitude), 6), q)
    return [seen[k] for k in sorted(seen)]


def fabric_sweep(kb: KnowledgeBase, layers: Iterable[int] = (1, 2, 3),
                 switches: Sequence[str] | None = None) -> pd.DataFrame:
    """Folded-Clos size for every scale-out switch class x port speed x layer count
    (:func:`trnkb.calc.network.fabric_size`), the high-radix argument in one table.

    Switches default to every scale-out switch row with a bandwidth; port speeds are those
    in the ``network`` table (:func:`port_speeds`). Returns
    ``switch, switch_Tbps, port_Gbps, layers, label, radix, endpoints, switches, links,
    source``.
    """
    out = []
    for sw in switches if switches is not None else _scaleout_switches(kb):
        bw = kb.value(sw, "switch_bandwidth")
        for ps in port_speeds(kb):
            if network.radix(bw, ps) < 2:
                continue
            for n in layers:
                r = network.fabric_size(bw, ps, n)
                out.append({
                    "switch": sw, "switch_Tbps": float(bw.to("Tbit/s").magnitude),
                    "port_Gbps": float(ps.to("Gbit/s").magnitude), "layers": n,
                    "label": f"{fmt(bw)}, {n} layer{'s' if n > 1 else ''}",
                    "radix": int(r.output("radix").magnitude), "endpoints": int(r.value.magnitude),
                    "switches": int(r.output("switches").magnitude),
                    "links": int(r.output("links").magnitude),
                    "source": kb.provenance(sw, "switch_bandwidth")["source"]})
    return pd.DataFrame(out)


def tor_fabrics(kb: KnowledgeBase, upper_layers: int = 2) -> pd.DataFrame:
    """The ToR-first plane (:func:`trnkb.calc.network.tor_fabric_size`) per scale-out switch
    class at its own port speed: ``switch, switch_Tbps, port_Gbps, radix, tors, pods,
    tors_per_pod, source`` (ToRs per plane; chips per ToR not assumed)."""
    out = []
    for sw in _scaleout_switches(kb):
        bw, ps = kb.value(sw, "switch_bandwidth"), kb.get(sw, "port_speed")
        if ps is None:
            continue
        r = network.tor_fabric_size(bw, ps, 1, upper_layers)
        out.append({"switch": sw, "switch_Tbps": float(bw.to("Tbit/s").magnitude),
                    "port_Gbps": float(ps.to("Gbit/s").magnitude),
                    **{k: int(r.output(k).magnitude)
                       for k in ("radix", "tors", "pods", "tors_per_pod")},
                    "source": " + ".join(sources_of(kb, [sw], ["switch_bandwidth", "port_speed"]))})
    return pd.DataFrame(out)
