"""Collective costs on a fabric: what a group of chips can inject, cut and reach.

A *group* is the first ``g`` chips in the fabric's chip order (tray by tray, rack by rack;
for a torus the last coordinate varies fastest), the placement a tensor- or
expert-parallel group gets when ranks are packed. Every group of the same size is assumed
busy at the same time (a parallel plan runs its collectives on all groups at once), so a
group may use its own chips' links and the switches, never another group's chips as
relays: the measurements run on the subgraph of the group's chips plus every switch.

Bandwidth-bound times (per direction, ideal routing, latency added separately):

* all-gather / reduce-scatter of a ``B``-byte buffer (the gathered size):
  ``max((g-1)/g * B / injection, (B/2) / bisection)``; a chip that received a block may
  forward it, so only one copy of each half crosses the cut.
* all-reduce: reduce-scatter + all-gather.
* all-to-all where each chip sends ``B`` bytes spread evenly over the group:
  ``max((g-1)/g * B / injection, g*B/4 / bisection)``; every pair's data is distinct.
* latency: ``ceil(log2 g)`` steps for all-gather and reduce-scatter (recursive doubling /
  halving, which moves the same bytes as a ring), twice that for all-reduce (Rabenseifner),
  one for all-to-all; each step costs ``step_latency + mean_hops * hop_latency``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from trnkb.topology.bandwidth import contracted_max_flow
from trnkb.topology.parts import FabricParts
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    import networkx as nx

KINDS = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all")


def bandwidth_time(kind: str, nbytes: float, g: int, injection: float, bisection: float) -> float:
    """Bandwidth-bound seconds of one collective (bytes, B/s in; see the module docstring)."""
    if g <= 1 or nbytes <= 0:
        return 0.0
    if kind in ("all-gather", "reduce-scatter"):
        return max((g - 1) / g * nbytes / injection, nbytes / 2 / bisection)
    if kind == "all-reduce":
        return 2 * bandwidth_time("all-gather", nbytes, g, injection, bisection)
    if kind == "all-to-all":
        return max((g - 1) / g * nbytes / injection, g * nbytes / 4 / bisection)
    raise ValueError(f"unknown collective {kind!r}; choose from {', '.join(KINDS)}")


def latency_steps(kind: str, g: int) -> int:
    """Sequential steps: ``ceil(log2 g)`` (all-gather, reduce-scatter), twice that
    (all-reduce), 1 (all-to-all)."""
    if g <= 1:
        return 0
    steps = math.ceil(math.log2(g))
    return {"all-gather": steps, "reduce-scatter": steps, "all-reduce": 2 * steps,
            "all-to-all": 1}[kind]


class CollectivesMixin(FabricParts):
    """Group bandwidths and collective times of a :class:`~trnkb.topology.fabric.Fabric`."""

    def _group_graph(self, g: int) -> tuple[list[str], nx.Graph[str]]:
        group = self.chips[:g]
        keep = set(group) | set(self.switches)
        return group, self.graph.subgraph(keep)

    def _flow(self, sub: nx.Graph[str], side: set[str], other: set[str]) -> float:
        """Max flow in Gbit/s from ``side`` to ``other`` over ``sub`` (chips contracted to
        terminals)."""
        def end(n: str) -> str:
            if n in side:
                return "_source"
            return "_sink" if n in other else n

        return contracted_max_flow(sub, end)

    def group_bandwidth(self, g: int) -> dict[str, Any]:
        """Injection per chip, bisection and mean hops of a packed group of ``g`` chips.

        Returns ``{"chips", "injection" (GB/s), "bisection" (GB/s, one direction),
        "mean_hops"}``; cached per group size. ``g`` is capped at the domain size.
        """
        cache = self.__dict__.setdefault("_group_cache", {})
        g = max(1, min(int(g), len(self.chips)))
        if g in cache:
            return cast("dict[str, Any]", cache[g])
        group, sub = self._group_graph(g)
        members = set(group)
        inj = min(sum(d["gbit_s"] or 0.0 for _, o, d in sub.edges(c, data=True)) for c in group)
        if self.spec.chip_bandwidth is not None:
            inj = min(inj, self.spec.chip_bandwidth.to("Gbit/s").magnitude)
        if g > 1:
            half = set(group[: g // 2])
            bis = self._flow(sub, half, members - half)
            m = self.hops_among(group)
            hops = float(m[np.triu_indices(g, k=1)].mean())
        else:
            bis, hops = inj, 0.0
        out = {"chips": g, "injection": Q_(inj, "Gbit/s").to("GB/s"),
               "bisection": Q_(bis, "Gbit/s").to("GB/s"), "mean_hops": hops}
        cache[g] = out
        return out

    def collective_time(self, kind: str, message_size: Quantity, group: int | None = None,
                        step_latency: Quantity | None = None,
                        hop_latency: Quantity | None = None) -> Quantity:
        """Time of one collective over a packed group (default: the whole domain).

        ``message_size`` is the buffer per chip (the gathered size for all-gather, the
        bytes each chip sends for all-to-all). Latencies default to zero (bandwidth only).
        """
        gb = self.group_bandwidth(group or len(self.chips))
        g = gb["chips"]
        nbytes = float(Q_(message_size).to("B").magnitude)
        t = bandwidth_time(kind, nbytes, g, float(gb["injection"].to("B/s").magnitude),
                           float(gb["bisection"].to("B/s").magnitude))
        per_step = 0.0
        if step_latency is not None:
            per_step += float(Q_(step_latency).to("s").magnitude)
        if hop_latency is not None:
            per_step += gb["mean_hops"] * float(Q_(hop_latency).to("s").magnitude)
        return Q_(t + latency_steps(kind, g) * per_step, "s").to("us")
