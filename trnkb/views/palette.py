"""Colours of the site's charts: one per vendor, per link medium and per claim verdict.

A column named ``vendor`` is always drawn with :data:`VENDOR_COLORS`; a colour column whose
values are all claim verdicts with :data:`VERDICT_COLORS`; other categories with Vega's
palette. A missing colour value is drawn as :data:`NOT_STATED`, never as ``null``.
:mod:`trnkb.views.charts` re-exports these names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import altair as alt
import pandas as pd

# One colour per vendor on every chart of the site (a column named ``vendor`` is always
# drawn with this map); claim verdicts use VERDICT_COLORS; other categories Vega's palette.
VENDOR_COLORS = {"AWS": "#e8890c", "NVIDIA": "#5a9e1a", "AMD": "#c8102e", "Google": "#3b73d9",
                 "Intel": "#0068b5", "Microsoft": "#7f7f7f", "Meta": "#6e48c9", "Test": "#999999"}


# Link media in topology drawings (copper on the board, backplane, cables, torus links).
MEDIUM_COLORS = {"pcb": "#2ca02c", "backplane": "#ff7f0e", "aec": "#1f77b4", "torus": "#9467bd",
                 "torus (wrap-around)": "#c5b0d5", "aec (wrap-around)": "#aec7e8",
                 "nvlink": "#5a9e1a", "cable": "#1f77b4", "optics": "#d62728"}


# Claim verdicts: supported green, contradicted red, unverifiable grey (never red for "ok").
VERDICT_COLORS = {"supported": "#2e7d32", "contradicted": "#c62828", "unverifiable": "#9e9e9e"}


def _named_scale(values: Iterable[object], colors: dict[str, str],
                 order: list[str] | None = None) -> Any:  # alt.Scale or alt.Undefined
    """A colour scale from ``colors`` when every value has a colour there, else Vega's."""
    present = sorted(set(map(str, values)))
    if not present or not set(present) <= set(colors):
        return alt.Undefined
    domain = [g for g in order if g in present] if order else present
    return alt.Scale(domain=domain, range=[colors[m] for m in domain])


def _medium_scale(media: pd.Series) -> Any:  # alt.Scale or alt.Undefined
    return _named_scale(media, MEDIUM_COLORS)


def vendor_color(vendors: Iterable[str], title: str | None = None) -> alt.Color:
    """The colour encoding of a ``vendor`` column: each vendor in ``vendors`` gets its
    colour from :data:`VENDOR_COLORS` (grey for a vendor not in the map)."""
    present = list(dict.fromkeys(str(v) for v in vendors))
    domain = ([v for v in VENDOR_COLORS if v in present]
              + [v for v in present if v not in VENDOR_COLORS])
    return alt.Color("vendor:N", title=title,
                     scale=alt.Scale(domain=domain,
                                     range=[VENDOR_COLORS.get(v, "#888888") for v in domain]))


NOT_STATED = "not stated"


def _stated(df: pd.DataFrame, column: str | None) -> pd.DataFrame:
    """``df`` with missing values of a colour column named (a legend never reads "null")."""
    if column is None or not df[column].isna().any():
        return df
    return df.assign(**{column: df[column].astype(object).where(df[column].notna(), NOT_STATED)})


def _color(df: pd.DataFrame, column: str, **kw: Any) -> alt.Color:
    if column == "vendor":
        return vendor_color(df["vendor"].dropna(), kw.get("title"))
    return alt.Color(f"{column}:N", scale=_named_scale(df[column].dropna(), VERDICT_COLORS),
                     **kw)
