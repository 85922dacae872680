"""The explorer page: every chip and every scale-up domain, sortable and filterable offline.

:func:`explorer_data` collects the headline fields of the ``chips`` and ``racks`` tables
with the provenance of every cell (source, kind, locator) and the conflicts the KB
records for it; :func:`explorer_page` embeds that JSON in a MyST page next to the
script ``_static/explorer.js`` (a few KB, no library, no network). The script sorts,
filters (vendor, status, year, text), toggles units (TFLOP/s or PFLOP/s, GB or GiB),
shows provenance on hover and click, and keeps the view in the URL fragment.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from typing import Any, SupportsFloat, cast

from trnkb.kb import KnowledgeBase
from trnkb.spec.schema import TABLES
from trnkb.views.display import short_name

__all__ = ["CHIP_COLUMNS", "DOMAIN_COLUMNS", "downloads_page", "explorer_data", "explorer_page"]

Column = tuple[str, str, str | None]
"""(field, header, unit family)."""
Conflicts = dict[tuple[str, str], list[dict[str, Any]]]

# (field, header, unit family): the family says which unit toggle applies.
CHIP_COLUMNS: tuple[Column, ...] = (
    ("vendor", "vendor", None), ("status", "status", None), ("year", "year", "year"),
    ("process_node", "process", None),
    ("dense_bf16", "dense BF16", "flops"), ("dense_fp8", "dense FP8", "flops"),
    ("dense_mxfp4", "dense MXFP4", "flops"), ("dense_fp4", "dense FP4", "flops"),
    ("hbm_capacity", "HBM capacity", "bytes"), ("hbm_bandwidth", "HBM bandwidth", None),
    ("scaleup_bandwidth", "scale-up bandwidth", None),
    ("scaleout_bandwidth", "scale-out bandwidth", None), ("tdp", "TDP", None),
)
DOMAIN_COLUMNS: tuple[Column, ...] = (
    ("vendor", "vendor", None), ("status", "status", None), ("chip", "chip", None),
    ("topology", "topology", None), ("domain_size", "chips per domain", None),
    ("chips_per_rack", "chips per rack", None), ("cooling", "cooling", None),
    ("domain_bf16", "domain BF16", "flops"), ("domain_fp8", "domain FP8", "flops"),
    ("domain_hbm_capacity", "domain HBM", "bytes"),
    ("domain_hbm_bandwidth", "domain HBM bandwidth", None), ("rack_power", "rack power", None),
)


def _conflicts(kb: KnowledgeBase) -> Conflicts:
    out: Conflicts = {}
    for c in kb.conflicts.itertuples(index=False):
        rd = c.relative_difference
        key = cast(tuple[str, str], (c.id, c.field))
        nan = rd is None or (isinstance(rd, float) and math.isnan(rd))
        out.setdefault(key, []).append({
            "other": str(c.other), "source": str(c.other_source), "type": str(c.type),
            "diff": None if nan else float(cast(SupportsFloat, rd))})
    return out


def _cell(kb: KnowledgeBase, table: str, row: str, field: str, conflicts: Conflicts,
          label: object = None) -> dict[str, Any] | None:
    v = kb.get(row, field)
    if v is None:  # a plain label (vendor, status) has no provenance of its own
        if (label is None or hasattr(label, "magnitude") or not isinstance(label, str)
                or label in ("", "<NA>")):
            return None
        return {"v": None, "t": str(label), "u": "", "s": "", "k": "label", "l": ""}
    spec = TABLES[table].field(field)
    unit = spec.unit if spec else ""
    if hasattr(v, "magnitude"):
        q = v.to(unit) if unit else v
        value, text = float(q.magnitude), None
    else:
        value, text = None, str(v)
    p = kb.provenance(row, field)
    out: dict[str, Any] = {"v": value, "t": text, "u": unit or "", "s": str(p["source"]),
                           "k": str(p["kind"]), "l": str(p.get("locator", "") or "")}
    if p.get("qualifier"):  # e.g. MI455X FP8: "dense or sparse not stated"
        out["q"] = str(p["qualifier"])
    if (row, field) in conflicts:
        out["c"] = conflicts[(row, field)]
    return out


def _rows(kb: KnowledgeBase, table: str, columns: Sequence[Column],
          names: dict[str, str]) -> list[dict[str, Any]]:
    conflicts = _conflicts(kb)
    rows = []
    wide = kb.table(table)
    for _, r in wide.iterrows():
        rid, name = r["id"], r["name"]
        cells = {f: _cell(kb, table, rid, f, conflicts, r.get(f)) for f, _, _ in columns}
        chip = cells.get("chip")
        if table == "racks" and chip and chip["t"] in names:
            chip["t"] = names[chip["t"]]
        rows.append({"id": rid, "name": short_name(str(name)), "full": str(name), "cells": cells})
    return rows


def explorer_data(kb: KnowledgeBase) -> dict[str, Any]:
    """Columns and rows of both views (``chips``, ``domains``), JSON-ready.

    Each cell is ``{v: magnitude in u, t: text, u: unit, s: source id, k: kind,
    l: locator, q: qualifier (only when the source qualifies the figure), c: [conflicting
    values]}`` or null when no source gives it.
    """
    names = {i: short_name(n) for i, n in zip(kb.table("chips")["id"], kb.table("chips")["name"],
                                              strict=True)}

    def unit(table: str, f: str) -> str:
        spec = TABLES[table].field(f)
        return (spec.unit if spec else "") or ""

    def cols(table: str, columns: Sequence[Column]) -> list[dict[str, Any]]:
        return [{"field": f, "label": label, "family": fam, "unit": unit(table, f)}
                for f, label, fam in columns]
    return {
        "chips": {"columns": cols("chips", CHIP_COLUMNS),
                  "rows": _rows(kb, "chips", CHIP_COLUMNS, names)},
        "domains": {"columns": cols("racks", DOMAIN_COLUMNS),
                    "rows": _rows(kb, "racks", DOMAIN_COLUMNS, names)},
    }


def explorer_page(kb: KnowledgeBase) -> str:
    """MyST page: the explorer's controls, its data as JSON and its script."""
    data = json.dumps(explorer_data(kb), separators=(",", ":"), allow_nan=False)
    # spec text can never open or close an element inside the script: escape < > & in JSON
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    controls = (
        '<div id="trnkb-explorer" class="trnkb-explorer">'
        '<div class="ex-controls">'
        '<label>View <select id="ex-view"><option value="chips">chips</option>'
        '<option value="domains">scale-up domains</option></select></label> '
        '<label>Vendor <select id="ex-vendor"><option value="">all</option></select></label> '
        '<label>Status <select id="ex-status"><option value="">all</option></select></label> '
        '<label>Year <select id="ex-year"><option value="">all</option></select></label> '
        '<label>Search <input id="ex-q" type="search" placeholder="name, id, process"></label> '
        '<label>Compute <select id="ex-flops"><option>TFLOP/s</option><option>PFLOP/s</option>'
        "</select></label> "
        '<label>Memory <select id="ex-mem"><option>GB</option><option>GiB</option>'
        '</select></label> '
        '<a id="ex-permalink" href="#">permalink to this view</a></div>'
        '<p id="ex-count" class="trnkb-caption"></p>'
        '<div class="trnkb-table-wrap"><table id="ex-table" class="trnkb-table"></table></div>'
        '<div id="ex-detail" class="ex-detail" aria-live="polite">Click a cell to see its source, '
        "kind and any conflict.</div></div>")
    return ("# Explorer\n\nEvery chip and every scale-up domain in the knowledge base with its "
            "headline figures. Click a column header to sort, filter by vendor, status, year "
            "or text, switch units, and hover or click a cell for its source, kind and any "
            "conflicting value (⚠ marks a conflict). The address bar keeps the view: copy it "
            "to share a filtered table. Everything runs in this page, offline. The same data "
            "is on the [downloads](downloads.md) page.\n\n"
            + controls.replace("\n", " ") + "\n\n"
            + f'<script type="application/json" id="ex-data">{data}</script>\n\n'
            '<script src="_static/explorer.js"></script>\n')


def downloads_page(kb: KnowledgeBase,
                   formats: Sequence[str] = ("csv", "parquet", "json")) -> str:
    """MyST page linking every exported file (written into ``data/<format>/`` after the build)."""
    names = list(kb.tables) + ["facts", "sources", "conflicts"]
    rows = []
    for n in names:
        links = " · ".join(f'<a href="data/{f}/{html.escape(n)}.{f}">{f.upper()}</a>'
                           for f in formats)
        desc = TABLES[n].description if n in TABLES else {
            "facts": "Every value with its provenance (long form).",
            "sources": "Bibliography: every source once.",
            "conflicts": "Values of one field that disagree between sources."}[n]
        rows.append(f"<tr><td><code>{html.escape(n)}</code></td><td>{html.escape(desc)}</td>"
                    f"<td>{links}</td></tr>")
    pkgs = " · ".join(f'<a href="data/{f}/datapackage.json">datapackage.json ({f.upper()})</a>'
                      for f in formats)
    table = ('<div class="trnkb-tables"><div class="trnkb-table-wrap"><table class="trnkb-table">'
             '<thead><tr><th scope="col">table</th><th scope="col">what it holds</th>'
             '<th scope="col">download</th></tr></thead><tbody>' + "".join(rows)
             + "</tbody></table></div></div>")
    return ("# Data downloads\n\nThe knowledge base as files, written by "
            "`trnkb.output.export` when this site was built: one file per table plus the "
            "long `facts` table (every value with its source, locator and kind), the "
            "bibliography and the conflicts. Each format comes with a Frictionless descriptor:\n\n"
            f'<p class="trnkb-downloads">{pkgs}</p>\n\n' + table + "\n")
