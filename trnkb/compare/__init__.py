"""Comparison views over the knowledge base: tidy tables of magnitudes with their sources.

Every view returns plain magnitudes in a stated unit (the field's unit from
:mod:`trnkb.spec.schema`, or the unit named in the column) next to the source of each value,
ready for a table or a chart (:mod:`trnkb.views.charts`). Missing values stay missing: a chip
whose sources give no TDP has no FLOP/s per watt. Derived figures come from the
calculators of :mod:`trnkb.calc`; nothing here has a formula of its own.

One module per subject: :mod:`~trnkb.compare.tables` (generic), :mod:`~.chips`,
:mod:`~.memory`, :mod:`~.power`, :mod:`~.network`, :mod:`~.engine`, :mod:`~.claims`.
Notebooks use the flat namespace: ``from trnkb import compare; compare.comparison(kb)``.

May import: :mod:`trnkb.views`, :mod:`trnkb.audit` and the models.
"""

from trnkb.compare.chips import (
    HEADLINE,
    accelerators,
    caveats,
    chip_values,
    columns,
    comparison,
    lane_budget,
    rack_skus,
    ridge_point,
    standing,
    wide,
)
from trnkb.compare.claims import claims_view, verdict_counts
from trnkb.compare.engine import (
    code_points,
    engine_busy,
    format_errors,
    gemm_sweep,
    w4a8,
)
from trnkb.compare.memory import lnc_memory, memory_view
from trnkb.compare.network import (
    fabric_sweep,
    graph_layout,
    hop_histograms,
    tor_fabrics,
)
from trnkb.compare.power import assumptions_table, campus_power, chips_per_mw, tco_sweep
from trnkb.compare.tables import (
    cited,
    conflicts,
    fmt,
    magnitudes,
    profile,
    rows,
    sources_of,
)

__all__ = [
    "HEADLINE", "accelerators", "assumptions_table", "campus_power", "caveats", "chip_values",
    "chips_per_mw", "cited", "claims_view", "code_points", "columns", "comparison", "conflicts",
    "engine_busy", "fabric_sweep", "fmt", "format_errors", "gemm_sweep", "graph_layout",
    "hop_histograms", "lane_budget", "lnc_memory", "magnitudes", "memory_view", "profile",
    "rack_skus", "ridge_point", "rows", "sources_of", "standing", "tco_sweep", "tor_fabrics",
    "verdict_counts", "w4a8", "wide",
]
