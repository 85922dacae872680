"""One table style for the notebooks and the site: :func:`table` renders a DataFrame as HTML.

Rules, applied per column from its name and dtype:

- the unit goes in the header (``HBM capacity (GB)``); pint columns become magnitudes;
- numbers get consistent significant figures and thousands separators
  (:func:`trnkb.units.format_number`); years stay years (``2025``, not ``2,025``);
- ratios (``share``, ``ratio``, ``relative_difference``...) show as percentages; a ratio
  that is infinite or undefined is shown as missing, never ``inf%``;
- a missing value is an em dash whose tooltip says no source gives it;
- no index column; ids are replaced by display names where a KB is given (the id stays
  in the tooltip), except the ``id`` column of a table that has its own ``name`` column;
  every source id links to its entry on the sources page;
- a table wider than :data:`MAX_COLUMNS` is split into parts of even width that repeat
  the key column, and one longer than ``max_rows`` is collapsed behind its summary (``<details>``).

Notebooks get this automatically: :func:`trnkb.views.nbsetup.setup` registers :func:`table` as
the HTML formatter of every DataFrame.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

import pandas as pd
import pint

from trnkb.units import format_number, format_unit

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

MAX_COLUMNS = 8
MISSING = '<span class="trnkb-missing" title="no source gives this">\u2014</span>'
UNDEFINED = '<span class="trnkb-missing" title="not defined (division by zero)">\u2014</span>'
SOURCES_PAGE = "../sources.html"  # from a notebook page; site pages pass "sources.html"

_PERCENT = re.compile(
    r"(^|_|\s)(share|ratio|relative_difference|relative difference|fraction|"
    r"utili[sz]ation|efficiency)($|_|\s)"
)
_SOURCE_COL = re.compile(r"(^|_)(sources?|preferred_source|other_source)$")
_ID_COLS = ("id", "chip", "fabric", "switch", "system", "rack", "package", "budget")
# Suffixes some views use for plain magnitude columns, e.g. ``capacity_GB``.
_SUFFIX_UNITS = {
    "TBps": "TB/s",
    "GBps": "GB/s",
    "Gbps": "Gbit/s",
    "Tbps": "Tbit/s",
    "GB": "GB",
    "TB": "TB",
    "GiB": "GiB",
    "MW": "MW",
    "kW": "kW",
    "W": "W",
    "Gbit": "Gbit",
    "bit": "bit",
    "TFLOPS": "TFLOP/s",
    "PFLOPS": "PFLOP/s",
    "ns": "ns",
    "us": "µs",
    "ms": "ms",
    "USD": "USD",
    "GHz": "GHz",
    "MHz": "MHz",
    "mm2": "mm²",
}
# What a bare ``UNIT_per_THING`` column measures (``USD_per_hour`` -> ``cost (USD/hour)``).
_QUANTITY_OF = {"USD": "cost", "W": "power", "kW": "power", "MW": "power"}
# Words shown as analysts write them in headers.
_WORDS = {
    "hbm": "HBM",
    "tdp": "TDP",
    "pue": "PUE",
    "it": "IT",
    "tor": "ToR",
    "tors": "ToRs",
    "lnc": "LNC",
    "nic": "NIC",
    "nics": "NICs",
    "cpu": "CPU",
    "cpus": "CPUs",
    "gpu": "GPU",
    "gpus": "GPUs",
    "flops": "FLOP/s",
    "bf16": "BF16",
    "fp8": "FP8",
    "fp4": "FP4",
    "fp32": "FP32",
    "tf32": "TF32",
    "mxfp8": "MXFP8",
    "mxfp6": "MXFP6",
    "mxfp4": "MXFP4",
    "int8": "INT8",
    "id": "id",
    "usd": "USD",
    "mw": "MW",
    "gbps": "Gbit/s",
    "efa": "EFA",
    "sram": "SRAM",
    "bidir": "bidirectional",
    "scaleup": "scale-up",
    "scaleout": "scale-out",
}


def _is_missing(v: object) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    if isinstance(v, pint.Quantity):
        return _is_missing(v.magnitude)
    return isinstance(v, str) and v.strip() in ("", "nan", "NaN", "<NA>", "None")


def header(column: object) -> str:
    """A column name as a reader sees it: ``hbm_bandwidth (TB/s)`` -> ``HBM bandwidth (TB/s)``,
    ``capacity_GB`` -> ``capacity (GB)``, ``relative_difference`` -> ``relative difference (%)``."""
    text = str(column)
    m = re.match(r"^(.*?)\s*[(\[]([^()\[\]]+)[)\]]$", text)
    name, unit = (m.group(1), m.group(2)) if m else (text, "")
    # The unit is a whole word: ``host_cpus_per_rack`` is a count, not microseconds per rack.
    per = re.match(r"^(?:(.*?)_)?(" + "|".join(_SUFFIX_UNITS) + r")_per_([A-Za-z]+)$", name)
    if not unit and per:
        name = per.group(1) or _QUANTITY_OF.get(per.group(2), "value")
        unit = f"{_SUFFIX_UNITS[per.group(2)]}/{_SUFFIX_UNITS.get(per.group(3), per.group(3))}"
    elif not unit and not re.search(r"_per_[A-Za-z0-9]+$", name):
        for suffix, u in _SUFFIX_UNITS.items():
            if name.endswith("_" + suffix) and len(name) > len(suffix) + 1:
                name, unit = name[: -len(suffix) - 1], u
                break
    if _PERCENT.search(name) and not unit:
        unit = "%"
    words = [_WORDS.get(w.lower(), w) for w in re.split(r"[_\s]+", name) if w]
    label = " ".join(words) or text
    return f"{label} ({unit})" if unit else label


def short_name(name: str) -> str:
    """A display name without its parenthetical: ``"NVIDIA B200 (HGX)"`` -> ``"NVIDIA B200"``."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", str(name)).strip() or str(name)


def names(kb: KnowledgeBase, short: bool = True) -> dict[str, str]:
    """Display name of every KB row that has one: ``{"trainium3": "AWS Trainium3", ...}``
    (without the parenthetical when ``short``; the full name is in the sources' tables)."""
    out: dict[str, str] = {}
    for t in kb.tables:
        df = kb.table(t)
        if "name" in df:
            out.update(
                {
                    i: short_name(n) if short else str(n)
                    for i, n in zip(df["id"], df["name"], strict=True)
                    if not _is_missing(n)
                }
            )
    return out


def labels(ids: Iterable[str], kb: KnowledgeBase) -> list[str]:
    """Chart labels for ``ids``: each row's display name, made unique by its id where two
    rows share a name (``"... backup switch trays (trn3-nl32x2-switched-pex90144-x8)"``)."""
    ids = [str(i) for i in ids]
    known = names(kb)
    first = {i: known.get(i, i) for i in dict.fromkeys(ids)}
    count: dict[str, int] = {}
    for n in first.values():
        count[n] = count.get(n, 0) + 1
    return [first[i] if count[first[i]] == 1 else f"{first[i]} ({i})" for i in ids]


#: a source id, optionally followed by a parenthesised remark (a date)
_SOURCE_ID = re.compile(r"([a-z0-9][a-z0-9._-]*[a-z0-9]|[a-z0-9])(\s+\(.*\))?")


def source_links(value: object, page: str = SOURCES_PAGE) -> str:
    """HTML for a source cell: each id (split on ``+``, ``;`` or ``,``) linked to its anchor;
    text that is not an id (``-``, ``none published``) stays text."""
    if _is_missing(value):
        return MISSING
    parts = re.split(r"(\s*[+;,]\s*)", str(value))
    out = []
    for p in parts:
        if not p.strip() or re.fullmatch(r"\s*[+;,]\s*", p):
            out.append(html.escape(p))
        elif m := _SOURCE_ID.fullmatch(p.strip()):
            sid, rest = m.group(1), m.group(2) or ""  # "id (2026-04-02)": the date stays text
            out.append(
                f'<a class="trnkb-source" href="{page}#src-{html.escape(sid)}">'
                f"{html.escape(sid)}</a>{html.escape(rest)}"
            )
        else:  # not a source id ("-", "none published"): text, never a dead link
            out.append(html.escape(p))
    return "".join(out)


def _is_year(column: str, s: pd.Series) -> bool:
    name = str(column).lower()
    return bool(re.search(r"(^|_)years?$", name)) and not name.endswith(("per_year", "_years"))


def fmt_cell(v: Any, *, percent: bool = False, year: bool = False, sig: int = 4) -> str:
    """One cell as HTML text (escaped); missing -> em dash with its tooltip."""
    if _is_missing(v):
        return MISSING
    if isinstance(v, pint.Quantity):
        num = fmt_cell(v.magnitude, sig=sig)
        return (
            num
            if v.dimensionless
            else f"{num} {html.escape(format_unit(cast(pint.Unit, v.units)))}"
        )
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        x = float(v)
        if not math.isfinite(x):
            return UNDEFINED
        if year:
            return str(int(round(x)))
        if percent:
            return format_number(100 * x, sig=3 if abs(x) >= 0.01 else 2) + "%"
        if float(x).is_integer() and abs(x) < 1e15:
            return f"{int(x):,}"
        return format_number(x, sig=sig)
    text = str(v)
    if re.fullmatch(r"https?://\S+", text):
        return f'<a href="{html.escape(text)}">{html.escape(text)}</a>'
    return html.escape(text)


class Table:
    """Rendered HTML of a table; displays itself in a notebook (``_repr_html_``)."""

    def __init__(self, html_text: str, plain: str):
        self.html = html_text
        self._plain = plain

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self._plain

    def __str__(self) -> str:
        return self.html


def _frame(df: pd.DataFrame) -> pd.DataFrame:
    """Drop a default RangeIndex; keep a meaningful index as leading column(s)."""
    if isinstance(df, pd.Series):
        df = df.to_frame()
    if isinstance(df.columns, pd.MultiIndex):
        df = df.copy()
        df.columns = [" ".join(str(x) for x in c if str(x)) for c in df.columns]
    trivial = isinstance(df.index, pd.RangeIndex) and df.index.name is None
    if not trivial:
        df = df.reset_index()
    df = df.copy()
    df.columns = [str(c) if str(c) != "index" else "" for c in df.columns]
    return df


def _columns_html(
    df: pd.DataFrame,
    cols: list[str],
    kb_names: Mapping[str, str],
    sources_page: str,
    percent: Iterable[str],
    sig: int,
) -> str:
    pct = set(percent)
    # An id column is shown as display names, unless the table has its own name column
    # (two "name" columns of the same text would hide the id a reader needs for the code).
    id_as_name = "name" not in df.columns

    def label(c: str) -> str:  # an id column shown as names is headed "name"
        if c in kb_names:
            return f'<th scope="col" title="{html.escape(c)}">{html.escape(kb_names[c])}</th>'
        named = (c == "id" and id_as_name and kb_names
                 and any(v in kb_names for v in df[c].dropna()))
        return f'<th scope="col">{"name" if named else html.escape(header(c))}</th>'

    head = "".join(label(c) for c in cols)
    numeric = {c: any(isinstance(x, (int, float)) and not isinstance(x, bool)
                      and not _is_missing(x) for x in df[c]) for c in cols}
    body = []
    for _, row in df[cols].iterrows():
        cells = []
        for c in cols:
            v = row[c]
            if c == "" and isinstance(v, str):  # a wide view's row labels are field names
                cells.append(f'<th scope="row">{html.escape(header(v))}</th>')
            elif _SOURCE_COL.search(c.lower()):
                cells.append(f"<td>{source_links(v, sources_page)}</td>")
            elif (c.lower() in _ID_COLS and isinstance(v, str) and v in kb_names
                  and (c != "id" or id_as_name)):
                cells.append(f'<td title="{html.escape(v)}">{html.escape(kb_names[v])}</td>')
            else:
                is_pct = c in pct or (bool(_PERCENT.search(c.lower())) and "(" not in c)
                # a dash in a column of numbers is aligned with the numbers
                is_num = (numeric[c] and _is_missing(v)) or (
                    isinstance(v, (int, float)) and not isinstance(v, bool) and not _is_missing(v)
                )
                text = fmt_cell(v, percent=is_pct, year=_is_year(c, df[c]), sig=sig)
                cells.append(f'<td class="num">{text}</td>' if is_num else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table class="trnkb-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def table(
    df: pd.DataFrame,
    *,
    kb: KnowledgeBase | None = None,
    summary: str | None = None,
    max_rows: int = 20,
    max_columns: int = MAX_COLUMNS,
    sources_page: str = SOURCES_PAGE,
    percent: Iterable[str] = (),
    sig: int = 4,
    caption: str | None = None,
) -> Table:
    """Render ``df`` in the site's one table style (see the module docstring).

    Parameters
    ----------
    kb : KnowledgeBase, optional
        Replaces ids in id columns (``id``, ``chip``...) by display names.
    summary : str, optional
        Text of the ``<details>`` summary for a long table (default ``"N rows"``).
    max_rows, max_columns : int
        Longer tables are collapsed; wider ones are split (the first column repeats).
    sources_page : str
        Relative URL of the sources page from where the table is shown.
    percent : iterable of str
        Extra columns holding ratios (shown as %).
    """
    df = _frame(df)
    kb_names = names(kb) if kb is not None else {}
    cols = list(df.columns)
    if len(cols) > max_columns and len(df) <= 3 and len(df) * 2 < len(cols):
        df = df.set_index(cols[0]).T.reset_index().rename(columns={"index": ""})
        df.columns = [str(c) for c in df.columns]
        cols = list(df.columns)
    groups = [cols]
    if len(cols) > max_columns:
        key, rest = cols[0], cols[1:]
        # parts of even width: 8 chips in at most 7 columns are 4 + 4, not 7 + 1
        n_parts = math.ceil(len(rest) / (max_columns - 1))
        step = math.ceil(len(rest) / n_parts)
        groups = [[key] + rest[i : i + step] for i in range(0, len(rest), step)]
    parts = [_columns_html(df, g, kb_names, sources_page, percent, sig) for g in groups]
    body = "".join(f'<div class="trnkb-table-wrap">{p}</div>' for p in parts)
    if caption:
        body = f'<p class="trnkb-caption">{html.escape(caption)}</p>' + body
    n = len(df)
    if n > max_rows:
        label = summary or f"{n} rows"
        body = (
            f'<details class="trnkb-details"><summary>{html.escape(label)} '
            f"(click to show)</summary>{body}</details>"
        )
    plain = df.to_string(index=False, na_rep="\u2014", max_rows=max_rows)
    return Table(f'<div class="trnkb-tables">{body}</div>', plain)
