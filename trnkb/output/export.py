"""Exports: plain Parquet / CSV / JSON tables with a Frictionless ``datapackage.json``.

Exported files need nothing of trnkb to read: quantity columns are plain floats in the
field's unit (named in the descriptor, e.g. ``hbm_bandwidth`` in ``TB/s``), and the long
``facts`` table keeps every value with its unit exactly as the source wrote it (``unit``),
a machine-readable canonical unit (``canonical_unit``, :func:`trnkb.units.format_unit`:
``Gbit/s``, never ``Gb / s``), its source, locator and kind. Magnitudes keep full
precision in every format (JSON floats are written with Python's shortest round-trip
representation).

Writing is safe (:mod:`trnkb.output.exportfs`): everything is written in a temporary
directory beside ``out`` and put in place with one rename, so an interrupted export leaves
the old export or the new one, never a mix; nothing outside ``out`` is written through a
symlink; files trnkb did not write are left alone.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from trnkb.kb import KnowledgeBase
from trnkb.output.exportfs import MARKER, ExportError, atomic_directory
from trnkb.spec.schema import TABLES
from trnkb.units import format_unit

__all__ = ["FORMATS", "ExportError", "ExportResult", "csv_safe", "export", "write_export"]

FORMATS = ("parquet", "csv", "json")
MEDIATYPES = {"parquet": "application/vnd.apache.parquet", "csv": "text/csv",
              "json": "application/json"}

_FACT_FIELDS = {
    "table": "Table the value belongs to.",
    "id": "Row id.",
    "field": "Field name (see the table's schema).",
    "value": "The value with its unit as the source writes it (e.g. '144 GB'); full precision.",
    "magnitude": "The value in `display_unit` (empty for text).",
    "display_unit": "Unit of `magnitude` (the field's standard unit, canonical spelling).",
    "unit": "Unit exactly as written by the source (empty for counts and text).",
    "canonical_unit": "The value's unit in trnkb's canonical spelling, which pint reads back "
                      "unambiguously (bits are `bit`: `Gbit/s`).",
    "source": "Source id (see sources).",
    "locator": "Where in the source.",
    "kind": "reported, estimate, derived or measured.",
    "preferred": "True for the value the wide tables use.",
    "note": "Remarks.",
    "qualifier": "What the value is of, when it matters.",
    "density": "dense or sparse for FLOP/s figures (unstated when the source does not say).",
    "direction": "per-direction or bidirectional for bandwidths (unstated when not said).",
    "derivation": "For derived values: the formula and every input with its source.",
}


@dataclass(frozen=True)
class ExportResult:
    """The descriptor's path and every file this export wrote (nothing else in ``out``)."""

    descriptor: Path
    written: tuple[Path, ...]


def _number_text(m: Any) -> str:
    """A magnitude as text that reads back to the identical number (``repr`` of a float
    is its shortest round-trip form)."""
    return str(m) if isinstance(m, int) else repr(float(m))


def _plain_table(kb: KnowledgeBase, name: str) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """A wide table with plain columns, and its Frictionless field descriptors."""
    wide = kb.table(name)
    table = TABLES[name]
    out = pd.DataFrame({"id": wide["id"].astype(str)})
    fields: list[dict[str, Any]] = [
        {"name": "id", "type": "string", "description": "Unique lowercase kebab-case id.",
         "constraints": {"required": True, "unique": True}}]
    for col in wide.columns[1:]:
        f = table.field(col)
        assert f is not None  # every wide column is a field of its table
        s = wide[col]
        if f.kind == "quantity":
            unit = format_unit(f.unit)
            mags = s.pint.to(f.unit).pint.magnitude
            out[col] = pd.to_numeric(pd.Series(mags, index=s.index),
                                     errors="coerce").astype("float64")
            fields.append({"name": col, "type": "number", "unit": unit,
                           "description": f"{f.description} Unit: {unit}."})
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


def _unit_of(table: str, field: str) -> str:
    """The display unit of a fact's field (every fact's field is one of its table's)."""
    f = TABLES[table].field(field)
    assert f is not None
    return f.unit


def _plain_facts(kb: KnowledgeBase) -> pd.DataFrame:
    facts = kb.facts
    display = [format_unit(_unit_of(t, f)) if _unit_of(t, f) else ""
               for t, f in zip(facts["table"], facts["field"], strict=True)]
    written = [
        v if isinstance(v, str) else f"{_number_text(v.magnitude)} {u}".strip()
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
        "canonical_unit": facts["canonical_unit"].astype(str),
        "source": facts["source"].astype(str),
        "locator": facts["locator"].astype(str),
        "kind": facts["kind"].astype(str),
        "preferred": facts["preferred"].astype(bool),
        "note": facts["note"].astype(str),
        "qualifier": facts["qualifier"].astype(str),
        **{c: facts[c].fillna("").astype(str) if c in facts else [""] * len(facts)
           for c in ("density", "direction", "derivation")},
    })


def _frictionless_type(dtype: Any) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    return "string"


def _json_cell(x: Any) -> Any:
    if x is None or x is pd.NA:
        return None
    if isinstance(x, float):
        return None if math.isnan(x) else x  # json.dumps writes repr(): full precision
    if hasattr(x, "item"):  # numpy scalars
        return _json_cell(x.item())
    return x


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every text cell that a spreadsheet would run as a formula (one starting
    with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) prefixed with ``'``, so
    opening a CSV download in Excel or LibreOffice shows the text and runs nothing.
    Numbers are numbers, not text, and are left alone."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = [f"'{v}" if isinstance(v, str) and v.startswith(_FORMULA_START) else v
                        for v in out[col]]
    return out


def _write(df: pd.DataFrame, path: Path, fmt: str) -> None:
    if fmt == "parquet":
        df.to_parquet(path, index=False)
    elif fmt == "csv":
        csv_safe(df).to_csv(path, index=False)  # floats as repr(): full precision
    else:
        # not DataFrame.to_json: it rounds to 10 significant digits
        cols = list(df.columns)
        rows = [{c: _json_cell(v) for c, v in zip(cols, row, strict=True)}
                for row in df.itertuples(index=False, name=None)]
        path.write_text(json.dumps(rows, indent=1, ensure_ascii=False, allow_nan=False) + "\n",
                        encoding="utf-8")


def _build(kb: KnowledgeBase, fmt: str, tmp: Path) -> list[str]:
    """Write every resource and the descriptor into ``tmp``; return the file names."""
    resources: list[dict[str, Any]] = []

    def add(name: str, df: pd.DataFrame, fields: list[dict[str, Any]], description: str,
            key: list[str] | None = None) -> None:
        path = tmp / f"{name}.{fmt}"
        _write(df, path, fmt)
        schema: dict[str, Any] = {"fields": fields}
        if key:
            schema["primaryKey"] = key
        resources.append({
            "name": name, "type": "table", "path": path.name, "format": fmt,
            "mediatype": MEDIATYPES[fmt], "description": description, "schema": schema,
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
    (tmp / "datapackage.json").write_text(json.dumps(descriptor, indent=2) + "\n", encoding="utf-8")
    return [r["path"] for r in resources] + ["datapackage.json"]


def write_export(kb: KnowledgeBase, out: str | Path, fmt: str = "parquet") -> ExportResult:
    """Write every table, the facts, sources and conflicts to ``out`` plus ``datapackage.json``.

    ``fmt`` is ``parquet``, ``csv`` or ``json``. Raises :class:`ExportError` (a
    ``ValueError``, one line) when ``out`` is a file, lies below a file or cannot be
    written. Returns the descriptor and exactly the files written (files already in
    ``out`` that this export did not write are neither counted nor touched).
    """
    if fmt not in FORMATS:
        raise ExportError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    out = Path(out)
    with atomic_directory(out) as staging:
        names = _build(kb, fmt, staging.path)
        (staging.path / MARKER).write_text("Written by `trnkb export`; a later export may "
                                           "replace the files it wrote here.\n")
        staging.commit([MARKER, *names])
    final = staging.final
    return ExportResult(final / "datapackage.json", tuple(final / n for n in names))


def export(kb: KnowledgeBase, out: str | Path, fmt: str = "parquet") -> Path:
    """:func:`write_export` returning only the descriptor's path."""
    return write_export(kb, out, fmt).descriptor
