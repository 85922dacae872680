"""What the measurement mixins of a :class:`~trnkb.topology.fabric.Fabric` use from it.

Declared for type checkers only: at run time :class:`FabricParts` is an empty base class and
the names come from ``Fabric`` and :class:`~trnkb.topology.hops.HopsMixin`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

    from trnkb.topology.spec import FabricSpec


class FabricParts:
    """The graph, spec, chip lists and hop matrices a measurement mixin reads."""

    if TYPE_CHECKING:
        # provided by :class:`~trnkb.topology.fabric.Fabric`
        graph: nx.Graph[str]
        spec: FabricSpec

        @property
        def chips(self) -> list[str]: ...

        @property
        def switches(self) -> list[str]: ...

        @property
        def _hop_matrix(self) -> np.ndarray: ...

        @property
        def _chip_index(self) -> dict[str, int]: ...

        def hops_among(self, chips: list[str]) -> np.ndarray: ...

        @property
        def _rack_index(self) -> np.ndarray: ...

        def rack_of(self, chip: str) -> str: ...
        def _pair_hops(self, in_rack: bool = False) -> np.ndarray: ...
