"""The built fabric (:class:`Fabric`) and the entry points that build and cache fabrics."""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from trnkb.topology import report
from trnkb.topology.bandwidth import BandwidthMixin
from trnkb.topology.build import build_graph
from trnkb.topology.collectives import CollectivesMixin
from trnkb.topology.hops import HopsMixin
from trnkb.topology.spec import FabricSpec, fabric_spec, find_row
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:  # pandas is imported where a table is made
    import pandas as pd

    from trnkb.kb import KnowledgeBase


class Fabric(HopsMixin, BandwidthMixin, CollectivesMixin):
    """A built fabric and what can be measured on it. Use :func:`fabric` to get one."""

    def __init__(self, spec: FabricSpec) -> None:
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
        return str(self.graph.nodes[chip]["rack"])

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
        rows: list[dict[str, Any]] = []
        for kind, model, lanes_avail, ports_radix, width in (
            ("switch", self.spec.switch, self.spec.switch_lanes, self.spec.switch_ports,
             self.spec.lanes_per_port),
            ("tray-switch", self.spec.tray_switch, self.spec.tray_switch_lanes,
             self.spec.tray_switch_ports, self.spec.tray_switch_lanes_per_chip),
        ):
            nodes = self._of_kind(kind)
            if not nodes:
                continue
            lanes = [sum(d["lanes"] or 0 for *_, d in self.graph.edges(n, data=True))
                     for n in nodes]
            ports = [sum(d["ports"] for *_, d in self.graph.edges(n, data=True)) for n in nodes]
            avail_ports = ports_radix
            if lanes_avail and width:
                avail_ports = min(lanes_avail // width, ports_radix or lanes_avail)
            rows.append({
                "kind": kind, "switch": model, "count": len(nodes),
                "lanes_used": max(lanes) if any(lanes) else None, "lanes_available": lanes_avail,
                "ports_used": max(ports), "ports_available": avail_ports,
            })
        import pandas as pd

        return pd.DataFrame(rows)

    def chip_lane_usage(self) -> dict[str, tuple[int, int | None]]:
        """Per medium: (most lanes any chip uses, the chip's lane budget for that medium)."""
        budget = {"pcb": self.spec.pcb_lanes, "backplane": self.spec.backplane_lanes,
                  "aec": self.spec.cross_rack_lanes}
        used: dict[str, int] = {}
        for c in self.chips:
            per: Counter[str] = Counter()
            for *_, d in self.graph.edges(c, data=True):
                per[d["medium"]] += d["lanes"] or 0
            for m, v in per.items():
                used[m] = max(used.get(m, 0), v)
        return {m: (v, budget.get(m)) for m, v in used.items()}

    # -- reports ----------------------------------------------------------------------
    def path_examples(self) -> list[dict[str, Any]]:
        """The source's worked paths for this domain, then the worst pair in a rack and in the
        domain."""
        return report.path_examples(self)

    def summary(self, message_size: Quantity | None = None) -> dict[str, Any]:
        """Everything measured, JSON-ready (quantities as ``{"value", "unit"}``)."""
        return report.fabric_summary(self, message_size)


_DEFAULT: list[KnowledgeBase] = []


def _kb(kb: KnowledgeBase | None) -> KnowledgeBase:
    """The given knowledge base, or the shipped one (loaded once)."""
    if kb is not None:
        return kb
    if not _DEFAULT:
        from trnkb.kb import load

        _DEFAULT.append(load())
    return _DEFAULT[0]


def fabric(domain: str, generation: str | None = None,
           kb: KnowledgeBase | None = None) -> Fabric:
    """The fabric of a scale-up ``domain`` (a racks id) under a switch ``generation``.

    ``generation`` is one of gen1, pex90144-x8, pex90144-x4, gen2, gen3 for the Trainium3
    switched racks (default gen1) and omitted for fabrics with one wiring. Built fabrics
    are cached per knowledge base (in ``kb.memo``).
    """
    kb = _kb(kb)
    fid = find_row(kb, domain, generation)
    key = ("fabric", fid)
    if key not in kb.memo:  # not setdefault: that would build the fabric on every call
        kb.memo[key] = Fabric(fabric_spec(kb, domain, generation))
    return cast(Fabric, kb.memo[key])


def fabrics(kb: KnowledgeBase | None = None) -> list[Fabric]:
    """Every fabric of the knowledge base, in ``fabrics`` table order."""
    kb = _kb(kb)
    t = kb.table("fabrics")
    gens = t["generation"] if "generation" in t else [None] * len(t)
    return [fabric(d, g if isinstance(g, str) else None, kb)
            for d, g in zip(t["domain"], gens, strict=True)]


def topology_metric(domain: str, generation: str | None, name: str,
                    kb: KnowledgeBase | None = None) -> Any:
    """One measured figure, for the claims registry: a ``Fabric`` attribute or method name.

    Examples: ``topology_metric("trn3-nl72x2-switched", "gen1", "switches_per_domain") == 368``;
    names ending in ``_in_rack`` call ``max_hops(in_rack=True)``; ``hops:A/1/A:A/2/C``
    gives the hops between two chips written rack/node/position.
    """
    return report.metric(fabric(domain, generation, kb), name)


def summary_table(kb: KnowledgeBase | None = None,
                  message_size: Quantity | None = None) -> pd.DataFrame:
    """One row per fabric, plain magnitudes with the unit in the column name (chart-ready)."""
    return report.summary_rows(fabrics(kb), message_size)
