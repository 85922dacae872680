"""Altair chart builders for the comparison views.

Every builder takes a DataFrame of plain magnitudes (never pint columns: Vega-Lite cannot
serialise a Quantity), puts the unit in the axis title and the sources in a caption under
the chart. Column names must be plain identifiers: Vega-Lite reads ``.`` and ``[ ]`` in a
field name as nested access and silently draws nothing.

Charts are meant for the ``svg`` renderer (see :mod:`trnkb.views.nbsetup`): static, offline and
byte-stable, so notebooks stay valid under nbval.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Literal, SupportsFloat, TypeVar, cast

import altair as alt
import pandas as pd

from trnkb.views.palette import _color, _medium_scale, _stated

WIDTH = 480
# Category labels up to 520 px: at Vega's 180 px, two fabrics named alike and told apart
# by the id at the end of their label (trnkb.views.display.labels) were cut to the same text.
_LABELS = alt.Axis(labelLimit=520)
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def caption(sources: Iterable[str], note: str = "", width: int = 110) -> list[str]:
    """Caption lines: ``Sources: a; b`` (sorted, de-duplicated, wrapped at ``width``
    characters), then an optional note (alone when there are no sources).

    ``sources`` may hold ``"a + b"`` strings (derived values); they are split.
    """
    ids = sorted({s.strip() for item in sources for s in str(item).split("+") if s.strip()})
    lines: list[str] = []
    line = "Sources:"
    for i, sid in enumerate(ids):
        piece = f" {sid}{';' if i < len(ids) - 1 else ''}"
        if len(line) + len(piece) > width and line != "Sources:":
            lines.append(line)
            line = " "
        line += piece
    if not ids:  # computed from no KB value (e.g. number-format experiments): say how
        return [note] if note else ["Sources: none"]
    lines.append(line)
    return lines + ([note] if note else [])


def _check(df: pd.DataFrame, *columns: str) -> None:
    for c in columns:
        if c not in df.columns:
            raise KeyError(f"no column {c!r}; columns are {', '.join(map(str, df.columns))}")
        if not _PLAIN.match(c):
            raise ValueError(f"column {c!r} is not a plain identifier; Vega-Lite would read "
                             "'.' or '[ ]' as nested access and draw nothing")
        if df[c].dtype.name.startswith("pint"):
            raise TypeError(f"column {c!r} holds pint quantities; pass magnitudes "
                            "(s.pint.to(unit).pint.magnitude) and put the unit in the title")


_C = TypeVar("_C", alt.Chart, alt.LayerChart)


def _layer(*charts: alt.Chart) -> alt.LayerChart:
    return cast(alt.LayerChart, alt.layer(*charts))


def _num(value: object) -> float:
    """A table cell as a float (the cell holds a number)."""
    return float(cast(SupportsFloat, value))


def _titled(chart: _C, title: str, lines: list[str]) -> _C:
    # The caption is a bottom-anchored title so it travels inside the SVG.
    return chart.properties(
        width=WIDTH,
        title=alt.TitleParams(text=title, subtitle=lines, anchor="start", orient="bottom",
                              subtitleFontSize=10, subtitleColor="#555"),
    )


def _log_scale(values: pd.Series) -> alt.Scale:
    # Bars start at the domain minimum; on a log scale that is the smallest value, whose
    # bar would have zero length. Start at the power of ten below it.
    low = float(values[values > 0].min())
    return alt.Scale(type="log", domainMin=10 ** (math.ceil(math.log10(low)) - 1))


def bars(df: pd.DataFrame, category: str, value: str, *, value_title: str, title: str,
         sources: Iterable[str], color: str | None = None, note: str = "",
         sort: str | list[str] | None = "-x") -> alt.LayerChart:
    """Horizontal bars of ``value`` per ``category``.

    Parameters
    ----------
    df : DataFrame
        One row per bar; ``value`` holds magnitudes in the unit named in ``value_title``.
    value_title : str
        Axis title with the unit, e.g. ``"HBM bandwidth (TB/s)"``.
    sources : iterable of str
        Source ids behind the values, shown in the caption.
    """
    _check(df, category, value, *([color] if color else []))
    df = _stated(df, color)
    enc: dict[str, Any] = {
        "y": alt.Y(f"{category}:N", title=None, sort=sort, axis=_LABELS),
        "x": alt.X(f"{value}:Q", title=value_title, scale=_room_for_labels(df[value])),
    }
    if color:
        enc["color"] = _color(df, color)
    chart: alt.Chart = alt.Chart(df).mark_bar().encode(**enc)
    text = alt.Chart(df).mark_text(align="left", dx=3, fontSize=10).encode(
        y=enc["y"], x=enc["x"], text=alt.Text(f"{value}:Q", format=",.4~r"))
    return _titled(_layer(chart, text), title, caption(sources, note))


def _room_for_labels(values: pd.Series) -> Any:  # alt.Scale or alt.Undefined
    """An x scale 15% past the longest bar, so its value label stays clear of the legend
    (a bar ending on a round number, e.g. 1,200 GB/s, put "1,200" under the legend)."""
    v = pd.to_numeric(values, errors="coerce").dropna()
    if v.empty or (v < 0).any() or v.max() == 0:
        return alt.Undefined
    return alt.Scale(domain=[0, float(v.max()) * 1.15], nice=True)


def grouped_bars(df: pd.DataFrame, category: str, value: str, group: str, *,
                 value_title: str, title: str, sources: Iterable[str], note: str = "",
                 log: bool = False, sort: list[str] | None = None,
                 groups: list[str] | None = None) -> alt.Chart:
    """Bars of ``value`` per ``category``, one bar per ``group`` inside each category.

    Typical use: FLOP/s (category = chip) by precision (group). ``sort`` orders the
    categories and ``groups`` the groups (default: alphabetical); the legend is titled
    with the group column's name (``hops``, ``precision``).
    """
    _check(df, category, value, group)
    df = _stated(df, group)
    scale = _log_scale(df[value]) if log else alt.Undefined
    chart: alt.Chart = alt.Chart(df).mark_bar().encode(
        y=alt.Y(f"{category}:N", title=None, sort=sort, axis=_LABELS),
        yOffset=alt.YOffset(f"{group}:N", sort=groups),
        x=alt.X(f"{value}:Q", title=value_title, scale=scale, stack=None),
        color=_color(df, group, title=group.replace("_", " "), sort=groups),
    )
    return _titled(chart, title, caption(sources, note))


HEIGHT = 300  # Vega-Lite's default height of a continuous y axis, made explicit
_CHAR_PX, _LINE_PX = 5.6, 13  # width of a 10 px label character, height of a label line


_Map = Callable[[float], float]


def _axis(values: pd.Series, log: bool) -> tuple[list[float], _Map, _Map]:
    """An explicit domain and data <-> pixel maps, so label placement matches the drawing."""
    lo, hi = float(values.min()), float(values.max())
    if log:
        lo, hi = math.log10(lo) - 0.1, math.log10(hi) + 0.1
        return ([10 ** lo, 10 ** hi], lambda v: (math.log10(v) - lo) / (hi - lo),
                lambda f: 10 ** (lo + f * (hi - lo)))
    pad = (hi - lo) * 0.06 or abs(hi) * 0.1 or 1.0
    lo, hi = lo - pad, hi + pad
    return [lo, hi], lambda v: (v - lo) / (hi - lo), lambda f: lo + f * (hi - lo)


def place_labels(df: pd.DataFrame, x: str, y: str, label: str, *, log: bool = False,
                 width: int = WIDTH, height: int = HEIGHT) -> pd.DataFrame:
    """Label positions that do not overlap: ``label_x, label_y`` (data units) and ``align``.

    Each label starts above and right of its point; when its box would cover a label
    already placed (or leave the plot on the right), it moves down or up one line at a
    time (or to the left of the point) until it is clear. Greedy, highest points first.
    """
    xdom, xf, xinv = _axis(df[x], log)
    ydom, yf, yinv = _axis(df[y], log)
    placed: list[tuple[float, float, float, float]] = []
    out: dict[Hashable, dict[str, Any]] = {}
    order = sorted(df.index, key=lambda i: -_num(df.at[i, y]))
    for i in order:
        px, py = xf(_num(df.at[i, x])) * width, (1 - yf(_num(df.at[i, y]))) * height
        w = _CHAR_PX * len(str(df.at[i, label])) + 2
        best: tuple[tuple[float, float, float, float], int, str] | None = None
        for step in range(0, 12):
            dy = (step + 1) // 2 * _LINE_PX * (1 if step % 2 else -1) - 6
            for align in ("left", "right"):
                x0 = px + 6 if align == "left" else px - 6 - w
                box = (x0, py + dy - _LINE_PX + 3, x0 + w, py + dy + 3)
                inside = box[0] >= -40 and box[2] <= width + 60
                if inside and not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3]
                                      and b[1] < box[3] for b in placed):
                    best = (box, dy, align)
                    break
            if best:
                break
        box, dy, align = best or ((px + 6, py - 6 - _LINE_PX, px + 6 + w, py - 6), -6, "left")
        placed.append(box)
        out[i] = {"label_x": xinv((box[0] if align == "left" else box[2]) / width),
                  "label_y": yinv(1 - (py + dy) / height), "align": align}
    res = pd.DataFrame.from_dict(out, orient="index").reindex(df.index)
    res.attrs["domains"] = (xdom, ydom)
    return res


def _joined(s: pd.Series) -> str:
    return ", ".join(map(str, s))


def scatter(df: pd.DataFrame, x: str, y: str, label: str, *, x_title: str, y_title: str,
            title: str, sources: Iterable[str], color: str | None = None, note: str = "",
            log: bool = False) -> alt.LayerChart:
    """Labelled points of ``y`` against ``x`` (e.g. FLOP/s against HBM bandwidth).

    Every row is a dot (coloured by ``color``, e.g. ``vendor``); rows at the same point
    share one label listing them all, and labels are moved apart so none overlaps another
    (:func:`place_labels`).
    """
    _check(df, x, y, label, *([color] if color else []))
    df = _stated(df, color)
    labels = df.groupby([x, y], as_index=False, sort=False).agg({label: _joined})
    spots = place_labels(labels, x, y, label, log=log)
    labels = pd.concat([labels, spots], axis=1)
    xdom, ydom = spots.attrs["domains"]
    kind: Literal["log", "linear"] = "log" if log else "linear"
    xs, ys = (alt.Scale(type=kind, domain=d, nice=False) for d in (xdom, ydom))
    enc = {"x": alt.X(f"{x}:Q", title=x_title, scale=xs),
           "y": alt.Y(f"{y}:Q", title=y_title, scale=ys)}
    points = alt.Chart(df).mark_point(filled=True, size=70, clip=True).encode(
        **enc, **({"color": _color(df, color)} if color else {}))
    layers = [points]
    for align in ("left", "right"):
        sub = labels[labels["align"] == align][["label_x", "label_y", label]]
        if len(sub):
            layers.append(alt.Chart(sub).mark_text(align=align, fontSize=10,
                                                   baseline="alphabetic").encode(
                x=alt.X("label_x:Q", scale=xs), y=alt.Y("label_y:Q", scale=ys),
                text=f"{label}:N"))
    return _titled(_layer(*layers).properties(height=HEIGHT), title, caption(sources, note))


def lines(df: pd.DataFrame, x: str, y: str, series: str | None, *, x_title: str, y_title: str,
          title: str, sources: Iterable[str], note: str = "", log_x: bool = False,
          log_y: bool = False, points: bool = False, order: str | None = None) -> alt.Chart:
    """One line per ``series`` (e.g. a roofline per chip: attainable FLOP/s vs intensity);
    a single line when ``series`` is None. Points are joined in ``x`` order, or in the
    order of column ``order``."""
    _check(df, x, y, *([series] if series else []), *([order] if order else []))
    enc: dict[str, Any] = {
        "x": alt.X(f"{x}:Q", title=x_title,
                   scale=alt.Scale(type="log") if log_x else alt.Undefined),
        "y": alt.Y(f"{y}:Q", title=y_title,
                   scale=alt.Scale(type="log") if log_y else alt.Undefined),
    }
    if series:
        enc["color"] = alt.Color(f"{series}:N", title=None)
    if order:
        enc["order"] = alt.Order(f"{order}:Q")
    chart: alt.Chart = alt.Chart(df).mark_line(point=points).encode(**enc)
    return _titled(chart, title, caption(sources, note))


def roofs(peaks: pd.DataFrame, series: str, peak: str, bandwidth: str, x_min: float,
          x_max: float) -> pd.DataFrame:
    """The roof of each ``series`` as line points: attainable = min(peak, intensity x bandwidth).

    ``peak`` is in the y unit (e.g. TFLOP/s) and ``bandwidth`` in y unit per x unit (TFLOP/s
    per FLOP/byte = TB/s). Returns ``series, intensity, attainable`` with the ridge point
    (peak / bandwidth) as the corner, from ``x_min`` to ``x_max``.
    """
    _check(peaks, series, peak, bandwidth)
    rows = []
    for s_, p, b in zip(peaks[series], peaks[peak], peaks[bandwidth], strict=True):
        ridge = float(p) / float(b)
        for x in sorted({x_min, min(max(ridge, x_min), x_max), x_max}):
            rows.append({series: s_, "intensity": x, "attainable": min(float(p), x * float(b))})
    return pd.DataFrame(rows)


def roofline(points: pd.DataFrame, peaks: pd.DataFrame, x: str, y: str, series: str, *,
             peak: str, bandwidth: str, x_title: str, y_title: str, title: str,
             sources: Iterable[str], note: str = "") -> alt.LayerChart:
    """A roofline: each series' roof (dashed: bandwidth slope up to the ridge, then the flat
    peak) and its measured ``points`` on log-log axes, in the same colour.

    ``points`` has ``x, y, series`` (e.g. intensity and achieved FLOP/s per GEMM size);
    ``peaks`` has ``series, peak, bandwidth`` per series (see :func:`roofs`).
    """
    _check(points, x, y, series)
    lo, hi = float(points[x].min()) / 2, float(points[x].max()) * 2
    roof = roofs(peaks, series, peak, bandwidth, lo, hi)
    log = alt.Scale(type="log")
    lines_ = alt.Chart(roof).mark_line(strokeDash=[4, 3]).encode(
        x=alt.X("intensity:Q", title=x_title, scale=log),
        y=alt.Y("attainable:Q", title=y_title, scale=log),
        color=alt.Color(f"{series}:N", title=None))
    dots = alt.Chart(points).mark_line(point=True).encode(
        x=alt.X(f"{x}:Q", scale=log), y=alt.Y(f"{y}:Q", scale=log),
        color=alt.Color(f"{series}:N", title=None), order=alt.Order(f"{x}:Q"))
    return _titled(_layer(lines_, dots), title, caption(sources, note or
                   "Dashed: the roof, min(peak, intensity x bandwidth); dots: achieved."))


def timeline(df: pd.DataFrame, lane: str, start: str, end: str, *, time_title: str,
             title: str, sources: Iterable[str], color: str | None = None,
             note: str = "") -> alt.Chart:
    """Gantt chart: one row per ``lane`` (an engine), bars from ``start`` to ``end``."""
    _check(df, lane, start, end, *([color] if color else []))
    chart: alt.Chart = alt.Chart(df).mark_bar().encode(
        y=alt.Y(f"{lane}:N", title=None, sort=None),
        x=alt.X(f"{start}:Q", title=time_title),
        x2=f"{end}:Q",
        color=alt.Color(f"{color or lane}:N", title=None),
    )
    return _titled(chart, title, caption(sources, note))


def metric(long: pd.DataFrame, fields: str | list[str], *, title: str, label: str = "",
           note: str = "", log: bool = False) -> alt.Chart | alt.LayerChart:
    """Bars per chip of one field, or grouped bars of several, from a comparison view.

    ``long`` is a long view with ``id, field, unit, magnitude, source`` columns (see
    :func:`trnkb.compare.chip_values`); the fields must share a unit, which goes into the
    axis title (``label (unit)``, ``label`` defaulting to the field name).
    """
    fields = [fields] if isinstance(fields, str) else list(fields)
    sub = long[long["field"].isin(fields)]
    if sub.empty:
        raise ValueError(f"no values for {', '.join(fields)}")
    units = sorted(set(sub["unit"]))
    if len(units) != 1:
        raise ValueError(f"fields {fields} have different units {units}; chart them apart")
    axis = f"{label or fields[0]} ({units[0]})"
    name = "name" if "name" in sub else "id"
    order = list(dict.fromkeys(sub[name]))
    keep = [name, "field", "magnitude"] + (["vendor"] if "vendor" in sub else [])
    data = sub[keep].reset_index(drop=True)
    if len(fields) == 1:
        return bars(data, name, "magnitude", value_title=axis, title=title, sources=sub["source"],
                    note=note, sort=order, color="vendor" if "vendor" in data else None)
    shown = {f: _field_label(f) for f in fields}  # the legend reads "dense BF16"
    data = data.assign(figure=data["field"].map(shown))
    return grouped_bars(data, name, "magnitude", "figure", value_title=axis, title=title,
                        sources=sub["source"], note=note, log=log, sort=order,
                        groups=[shown[f] for f in fields if f in set(sub["field"])])


_FORMAT = re.compile(r"^(bf|fp|mxfp|nvfp|int|tf)\d+$")


def _field_label(field: str) -> str:
    """``dense_bf16`` -> ``dense BF16``, ``hbm_capacity`` -> ``HBM capacity``."""
    return " ".join(w.upper() if _FORMAT.match(w) or w in ("hbm", "tdp") else w
                    for w in field.split("_"))


def graph(nodes: pd.DataFrame, edges: pd.DataFrame, *, title: str, sources: Iterable[str],
          note: str = "") -> alt.LayerChart:
    """A network drawing: ``edges`` (``x, y, x2, y2, medium``) as lines coloured by medium,
    ``nodes`` (``name, kind, x, y``) as points shaped by kind, and, when ``nodes`` has a
    ``rack`` column, each rack's name above its panel. Axes are hidden: positions are a
    layout, not a measurement."""
    _check(nodes, "x", "y", "kind")
    _check(edges, "x", "y", "x2", "y2", "medium")
    axis: dict[str, Any] = {"axis": None, "scale": alt.Scale(zero=False)}
    lines_ = alt.Chart(edges).mark_rule(opacity=0.35).encode(
        x=alt.X("x:Q", **axis), y=alt.Y("y:Q", **axis), x2="x2:Q", y2="y2:Q",
        color=alt.Color("medium:N", title="link", scale=_medium_scale(edges["medium"])))
    points = alt.Chart(nodes).mark_point(filled=True, size=30).encode(
        x=alt.X("x:Q", **axis), y=alt.Y("y:Q", **axis),
        shape=alt.Shape("kind:N", title="node"), fill=alt.value("#333"))
    layers = [lines_, points]
    if "rack" in nodes and nodes["rack"].astype(str).str.len().gt(0).any():
        top = float(nodes["y"].max()) + 0.8
        racks = (nodes.groupby("rack", as_index=False)["x"].mean()
                 .assign(y=top, label=lambda d: "rack " + d["rack"].astype(str)))
        span = float(nodes["x"].max() - nodes["x"].min()) or 1.0
        gaps = racks["x"].sort_values().diff().dropna()
        if len(racks) > 1 and (gaps < 0.25 * span).any():  # racks interleaved: no labels
            racks = racks.iloc[0:0]
        layers.append(alt.Chart(racks).mark_text(fontSize=11, fontWeight="bold").encode(
            x=alt.X("x:Q", **axis), y=alt.Y("y:Q", **axis), text="label:N"))
    return _titled(_layer(*layers).properties(height=WIDTH), title, caption(sources, note))


def strip(df: pd.DataFrame, category: str, value: str, *, value_title: str, title: str,
          sources: Iterable[str], note: str = "", log: bool = False) -> alt.Chart:
    """One tick per row along ``value``, one row of ticks per ``category`` (e.g. the
    code points of number formats)."""
    _check(df, category, value)
    scale = alt.Scale(type="log") if log else alt.Undefined
    chart: alt.Chart = alt.Chart(df).mark_tick(thickness=1).encode(
        y=alt.Y(f"{category}:N", title=None, sort=None),
        x=alt.X(f"{value}:Q", title=value_title, scale=scale),
        color=alt.Color(f"{category}:N", legend=None),
    )
    return _titled(chart, title, caption(sources, note))
