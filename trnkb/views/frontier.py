"""Throughput-interactivity frontiers across systems (for notebook 10 and the site).

:func:`frontiers` runs :func:`trnkb.workload.frontier` (the serving simulator's closed-loop
concurrency sweep) for one model on each system and returns a long table, one row per
system and concurrency, with tokens/s per chip and tokens/s per user (central, low, high);
:func:`frontier_chart` draws each system's curve (tokens/s per user across, tokens/s per
chip up) with its range as a band: the chart serving dashboards draw. The table's
``attrs["sources"]`` lists the sources behind the curves (the model's architecture and each
system's sourced inputs, cost inputs left out: they do not move tokens/s).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd

from trnkb.views.charts import WIDTH, caption
from trnkb.workload import fromkb
from trnkb.workload.cost import COST_ASSUMPTIONS
from trnkb.workload.simulation import simulate
from trnkb.workload.slo import frontier

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

# The systems issue 19 asks the frontier for, with the chips of one serving replica.
FRONTIER_SYSTEMS = {"trn3-nl72x2-switched": 8, "gb300-nvl72": 8, "mi355x-8": 8,
                    "tpu-v7-pod": 8}
# Inputs of a result that only price it (they do not move tokens/s, so cite nothing here).
_COST_INPUTS = {*COST_ASSUMPTIONS, "owner_price", "cloud_price", "capex_per_chip",
                "chip_power", "pue"}


def frontiers(kb: KnowledgeBase, model: str,
              systems: Mapping[str, int] | Sequence[str] = tuple(FRONTIER_SYSTEMS), *,
              input_len: int = 1024, output_len: int = 1024, precision: str = "fp8",
              points: int = 8) -> pd.DataFrame:
    """One row per system x concurrency: ``system``, ``system_name``, ``chips``,
    ``concurrency``, ``per_chip``/``per_chip_low``/``per_chip_high`` and
    ``per_user``/``per_user_low``/``per_user_high`` (output tokens/s), ``ttft_p99`` (s);
    ``attrs["sources"]``: sorted source ids behind the throughput and interactivity.

    ``systems``: rack ids (8 chips per replica) or ``{rack id: chips per replica}``.
    """
    chips_of = dict(systems) if isinstance(systems, Mapping) else {s: 8 for s in systems}
    m = fromkb.model(kb, model)
    rows = []
    sources = set(m.sources.values())
    for sid, chips in chips_of.items():
        s = fromkb.system(kb, sid)
        probe = simulate(m, s, chips, concurrency=1, input_len=input_len,
                         output_len=output_len, precision=precision, ranged=False)
        sources |= {i for k, v in probe.inputs.items() if k not in _COST_INPUTS
                    for i in v.sources}
        for r in frontier(m, s, chips, points=points, input_len=input_len,
                          output_len=output_len, precision=precision):
            c, u = r["tokens_per_s_per_chip"], r["tokens_per_s_per_user"]
            rows.append({"system": sid, "system_name": s.name, "chips": chips,
                         "concurrency": r["concurrency"], "per_chip": c["central"],
                         "per_chip_low": c["low"], "per_chip_high": c["high"],
                         "per_user": u["central"], "per_user_low": u["low"],
                         "per_user_high": u["high"], "ttft_p99": r["ttft_p99"]["central"]})
    df = pd.DataFrame(rows)
    df.attrs["sources"] = sorted(sources)
    return df


def frontier_chart(df: pd.DataFrame, *, title: str, sources: Iterable[str] = (),
                   note: str = "") -> alt.LayerChart:
    """Each system's frontier: a line through the central points (tokens/s per user across,
    tokens/s per chip up, both log) and a band from the low to the high throughput."""
    x = alt.X("per_user:Q", title="output tokens/s per user (interactivity)",
              scale=alt.Scale(type="log"))
    color = alt.Color("system_name:N", title="system")
    band = alt.Chart(df).mark_area(opacity=0.15).encode(
        x=x, y=alt.Y("per_chip_low:Q", title="output tokens/s per chip",
                     scale=alt.Scale(type="log")),
        y2="per_chip_high:Q", color=color)
    line = alt.Chart(df).mark_line(point=True).encode(
        x=x, y=alt.Y("per_chip:Q", scale=alt.Scale(type="log")), color=color,
        tooltip=["system_name:N", "concurrency:Q", alt.Tooltip("per_chip:Q", format=",.0f"),
                 alt.Tooltip("per_user:Q", format=",.1f")])
    chart: alt.LayerChart = (band + line).properties(
        width=WIDTH, title=alt.TitleParams(title, subtitle=caption(sources, note),
                                           anchor="start"))
    return chart
