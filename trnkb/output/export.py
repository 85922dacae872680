"""Exports: plain Parquet / CSV / JSON tables with a Frictionless ``datapackage.json``.

Exported files need nothing of trnkb to read: quantity columns are plain floats in the
field's unit, named in the column header itself (``hbm_bandwidth (TB/s)``), in the
descriptor (``unit``) and, in Parquet, in each field's metadata (``unit``,
``description``). Beside a quantity column whose preferred values carry a qualifier, a
density (dense/sparse) or a direction, the wide table has ``<field> qualifier``,
``<field> density`` and ``<field> direction`` text columns, so MI455X's 20,000 TFLOP/s FP8
does not read as dense. The long ``facts`` table keeps every value with its unit exactly
as the source wrote it (``unit``), a machine-readable canonical unit (``canonical_unit``,
:func:`trnkb.units.format_unit`: ``Gbit/s``, never ``Gb / s``), its source, locator and
kind. A magnitude converted from the source's unit is written to 15 significant digits:
unit conversions stay exact (96 GiB = 103.079215104 GB) and binary float noise
(``103.07921510400001``) is gone; a magnitude already in the source's unit is the
source's number as typed, and ``facts.value`` always holds the figure as written.

``datapackage.json`` carries the trnkb version, the build date (``SOURCE_DATE_EPOCH`` when
set, for reproducible builds) and the commit. The ``claims`` resource holds every claim
explained (:func:`trnkb.audit.claims.explain.explain`) when the export is given the claims.

Writing is safe (:mod:`trnkb.output.exportfs`): everything is written in a temporary
directory beside ``out`` and put in place with one rename, so an interrupted export leaves
the old export or the new one, never a mix; nothing outside ``out`` is written through a
symlink; files trnkb did not write are left alone.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import subprocess
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from trnkb.kb import KnowledgeBase
from trnkb.output.exportfs import MARKER, ExportError, atomic_directory
from trnkb.spec.schema import TABLES
from trnkb.units import format_unit

SIG = 15  # significant digits of converted magnitudes: exact conversions, no float noise

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
            name = header(col, unit)
            out[name] = _clean(pd.to_numeric(pd.Series(mags, index=s.index),
                                             errors="coerce").astype("float64"))
            fields.append({"name": name, "type": "number", "unit": unit, "field": col,
                           "description": f"{f.description} Unit: {unit}."})
            for extra, text in _companions(kb, table.name, out["id"], col).items():
                out[f"{col} {extra}"] = text
                fields.append({"name": f"{col} {extra}", "type": "string", "field": col,
                               "description": f"The {extra} of {col} as its source states it "
                                              "(empty where none is stated)."})
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


def header(field: str, unit: str) -> str:
    """The column header of a quantity: its field and unit, ``hbm_bandwidth (TB/s)``."""
    return f"{field} ({unit})" if unit else field  # as kb.table(units="columns") names it


def _clean(s: pd.Series) -> pd.Series:
    """Magnitudes to :data:`SIG` significant digits (no binary float noise)."""
    return s.map(lambda x: x if x != x else float(f"{x:.{SIG}g}")).astype("float64")


def _companions(kb: KnowledgeBase, name_of_table: str, ids: pd.Series,
                field: str) -> dict[str, list[str]]:
    """qualifier / density / direction of the preferred value of ``field`` per row, for
    those of the three that any row states."""
    f = kb.facts
    pref = f[(f["table"] == name_of_table) & (f["field"] == field) & f["preferred"].astype(bool)]
    out: dict[str, list[str]] = {}
    for extra in ("qualifier", "density", "direction"):
        if extra not in pref:
            continue
        by_id = {str(i): str(v) for i, v in zip(pref["id"], pref[extra].fillna(""), strict=True)
                 if str(v) and str(v) != "nan"}
        if by_id:
            out[extra] = [by_id.get(str(i), "") for i in ids]
    return out


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
        "magnitude": _clean(facts["magnitude"].astype("float64")).where(
            pd.Series([u != d for u, d in zip(facts["canonical_unit"].astype(str), display,
                                              strict=True)], index=facts.index),
            facts["magnitude"].astype("float64")),
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


def _write(df: pd.DataFrame, path: Path, fmt: str,
           fields: Sequence[dict[str, Any]] = ()) -> None:
    if fmt == "parquet":
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        table = pa.Table.from_pandas(df, preserve_index=False)
        meta = {f["name"]: f for f in fields}
        schema = pa.schema([
            fld.with_metadata({k.encode(): str(meta[fld.name][k]).encode()
                               for k in ("unit", "description", "field")
                               if meta.get(fld.name, {}).get(k)})
            for fld in table.schema], metadata=table.schema.metadata)
        pq.write_table(table.cast(schema), path)
    elif fmt == "csv":
        csv_safe(df).to_csv(path, index=False)  # floats as repr(): full precision
    else:
        # not DataFrame.to_json: it rounds to 10 significant digits
        cols = list(df.columns)
        rows = [{c: _json_cell(v) for c, v in zip(cols, row, strict=True)}
                for row in df.itertuples(index=False, name=None)]
        path.write_text(json.dumps(rows, indent=1, ensure_ascii=False, allow_nan=False) + "\n",
                        encoding="utf-8")


_CLAIM_FIELDS = {
    "id": "Claim id (claims.html#claim-<id> on the site).",
    "kind": "statement, tool or measured.",
    "verdict": "supported, contradicted or unverifiable.",
    "statement": "What the source says (paraphrased).",
    "quantity": "What is compared.",
    "source": "Source id (see sources).",
    "locator": "Where in the source.",
    "formula": "What the knowledge base computes (the registry's compute expression).",
    "compare": "The comparison (==, ~, <, between...).",
    "claimed": "The source's figure with its unit.",
    "computed": "The knowledge base's figure in the same unit.",
    "relative_difference": "|computed - claimed| / |claimed|.",
    "tolerance": "Relative tolerance of a ~ comparison.",
    "why": "Why that tolerance.",
    "reason": "Why a claim is unverifiable (checked against the code and KB now).",
    "note": "The registry's note.",
    "inputs": "JSON list: each input with its value, source and locator.",
    "history": "JSON list: the verdict at each recorded release.",
}


def claim_records(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Every claim explained, one flat record each (inputs and history as JSON text)."""
    from trnkb.audit.claims import validate_claims
    from trnkb.audit.claims.explain import _history, explain, raw_entries

    raw, hist = raw_entries(kb), _history(kb)
    out = []
    for c in validate_claims(kb):
        e = explain(c, kb, raw, hist)
        out.append({k: (json.dumps(e[k], ensure_ascii=False) if k in ("inputs", "history")
                        else e[k]) for k in _CLAIM_FIELDS})
    return out


def _commit() -> str:
    if os.environ.get("TRNKB_COMMIT"):
        return os.environ["TRNKB_COMMIT"]
    repo = Path(__file__).resolve().parents[1]
    if not (repo / ".git").exists():
        return "unknown"
    try:
        r = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else "unknown"


def build_info() -> dict[str, str]:
    """``{version, date (UTC, ISO 8601), commit}`` of this build: ``SOURCE_DATE_EPOCH`` and
    ``TRNKB_COMMIT`` override the clock and the checkout's HEAD."""
    import trnkb

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (_dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch and epoch.isdigit()
            else _dt.datetime.now(_dt.UTC))
    return {"version": trnkb.__version__, "date": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "commit": _commit()}


def _build(kb: KnowledgeBase, fmt: str, tmp: Path,
           claims: list[dict[str, Any]] | None = None,
           seed_urls: dict[str, str | None] | None = None) -> list[str]:
    """Write every resource and the descriptor into ``tmp``; return the file names."""
    resources: list[dict[str, Any]] = []

    def add(name: str, df: pd.DataFrame, fields: list[dict[str, Any]], description: str,
            key: list[str] | None = None) -> None:
        path = tmp / f"{name}.{fmt}"
        if name != "facts":  # facts: cleaned where converted, see _plain_facts
            df = df.assign(**{c: _clean(df[c]) for c in df.columns if df[c].dtype == "float64"})
        _write(df, path, fmt, fields)
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
    seeds = dict(seed_urls or {})
    if seeds:  # a seed is cited by its file name; readers need its public address
        files = sources["url"]
        sources = sources.assign(
            url=[seeds.get(u) or u for u in files],
            seed_file=[u if u in seeds else "" for u in files])
    add("sources", sources, [{"name": c, "type": "string"} for c in sources.columns],
        "Bibliography: every source once (a seed document: its public URL where it has one, "
        "its file name in seed_file).", key=["id"])
    if claims is not None:
        cl = pd.DataFrame(claims, columns=list(_CLAIM_FIELDS))
        add("claims", cl, [{"name": c, "type": _frictionless_type(cl[c].dtype), "description": d}
                           for c, d in _CLAIM_FIELDS.items()],
            "Every published claim tested against the knowledge base, explained.", key=["id"])
    conflicts = kb.conflicts.copy()
    add("conflicts", conflicts,
        [{"name": c, "type": _frictionless_type(conflicts[c].dtype)} for c in conflicts.columns],
        "Values of one field from different sources that disagree beyond the field's tolerance.")
    info = build_info()
    descriptor = {
        "name": "trnkb",
        "title": "trnkb: AI-accelerator specifications with sources",
        "version": info["version"],
        "created": info["date"],
        "trnkb": info,
        "licenses": [{"name": "CC-BY-4.0", "path": "https://creativecommons.org/licenses/by/4.0/",
                      "title": "Creative Commons Attribution 4.0"}],
        "resources": resources,
    }
    (tmp / "datapackage.json").write_text(json.dumps(descriptor, indent=2) + "\n", encoding="utf-8")
    return [r["path"] for r in resources] + ["datapackage.json"]


def write_export(kb: KnowledgeBase, out: str | Path, fmt: str = "parquet",
                 claims: list[dict[str, Any]] | None = None,
                 seed_urls: dict[str, str | None] | None = None) -> ExportResult:
    """Write every table, the facts, sources and conflicts to ``out`` plus ``datapackage.json``.

    ``fmt`` is ``parquet``, ``csv`` or ``json``. ``claims`` (from :func:`claim_records`)
    adds the ``claims`` resource; ``seed_urls`` maps a seed file name to its public URL
    for ``sources``. Raises :class:`ExportError` (a
    ``ValueError``, one line) when ``out`` is a file, lies below a file or cannot be
    written. Returns the descriptor and exactly the files written (files already in
    ``out`` that this export did not write are neither counted nor touched).
    """
    if fmt not in FORMATS:
        raise ExportError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    out = Path(out)
    with atomic_directory(out) as staging:
        names = _build(kb, fmt, staging.path, claims, seed_urls)
        (staging.path / MARKER).write_text("Written by `trnkb export`; a later export may "
                                           "replace the files it wrote here.\n")
        staging.commit([MARKER, *names])
    final = staging.final
    return ExportResult(final / "datapackage.json", tuple(final / n for n in names))


def export(kb: KnowledgeBase, out: str | Path, fmt: str = "parquet") -> Path:
    """:func:`write_export` returning only the descriptor's path."""
    return write_export(kb, out, fmt).descriptor


def export_all(kb: KnowledgeBase, out: str | Path, with_claims: bool = True,
               seed_urls: dict[str, str | None] | None = None) -> list[ExportResult]:
    """Every format into ``out/<format>/`` (claims evaluated once) and a zip of all of them,
    ``out/zip/trnkb-data-<version>.zip``. Returns one result per format and the zip's."""
    claims = claim_records(kb) if with_claims else None
    out = Path(out)
    results = [write_export(kb, out / fmt, fmt, claims, seed_urls) for fmt in FORMATS]
    info = build_info()
    name = f"trnkb-data-{info['version']}.zip"
    with atomic_directory(out / "zip") as staging:
        with zipfile.ZipFile(staging.path / name, "w", zipfile.ZIP_DEFLATED) as z:
            for r in results:
                for p in (*r.written,):
                    z.write(p, f"{p.parent.name}/{p.name}")
        (staging.path / MARKER).write_text("Written by `trnkb export --format all`.\n")
        staging.commit([MARKER, name])
    results.append(ExportResult(staging.final / name, (staging.final / name,)))
    return results
