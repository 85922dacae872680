"""Hop distances between the chips of a fabric.

A *hop* is one traversal of a forwarding device between two chips: a switch (on a
switch tray or a compute tray) or an intermediate chip that forwards the traffic
(Trainium's auto-forwarding). So ``hops = links on the path - 1``; chips joined by a
direct link (PCB neighbours, the two ends of a cross-rack AEC) are 0 hops apart. This
is the definition that reproduces the worked paths of the SemiAnalysis deep dive
(seed ``004_406711927e432c17.txt``): on NL32x2 Gen1, chip A of node 1 reaches chip B of
node 2 through its PCB neighbour and one switch, which the source counts as 2 hops;
counting switches alone would give 1.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from trnkb.topology.spec import RACK_NAMES

if TYPE_CHECKING:
    import networkx as nx

    from trnkb.topology.spec import FabricSpec


class HopsMixin:
    """Hop measurements of a :class:`~trnkb.topology.fabric.Fabric` (uses ``graph``,
    ``chips``, ``spec``)."""

    if TYPE_CHECKING:
        graph: nx.Graph[str]
        spec: FabricSpec

        @property
        def chips(self) -> list[str]: ...

        def rack_of(self, chip: str) -> str: ...

    @cached_property
    def _hop_matrix(self) -> np.ndarray:
        """Hops between every two chips (rows and columns in :attr:`chips` order)."""
        return self.hops_among(self.chips)

    def hops_among(self, chips: list[str]) -> np.ndarray:
        """Hops between every two of ``chips`` (rows and columns in that order), over the
        whole fabric: a path may pass through chips outside the list.

        Breadth-first search from the given chips at once: one boolean matrix product per
        step. A collective over a packed group needs only its own rows (8 chips, not the
        288 of a rack pair), which is what a cold ``trnkb workload serve`` pays for.
        """
        done = self.__dict__.get("_hop_matrix")
        if done is not None:  # the whole matrix is built already: slice it
            idx = [self._chip_index[c] for c in chips]
            return np.asarray(done[np.ix_(idx, idx)])
        nodes = list(self.graph.nodes)
        import networkx as nx

        index = {n: i for i, n in enumerate(nodes)}
        # weight=None (every edge counts 1) is documented but missing from the stubs' overloads
        to_numpy_array: Any = nx.to_numpy_array
        adj = to_numpy_array(self.graph, nodelist=nodes, weight=None, dtype=np.float32)
        rows = [index[c] for c in chips]
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
                raise KeyError(
                    f"no chip {c!r} in {self.spec.id} (chips look like {self.chips[0]!r})")
        return int(self._hop_matrix[self._chip_index[a], self._chip_index[b]])

    def path(self, a: str, b: str) -> list[str]:
        """One shortest path from chip ``a`` to chip ``b`` (both ends included)."""
        self.hops(a, b)
        import networkx as nx

        return cast("list[str]", nx.shortest_path(self.graph, a, b))

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
