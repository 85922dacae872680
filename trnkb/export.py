"""Exports: plain Parquet / CSV / JSON tables with a Frictionless ``datapackage.json``.

Exported files need nothing of trnkb to read: quantity columns are plain floats in the
field's unit (named in the descriptor, e.g. ``hbm_bandwidth`` in ``TB/s``), and the long
``facts`` table keeps every value as written with its source, locator and kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from trnkb.kb import KnowledgeBase
from trnkb.schema import TABLES

FORMATS = ("parquet", "csv", "json")

_FACT_FIELDS = {
    "table": "Table the value belongs to.",
    "id": "Row id.",
    "field": "Field name (see the table's schema).",
    "value": "The value as the source writes it, with its unit (e.g. '144 GB').",
    "magnitude": "The value in `display_unit` (empty for text).",
    "display_unit": "Unit of `magnitude` (the field's standard unit).",
    "unit": "Unit as written by the source.",
    "source": "Source id (see sources).",
    "locator": "Where in the source.",
    "kind": "reported, estimate or derived.",
    "preferred": "True for the value the wide tables use.",
    "note": "Remarks.",
    "qualifier": "What the value is of, when it matters.",
}


def _plain_table(kb: KnowledgeBase, name: str) -> tuple[pd.DataFrame, list[dict]]:
    """A wide table with plain columns, and its Frictionless field descriptors."""
    wide = kb.table(name)
    table = TABLES[name]
    out = pd.DataFrame({"id": wide["id"].astype(str)})
    fields = [{"name": "id", "type": "string", "description": "Unique lowercase kebab-case id.",
               "constraints": {"required": True, "unique": True}}]
    for col in wide.columns[1:]:
        f = table.field(col)
        s = wide[col]
        if f.kind == "quantity":
            out[col] = s.pint.to(f.unit).pint.magnitude.astype("float64")
            fields.append({"name": col, "type": "number", "unit": f.unit,
                           "description": f"{f.description} Unit: {f.unit}."})
        elif f.kind == "count":
            integral = str(s.dtype) == "Int64"
            out[col] = s.astype("Int64" if integral else "float64")
            fields.append({"name": col, "type": "integer" if integral else "number",
                           "description": f.description})
        else:
            out[col] = s.astype(object).where(s.notna(), None)
            desc = f.description + (f" References {f.ref}.id." if f.kind == "ref" else "")
            fields.append({"name": col, "type": "string", "description": desc})
    return out, fields


def _plain_facts(kb: KnowledgeBase) -> pd.DataFrame:
    facts = kb.facts
    display = [TABLES[t].field(f).unit for t, f in zip(facts["table"], facts["field"], strict=True)]
    written = [
        v if isinstance(v, str) else (f"{v.magnitude:g} {u}".strip())
        for v, u in zip(facts["value"], facts["unit"], strict=True)
    ]
    return pd.DataFrame({
        "table": facts["table"].astype(str),
        "id": facts["id"].astype(str),
        "field": facts["field"].astype(str),
        "value": written,
        "magnitude": facts["magnitude"].astype("float64"),
        "display_unit": display,
        "unit": facts["unit"].astype(str),
        "source": facts["source"].astype(str),
        "locator": facts["locator"].astype(str),
        "kind": facts["kind"].astype(str),
        "preferred": facts["preferred"].astype(bool),
        "note": facts["note"].astype(str),
        "qualifier": facts["qualifier"].astype(str),
    })


def _frictionless_type(dtype) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    return "string"


def _write(df: pd.DataFrame, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        df.to_parquet(path, index=False)
    elif fmt == "csv":
        df.to_csv(path, index=False)
    else:
        path.write_text(df.to_json(orient="records", indent=1) + "\n", encoding="utf-8")


def export(kb: KnowledgeBase, out: str | Path, fmt: str = "parquet") -> Path:
    """Write every table, the facts, sources and conflicts to ``out`` plus ``datapackage.json``.

    Returns the descriptor's path. ``fmt`` is ``parquet``, ``csv`` or ``json``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    resources = []

    def add(name: str, df: pd.DataFrame, fields: list[dict], description: str, key=None):
        path = out / f"{name}.{fmt}"
        _write(df, path, fmt)
        schema = {"fields": fields}
        if key:
            schema["primaryKey"] = key
        resources.append({
            "name": name, "path": path.name, "format": fmt,
            "mediatype": {"parquet": "application/vnd.apache.parquet", "csv": "text/csv",
                          "json": "application/json"}[fmt],
            "description": description, "schema": schema,
        })

    for name in kb.tables:
        df, fields = _plain_table(kb, name)
        add(name, df, fields, TABLES[name].description, key=["id"])
    facts = _plain_facts(kb)
    add("facts", facts, [{"name": c, "type": _frictionless_type(facts[c].dtype), "description": d}
                         for c, d in _FACT_FIELDS.items()],
        "Every value with its provenance (long form).")
    sources = kb.sources.astype(str)
    add("sources", sources, [{"name": c, "type": "string"} for c in sources.columns],
        "Bibliography: every source once.", key=["id"])
    conflicts = kb.conflicts.copy()
    add("conflicts", conflicts,
        [{"name": c, "type": _frictionless_type(conflicts[c].dtype)} for c in conflicts.columns],
        "Values of one field from different sources that disagree beyond the field's tolerance.")
    descriptor = {
        "name": "trnkb",
        "title": "trnkb: AI-accelerator specifications with sources",
        "licenses": [{"name": "CC-BY-4.0", "path": "https://creativecommons.org/licenses/by/4.0/",
                      "title": "Creative Commons Attribution 4.0"}],
        "resources": resources,
    }
    path = out / "datapackage.json"
    path.write_text(json.dumps(descriptor, indent=2) + "\n", encoding="utf-8")
    return path
