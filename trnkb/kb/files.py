"""Reading spec files: ``sources.yaml`` -> a sources frame, ``<table>.yaml`` -> labels + facts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from trnkb.kb.values import Ctx, parse_field
from trnkb.spec.cache import read_yaml_cached as read_yaml
from trnkb.spec.schema import ID_PATTERN, SOURCE_FIELDS, SOURCE_KINDS, Table, date_problem
from trnkb.spec.specfile import LineDict, display_path, item_line, show

__all__ = ["SEED_PATTERN", "parse_sources", "parse_table"]

SEED_PATTERN = re.compile(r"^\d{3}_[0-9a-f]{16}\.txt$")


def parse_sources(path: Path, errors: list[str]) -> pd.DataFrame:
    """``sources.yaml`` as a frame with the columns of ``SOURCE_FIELDS`` (all text)."""
    ctx = Ctx(display_path(path), errors)
    data = read_yaml(path)
    rows: list[dict[str, str]] = []
    seen: dict[str, int] = {}
    if not isinstance(data, list):
        ctx.err(1, "(file)", "expected a list of sources")
        return pd.DataFrame(columns=SOURCE_FIELDS)
    for i, item in enumerate(data):
        if not isinstance(item, LineDict):
            ctx.err(item_line(data, i), "(source)", f"expected a mapping, got {show(item)}")
            continue
        sid = item.get("id")
        where = f"{sid}" if sid else "(source)"
        for key in SOURCE_FIELDS:
            if key not in item or item[key] in (None, ""):
                ctx.err(item.line, f"{where}.{key}", "missing")
        for key in item:
            if key not in SOURCE_FIELDS:
                ctx.err(item.key_lines[key], f"{where}.{key}", "unknown key")
        if not isinstance(sid, str) or not re.match(ID_PATTERN, sid):
            ctx.err(item.line, "id", f"source id {sid!r} is not lowercase kebab-case")
            continue
        if sid in seen:
            ctx.err(item.line, f"{sid}.id", f"duplicate source id (first at line {seen[sid]})")
        seen[sid] = item.line
        url = str(item.get("url", ""))
        if url and not (url.startswith(("http://", "https://")) or SEED_PATTERN.match(url)):
            ctx.err(item.key_lines.get("url", item.line), f"{sid}.url",
                    f"{url!r} is neither an http(s) URL nor a seed file name")
        if item.get("kind") and item["kind"] not in SOURCE_KINDS:
            ctx.err(item.key_lines["kind"], f"{sid}.kind",
                    f"{item['kind']!r} is not one of {', '.join(SOURCE_KINDS)}")
        d = item.get("date")
        problem = date_problem(d) if d is not None else None
        if problem:
            ctx.err(item.key_lines["date"], f"{sid}.date", problem)
        rows.append({k: (str(item[k]) if item.get(k) is not None else "") for k in SOURCE_FIELDS})
    return pd.DataFrame(rows, columns=list(SOURCE_FIELDS))


def parse_table(path: Path, table: Table, source_ids: set[str], errors: list[str],
                ids: dict[str, str], declarations: list[Any] | None = None
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(labels, facts) of one table file. ``labels`` has one dict per row (id, label
    fields, ``_file``, ``_line``); ``ids`` (id -> file:line) is shared across tables so
    an id is unique in the whole knowledge base. Derived-value declarations are appended
    to ``declarations`` (:mod:`trnkb.kb.derive`)."""
    ctx = Ctx(display_path(path), errors, declarations)
    data = read_yaml(path)
    labels: list[dict[str, Any]] = []
    facts: list[dict[str, Any]] = []
    if not isinstance(data, list):
        ctx.err(1, "(file)", f"expected a list of {table.name} rows")
        return labels, facts
    if not data:
        ctx.err(getattr(data, "line", 1), "(file)",
                f"no {table.name} rows; add one or remove the file")
    for i, row in enumerate(data):
        if not isinstance(row, LineDict):
            ctx.err(item_line(data, i), "(row)", f"expected a mapping, got {show(row)}")
            continue
        rid = row.get("id")
        if not isinstance(rid, str) or not re.match(ID_PATTERN, rid):
            ctx.err(row.line, "id", f"{show(rid)} is not a lowercase kebab-case id")
            continue
        if rid in ids:
            ctx.err(row.line, f"{rid}.id", f"duplicate id (already defined at {ids[rid]})")
            continue
        ids[rid] = f"{ctx.file}:{row.line}"
        for f in table.fields:
            if f.required and f.name not in row:
                ctx.err(row.line, f"{rid}.{f.name}", "required field missing")
        label: dict[str, Any] = {"id": rid, "_line": row.line, "_file": ctx.file}
        for fname, raw in row.items():
            if fname == "id":
                continue
            lf = table.field(fname)
            if lf is not None and lf.kind == "label":
                label[fname] = raw
            facts += parse_field(table, rid, fname, raw, row, ctx, source_ids)
        labels.append(label)
    return labels, facts
