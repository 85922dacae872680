"""Reading spec files: ``sources.yaml`` -> a sources frame, ``<table>.yaml`` -> labels + facts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from trnkb.kb.values import Ctx, parse_field, suggest
from trnkb.spec.cache import read_yaml_cached as read_yaml
from trnkb.spec.fields import ID_PATTERN, SOURCE_KINDS, Table
from trnkb.spec.schema import SOURCE_FIELDS, date_problem
from trnkb.spec.specfile import LineDict, ascii_text, display_path, item_line, show

SEED_PATTERN = re.compile(r"^\d{3}_[0-9a-f]{16}\.txt$")


def parse_sources(path: Path, errors: list[str]) -> pd.DataFrame:
    """``sources.yaml`` as a frame with the columns of ``SOURCE_FIELDS`` (all text)."""
    ctx = Ctx(display_path(path), errors)
    data = read_yaml(path)
    if not isinstance(data, list):
        ctx.err(1, "(file)", "expected a list of sources")
        return pd.DataFrame(columns=SOURCE_FIELDS)
    return pd.DataFrame(source_rows(data, ctx), columns=list(SOURCE_FIELDS))


MAX_ID = 100  # characters of an id


def _id(raw: object) -> str | None:
    """An id after NFKC normalisation, or None when it is not a kebab-case ASCII id."""
    if not isinstance(raw, str) or len(raw) > MAX_ID:
        return None
    try:
        text = ascii_text(raw)
    except ValueError:
        return None
    return text if re.match(ID_PATTERN, text) else None


def _id_problem(raw: object) -> str:
    if isinstance(raw, str) and len(raw) > MAX_ID:
        return f"{show(raw, 30)}: an id of {len(raw):,} characters (limit {MAX_ID})"
    if isinstance(raw, str):
        try:
            ascii_text(raw)
        except ValueError as e:
            return str(e)
    return f"{show(raw)} is not a lowercase kebab-case id"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a source's address (``https:``/``http:`` with a host, or a
    seed file name; no whitespace, quotes or angle brackets), or None."""
    if SEED_PATTERN.match(url):
        return None
    if not _URL.match(url):
        return f"{show(url)} is neither an http(s) URL nor a seed file name"
    bad = next((c for c in url if c.isspace() or c in "\"'<>`\\"), None)
    if bad is not None:
        return f"{show(url)}: {bad!r} is not allowed in a URL (percent-encode it)"
    return None


_URL = re.compile(r"^https?://[^/\s]+", re.IGNORECASE)


def source_rows(data: list[Any], ctx: Ctx, seen: dict[str, int] | None = None,
                kinds: tuple[str, ...] = SOURCE_KINDS) -> list[dict[str, str]]:
    """The valid sources of a list read from YAML (``sources.yaml``, or the ``sources:``
    of a claim file), each checked: fields present and known, kebab-case id unique in
    ``seen`` (id -> line), URL, kind (one of ``kinds``) and date."""
    rows: list[dict[str, str]] = []
    seen = {} if seen is None else seen
    for i, item in enumerate(data):
        if not isinstance(item, LineDict):
            ctx.err(item_line(data, i), "(source)", f"expected a mapping, got {show(item)}")
            continue
        sid = _id(item.get("id"))
        where = f"{sid}" if sid else "(source)"
        for key in SOURCE_FIELDS:
            if key not in item or item[key] in (None, ""):
                ctx.err(item.line, f"{where}.{key}", "missing")
        for key in item:
            if key not in SOURCE_FIELDS:
                ctx.err(item.key_lines[key], f"{where}.{key}",
                        f"unknown key{suggest(key, list(SOURCE_FIELDS))}")
        if sid is None:
            ctx.err(item.line, "id", f"source id: {_id_problem(item.get('id'))}")
            continue
        if sid in seen:
            ctx.err(item.line, f"{sid}.id", f"duplicate source id (first at line {seen[sid]})")
        seen[sid] = item.line
        url = item.get("url")
        problem = url_problem(url) if isinstance(url, str) and url else (
            None if url in (None, "") else f"expected text, got {show(url)}")
        if problem:
            ctx.err(item.key_lines.get("url", item.line), f"{sid}.url", problem)
        if item.get("kind") and item["kind"] not in kinds:
            ctx.err(item.key_lines["kind"], f"{sid}.kind",
                    f"{show(item['kind'])} is not one of {', '.join(kinds)}"
                    f"{suggest(str(item['kind']), list(kinds))}")
        d = item.get("date")
        problem = date_problem(d) if d is not None else None
        if problem:
            ctx.err(item.key_lines["date"], f"{sid}.date", problem)
        row = {k: (str(item[k]) if item.get(k) is not None else "") for k in SOURCE_FIELDS}
        rows.append({**row, "id": sid})
    return rows


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
        rid = _id(row.get("id"))
        if rid is None:
            ctx.err(row.line, "id", _id_problem(row.get("id")))
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
