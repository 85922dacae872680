"""Scale-up fabric models: one networkx graph per scale-up domain and switch generation.

The wiring parameters (planes, switches per plane, lanes per port...) are rows of the
``fabrics`` table; chip, tray and rack counts come from ``racks``; switch lanes and ports,
lane rates and the per-chip lane budget from ``network``. This module turns them into a
graph and measures it: switch counts, lane use, hop distances, bandwidths.

A *hop* is one traversal of a forwarding device between two chips; the definition and
why it is the one the sources use are in :mod:`~trnkb.topology.hops`.

Modules, one idea each: :mod:`~trnkb.topology.spec` (what defines a fabric, read from the
KB), :mod:`~trnkb.topology.build` (the graph and its wiring rules),
:mod:`~trnkb.topology.hops`, :mod:`~trnkb.topology.bandwidth` (per-chip, bisection,
all-to-all bound), :mod:`~trnkb.topology.collectives` (all-gather, reduce-scatter,
all-reduce and all-to-all times over a packed group of chips), :mod:`~trnkb.topology.report`
(summaries, tables, claim metrics) and :mod:`~trnkb.topology.fabric` (the :class:`Fabric`
and the cached entry points).

Bandwidths are per direction throughout.

May import: :mod:`trnkb.kb`, :mod:`trnkb.calc`, :mod:`trnkb.spec`, :mod:`trnkb.units`.
"""

from trnkb.topology.build import build_graph
from trnkb.topology.fabric import Fabric, fabric, fabrics, summary_table, topology_metric
from trnkb.topology.report import SOURCE_PATHS
from trnkb.topology.spec import DEFAULT_GENERATION, FabricSpec, chip_name, fabric_ids, fabric_spec

__all__ = [
    "DEFAULT_GENERATION",
    "Fabric",
    "FabricSpec",
    "SOURCE_PATHS",
    "build_graph",
    "chip_name",
    "fabric",
    "fabric_ids",
    "fabric_spec",
    "fabrics",
    "summary_table",
    "topology_metric",
]
