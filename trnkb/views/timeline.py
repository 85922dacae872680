"""The engine's run as a chart: per-engine timelines above HBM bandwidth over time, in the
spirit of the Neuron profiler's view (engines stacked, time across). The data comes from
:mod:`trnkb.engine.profile`; the chart lives here so the engine never imports altair.
"""

from __future__ import annotations

from collections.abc import Iterable

import altair as alt

from trnkb.engine.profile import LANES, hbm_bandwidth, lanes
from trnkb.engine.result import Result
from trnkb.views.charts import caption


def timeline_chart(res: Result, title: str, sources: Iterable[str] = (), max_bars: int = 4000,
                   bins: int = 120) -> alt.VConcatChart:
    """Per-lane bars coloured by instruction, above HBM bandwidth over time (GB/s).

    Lanes with more than ``max_bars`` bars keep the longest ones (a readable chart).
    """
    bars = lanes(res)
    if len(bars) > max_bars:
        bars = bars.assign(d=bars.end_us - bars.start_us).nlargest(max_bars, "d").drop(columns="d")
    def rank(lane: str) -> tuple[str, int]:
        for i, name in enumerate(LANES):
            if lane == name or lane.endswith(" " + name):
                return (lane[: len(lane) - len(name)], i)
        return (lane, len(LANES))

    order = sorted(bars["lane"].unique(), key=rank)
    top = alt.Chart(bars).mark_bar().encode(
        y=alt.Y("lane:N", title=None, sort=order),
        x=alt.X("start_us:Q", title="Time (µs)"),
        x2="end_us:Q",
        color=alt.Color("op:N", title="Instruction"),
        tooltip=["lane", "op", "count", alt.Tooltip("start_us:Q", format=",.3f"),
                 alt.Tooltip("end_us:Q", format=",.3f")],
    ).properties(width=640, height=24 * len(order))
    bw = hbm_bandwidth(res, bins)
    bottom = alt.Chart(bw).mark_area(interpolate="step-after").encode(
        x=alt.X("start_us:Q", title="Time (µs)"),
        y=alt.Y("GB_per_s:Q", title="HBM traffic (GB/s)"),
    ).properties(width=640, height=110)
    lines = caption(sources, f"makespan {res.seconds.to('us').magnitude:,.1f} µs; bound by "
                             f"{res.bound_by} (critical path), busiest {res.busiest}")
    return alt.vconcat(top, bottom).properties(
        title=alt.TitleParams(title, subtitle=lines, anchor="start"))
