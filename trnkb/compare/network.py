"""Scale-out fabric size (the high-radix argument) and scale-up fabric views."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx
import pandas as pd

from trnkb.calc import network
from trnkb.compare.tables import fmt, sources_of
from trnkb.kb import KnowledgeBase


def hop_histograms(fabrics: Iterable) -> pd.DataFrame:
    """Chip pairs per hop count for each :class:`trnkb.topology.Fabric`, long:
    ``fabric, hops, pairs, share`` (share of the fabric's chip pairs)."""
    out = []
    for f in fabrics:
        hist = f.hop_histogram()
        total = sum(hist.values())
        out += [{"fabric": f.spec.id, "hops": int(h), "pairs": int(n), "share": n / total}
                for h, n in sorted(hist.items())]
    return pd.DataFrame(out, columns=["fabric", "hops", "pairs", "share"])


def graph_layout(fabric, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Node and edge tables to draw a fabric (:func:`trnkb.charts.graph`).

    A seeded spring layout, rounded so the drawing is byte-stable. Returns ``nodes``
    (``name, kind, x, y``) and ``edges`` (``x, y, x2, y2, medium``).
    """
    g = fabric.graph
    pos = nx.spring_layout(g, seed=seed, iterations=100)
    nodes = pd.DataFrame([{"name": n, "kind": d.get("kind", ""), "x": round(float(pos[n][0]), 3),
                           "y": round(float(pos[n][1]), 3)} for n, d in g.nodes(data=True)])
    edges = pd.DataFrame([{"x": round(float(pos[a][0]), 3), "y": round(float(pos[a][1]), 3),
                           "x2": round(float(pos[b][0]), 3), "y2": round(float(pos[b][1]), 3),
                           "medium": d.get("medium", "")} for a, b, d in g.edges(data=True)])
    return nodes, edges


def _scaleout_switches(kb: KnowledgeBase) -> list[str]:
    net = kb.table("network")
    rows = net[(net["category"] == "scaleout-switch")]
    return [i for i in rows["id"] if kb.get(i, "switch_bandwidth") is not None]


def port_speeds(kb: KnowledgeBase) -> list:
    """The distinct logical port speeds in the ``network`` table, slowest first."""
    f = kb.facts[(kb.facts["table"] == "network") & (kb.facts["field"] == "port_speed")]
    seen = {}
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
                    **{k: int(r.output(k).magnitude) for k in ("radix", "tors", "pods", "tors_per_pod")},
                    "source": " + ".join(sources_of(kb, [sw], ["switch_bandwidth", "port_speed"]))})
    return pd.DataFrame(out)
