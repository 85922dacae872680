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

from trnkb.compare.chips import accelerators
from trnkb.kb import KnowledgeBase
from trnkb.site.explorer_derived import DERIVED_COLUMNS, derived_cells
from trnkb.site.memory import EXPLANATION
from trnkb.spec.schema import TABLES
from trnkb.views.display import short_name

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
# Default unit of the FLOP/s toggle per view: a domain's figures are thousands of TFLOP/s.
DEFAULT_FLOPS = {"chips": "TFLOP/s", "domains": "PFLOP/s"}
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

    Each cell is ``{v: magnitude in u, t: text, u: unit, s: source id(s), k: kind,
    l: locator, q: qualifier (only when the source qualifies the figure), c: [conflicting
    values]}`` or null when no source gives it. Derived cells (columns with
    ``derived: true``) add ``f`` (formula), ``in`` (inputs: field, value, source, kind) and,
    for physical HBM, ``lab`` (the vendor's label). A chip row's ``cls`` is
    ``accelerator`` or ``CPU`` (a rack's host CPU); a row without a year is kept and
    filtered as ``no year``.
    """
    names = {i: short_name(n) for i, n in zip(kb.table("chips")["id"], kb.table("chips")["name"],
                                              strict=True)}

    def unit(table: str, f: str) -> str:
        spec = TABLES[table].field(f)
        return (spec.unit if spec else "") or ""

    def cols(table: str, columns: Sequence[Column]) -> list[dict[str, Any]]:
        return [{"field": f, "label": label, "family": fam, "unit": unit(table, f)}
                for f, label, fam in columns]
    chips = _rows(kb, "chips", CHIP_COLUMNS, names)
    derived = derived_cells(kb)
    acc = set(accelerators(kb))
    for r in chips:
        r["cls"] = "accelerator" if r["id"] in acc else "CPU"
        r["cells"].update(derived.get(r["id"], {}))
    chip_cols = cols("chips", CHIP_COLUMNS)
    at = next(i for i, c in enumerate(chip_cols) if c["field"] == "hbm_capacity") + 1
    chip_cols.insert(at, {"field": "hbm_physical", "label": "HBM physical", "family": None,
                          "unit": "GiB", "derived": True})
    chip_cols += [{"field": f, "label": label, "family": None, "unit": u, "derived": True}
                  for f, label, u in DERIVED_COLUMNS if f != "hbm_physical"]
    return {
        "chips": {"columns": chip_cols, "rows": chips, "flops": DEFAULT_FLOPS["chips"]},
        "domains": {"columns": cols("racks", DOMAIN_COLUMNS),
                    "rows": _rows(kb, "racks", DOMAIN_COLUMNS, names),
                    "flops": DEFAULT_FLOPS["domains"]},
        "memory_note": EXPLANATION,
    }


def explorer_page(kb: KnowledgeBase) -> str:
    """MyST page: the explorer's controls, its data as JSON and its script."""
    data = json.dumps(explorer_data(kb), separators=(",", ":"), allow_nan=False)
    # spec text can never open or close an element inside the script: escape < > & in JSON
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    controls = (
        '<div id="trnkb-explorer" class="trnkb-explorer">'
        '<div class="ex-controls" role="group" aria-label="filters and units">'
        '<label>View <select id="ex-view"><option value="chips">chips</option>'
        '<option value="domains">scale-up domains</option></select></label> '
        '<label>Kind <select id="ex-cls"><option value="accelerator">accelerators</option>'
        '<option value="CPU">CPUs</option><option value="">accelerators and CPUs</option>'
        "</select></label> "
        '<label>Vendor <select id="ex-vendor"><option value="">all</option></select></label> '
        '<label>Status <select id="ex-status"><option value="">all</option></select></label> '
        '<label>Year <select id="ex-year"><option value="">all</option></select></label> '
        '<label>Search <input id="ex-q" type="search" placeholder="name, id, process"></label> '
        '<label>Compute <select id="ex-flops"><option>TFLOP/s</option><option>PFLOP/s</option>'
        "<option>EFLOP/s</option></select></label> "
        '<label>Memory <select id="ex-mem"><option>GB</option><option>GiB</option>'
        "</select></label> "
        '<details id="ex-columns" class="ex-columns"><summary>Columns</summary>'
        '<div id="ex-colboxes" role="group" aria-label="columns shown"></div></details> '
        '<button type="button" id="ex-download">Download this view (CSV)</button> '
        '<a id="ex-permalink" href="#">permalink to this view</a></div>'
        '<p id="ex-count" class="trnkb-caption" aria-live="polite"></p>'
        '<p class="trnkb-caption ex-legend">Marks: <span class="ex-k-estimate">12'
        '<sup class="ex-mark">est</sup></span> an estimate, <span class="ex-k-derived">12'
        '<sup class="ex-mark">calc</sup></span> computed from other values (formula on click), '
        '<span class="ex-q-mark">12<sup class="ex-mark">q</sup></span> qualified by its source '
        "(e.g. dense or sparse not stated), \u26a0 sources disagree; unmarked values are "
        "reported by the source. Keyboard: Tab to a column header and press Enter to sort; "
        "in the table, arrow keys move between cells and Enter shows a cell's source.</p>"
        '<div class="trnkb-table-wrap ex-wrap"><table id="ex-table" class="trnkb-table">'
        "</table></div>"
        '<div id="ex-detail" class="ex-detail" aria-live="polite">Click a cell (or press Enter '
        "on it) to see its source, kind, formula and any conflict.</div>"
        '<p id="ex-memnote" class="trnkb-caption"></p>'
        '<h2 id="ex-scatter-title">Scatter</h2>'
        '<div class="ex-controls" role="group" aria-label="scatter axes">'
        '<label>x <select id="ex-x"></select></label> '
        '<label>y <select id="ex-y"></select></label> '
        '<label><input type="checkbox" id="ex-log"> log axes</label></div>'
        '<div id="ex-scatter" class="ex-scatter"></div></div>')
    return ("# Explorer\n\nEvery chip and every scale-up domain in the knowledge base with its "
            "headline figures and a few computed ones (BF16 per watt, bytes per FLOP, the "
            "roofline ridge point, physical HBM, cloud price per PFLOP-hour where priced). "
            "Sort by a column header, filter by kind, vendor, status, year or text, choose "
            "columns and units, and click a cell for its source, kind, formula and any "
            "conflicting value. The scatter plots any two numeric columns of the rows shown, "
            "Trainium3 highlighted. The address bar keeps the view: copy it to share. "
            "\"Download this view\" saves the rows and columns shown as CSV, units in the "
            "headers. Everything runs in this page, offline. The whole data set is on the "
            "[downloads](downloads.md) page.\n\n"
            + controls.replace("\n", " ") + "\n\n"
            + f'<script type="application/json" id="ex-data">{data}</script>\n\n'
            '<script src="_static/explorer.js"></script>\n')


def downloads_page(kb: KnowledgeBase,
                   formats: Sequence[str] = ("csv", "parquet", "json")) -> str:
    """MyST page linking every exported file (written into ``data/<format>/`` and
    ``data/zip/`` after the build by :func:`trnkb.export.export_all`)."""
    from trnkb.output import export

    info = export.build_info()
    names = list(kb.tables) + ["facts", "sources", "conflicts", "claims"]
    rows = []
    for n in names:
        links = " · ".join(f'<a href="data/{f}/{html.escape(n)}.{f}">{f.upper()}</a>'
                           for f in formats)
        desc = TABLES[n].description if n in TABLES else {
            "facts": "Every value with its provenance (long form).",
            "sources": "Bibliography: every source once (seed documents with their public "
                       "URL where they have one).",
            "conflicts": "Values of one field that disagree between sources.",
            "claims": "Every published claim with its verdict, formula, inputs (values and "
                      "sources), tolerance, note and verdict history."}[n]
        rows.append(f"<tr><td><code>{html.escape(n)}</code></td><td>{html.escape(desc)}</td>"
                    f"<td>{links}</td></tr>")
    pkgs = " · ".join(f'<a href="data/{f}/datapackage.json">datapackage.json ({f.upper()})</a>'
                      for f in formats)
    zipname = f"trnkb-data-{info['version']}.zip"
    table = ('<div class="trnkb-tables"><div class="trnkb-table-wrap"><table class="trnkb-table">'
             '<thead><tr><th scope="col">table</th><th scope="col">what it holds</th>'
             '<th scope="col">download</th></tr></thead><tbody>' + "".join(rows)
             + "</tbody></table></div></div>")
    return ("# Data downloads\n\nThe knowledge base as files, written by "
            "`trnkb.output.export` when this site was built "
            f"(trnkb {info['version']}, {info['date']}, commit "
            f"`{info['commit'][:12]}`; the same three facts are in each `datapackage.json`): "
            "one file per table plus the long `facts` table (every value with its source, "
            "locator and kind), the bibliography, the conflicts and the claims. Quantity "
            "columns carry their unit in the header (`hbm_bandwidth (TB/s)`), in the "
            "descriptor and, in Parquet, in each field's metadata; a figure its source "
            "qualifies (dense or sparse not stated, usable or physical, per direction) has "
            "the qualifier in the column beside it. `trnkb export --format all` writes the "
            "same files. Each format comes with a Frictionless descriptor:\n\n"
            f'<p class="trnkb-downloads">{pkgs} · <a href="data/zip/{zipname}">everything '
            f"as one zip ({html.escape(zipname)})</a></p>\n\n" + table + "\n")
