"""Parsing one field of one row: ``{value, source, locator, kind, ...}`` blocks -> facts.

A fact is a plain dict with the keys of :data:`FACT_COLUMNS`: the value (a pint Quantity,
counts dimensionless, or text), its magnitude in the field's display unit, the unit
exactly as the source wrote it, the canonical unit (:func:`trnkb.units.format_unit`) and
the provenance. Errors are collected as ``file:line: row.field: problem``.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any, TypeAlias

import pint

from trnkb.kb import derive
from trnkb.spec import attributes, specfile
from trnkb.spec.fields import VALUE_KINDS, Field, Table
from trnkb.spec.schema import value_problem
from trnkb.spec.specfile import LineDict, show
from trnkb.units import DIMENSIONS, QuantityError, format_unit, parse, ureg

Fact: TypeAlias = dict[str, Any]
"""One value of one field from one source, keyed by :data:`FACT_COLUMNS`."""

VALUE_KEYS = {"value", "source", "locator", "kind", "preferred", "note", "qualifier", "density",
              "direction"}
FACT_COLUMNS = [
    "table", "id", "field", "value", "magnitude", "unit", "canonical_unit", "source", "locator",
    "kind", "preferred", "note", "qualifier", "file", "line", "density", "direction", "derivation",
]
_LEADING_NUMBER = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*")


@dataclass
class Ctx:
    """Where errors go: the file being read and the shared error list."""

    file: str
    errors: list[str]
    declarations: list[Any] | None = None  # derived-value declarations found (trnkb.kb.derive)

    def err(self, line: int, where: str, msg: str) -> None:
        self.errors.append(f"{self.file}:{line}: {where}: {msg}")


def suggest(name: str, options: list[str], ctx: Ctx | None = None) -> str:
    """`` (did you mean 'x'?)`` for the closest option (case ignored), or ``""`` (also once
    ``ctx`` holds more errors than are listed: a suggestion costs a fuzzy match)."""
    if ctx is not None and len(ctx.errors) >= specfile.MAX_ERRORS:
        return ""
    return specfile.suggest(name, options)


def written_unit(raw: object) -> str:
    """The unit text exactly as written after the number (``"144 GB"`` -> ``"GB"``)."""
    return "" if isinstance(raw, (int, float)) else _LEADING_NUMBER.sub("", str(raw)).strip()


@functools.lru_cache(maxsize=64)
def _dimensionality(want: str) -> Any:
    return ureg.get_dimensionality(want) if want else ureg.dimensionless.dimensionality


@functools.lru_cache(maxsize=256)
def _unit(text: str) -> Any:
    """A field's display unit, parsed once (pint's unit parser is slow)."""
    return ureg.parse_units(text) if text else ureg.dimensionless


_UNIT_FAMILY: dict[tuple[str, Any], str | None] = {}
_NO_UNIT = ureg.dimensionless  # a plain number (``%`` is a unit here)


def _value_problem(f: Field, q: pint.Quantity[Any]) -> str | None:
    """:func:`trnkb.spec.schema.value_problem`, remembered per (dimension, unit) for quantities
    (for them the answer depends on nothing else; pint makes it costly to compute)."""
    if f.kind == "count" and q.units == _NO_UNIT and (
            not f.integer or float(q.magnitude).is_integer()):
        return None  # the common case, decided without pint's registry look-ups
    if f.kind != "quantity":
        return value_problem(f, q)
    key = (f.dim, q.units)
    if key not in _UNIT_FAMILY:
        _UNIT_FAMILY[key] = value_problem(f, q)
    return _UNIT_FAMILY[key]


def parse_value(f: Field, raw: Any, ctx: Ctx, line: int, where: str
                ) -> tuple[pint.Quantity[Any] | str, float, str, str] | None:
    """Return (value, magnitude_in_display_unit, unit_as_written, canonical_unit) or None
    after recording an error."""
    if f.kind in ("text", "ref"):
        if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
            ctx.err(line, where, f"expected text, got {show(raw)}")
            return None
        if isinstance(raw, float) and not math.isfinite(raw):
            ctx.err(line, where, f"{show(raw)} is not a finite number")
            return None
        text = str(raw)
        if f.kind == "ref":  # an id: ASCII after NFKC (fullwidth letters are folded)
            try:
                text = specfile.ascii_text(text, "id")
            except ValueError as e:
                ctx.err(line, where, str(e))
                return None
        if f.choices and text not in f.choices:
            ctx.err(line, where, f"{show(text)} is not one of {', '.join(f.choices)}"
                                 f"{suggest(text, list(f.choices))}")
            return None
        return text, math.nan, "", ""
    if isinstance(raw, bool) or raw is None:
        ctx.err(line, where, f"expected a number, got {show(raw)}")
        return None
    if f.kind == "quantity" and isinstance(raw, (int, float)):
        ctx.err(line, where, f"a quantity written as a bare number ({raw}); write it with its "
                             f"unit, e.g. '{raw} {f.unit}'")
        return None
    try:
        q = parse(raw)
    except QuantityError as e:
        ctx.err(line, where, str(e))
        return None
    want = DIMENSIONS[f.dim] if f.kind == "quantity" else ""
    if q.dimensionality != _dimensionality(want):
        got = str(q.dimensionality) if not q.dimensionless else "dimensionless"
        ctx.err(line, where, f"wrong dimension: {raw!r} is {got}, expected "
                             f"{want or 'a plain count'} (e.g. {f.unit or 'a number'})")
        return None
    problem = _value_problem(f, q)  # counts: plain whole numbers; quantities: unit family
    if problem:
        ctx.err(line, where, problem)
        return None
    mag = q.m_as(_unit(f.unit))
    if mag < 0:
        ctx.err(line, where, f"negative value {raw!r}")
        return None
    if f.lo is not None and not (f.lo <= mag <= f.hi):
        ctx.err(line, where,
                f"implausible value {raw!r}: expected {f.lo:g} to {f.hi:g} {f.unit}".rstrip())
        return None
    return q, float(mag), written_unit(raw), format_unit(q.units)


def parse_field(table: Table, row_id: str, fname: str, raw: Any, row: LineDict, ctx: Ctx,
                source_ids: set[str]) -> list[Fact]:
    """The facts of one field of one row (one per source), or [] after errors."""
    f = table.field(fname)
    line = row.key_lines.get(fname, row.line)
    where = f"{row_id}.{fname}"
    if f is None:
        ctx.err(line, where, f"unknown field for table {table.name}"
                             f"{suggest(fname, table.names, ctx)}")
        return []
    if f.kind == "label":
        if not isinstance(raw, str):
            ctx.err(line, where, f"expected plain text, got {show(raw)}")
        elif f.choices and raw not in f.choices:
            ctx.err(line, where, f"{raw!r} is not one of {', '.join(f.choices)}")
        return []  # labels are columns, not facts
    blocks = raw if isinstance(raw, list) else [raw]
    if not blocks:
        ctx.err(line, where, "empty list of values; give at least one {value, source, ...}")
    facts: list[Fact] = []
    for block in blocks:
        bline = block.line if isinstance(block, LineDict) else line
        if not isinstance(block, LineDict):
            ctx.err(bline, where, "expected {value, source, locator, kind}; a value needs its "
                                  f"source (got {show(block)})")
            continue
        if "derive" in block:  # a derived value: declared here, computed at load
            decl, errs = derive.parse_declaration(table.name, row_id, fname, block, ctx.file,
                                                  bline, source_ids)
            ctx.errors.extend(errs)
            if decl is not None and ctx.declarations is not None:
                ctx.declarations.append(decl)
            continue
        for key in block:
            if key not in VALUE_KEYS:
                ctx.err(bline, where,
                        f"unknown key {show(key)}{suggest(key, sorted(VALUE_KEYS), ctx)}")
        if block.get("kind") == "derived":
            ctx.err(bline, where, "a derived value is declared (derive: FORMULA, inputs: ...), "
                                  "never typed; see docs/spec-format.md")
        for problem in attributes.check(table.name, fname, block.get("density"),
                                        block.get("direction")):
            ctx.err(bline, where, problem)
        if "value" not in block:
            ctx.err(bline, where, "missing value")
            continue
        src = block.get("source")
        if not src:
            ctx.err(bline, where, "missing source")
        elif src not in source_ids:
            ctx.err(bline, where, f"unknown source {src!r} (not in sources.yaml)"
                                  f"{suggest(str(src), sorted(source_ids))}")
        if not block.get("locator"):
            ctx.err(bline, where, "missing locator (section or page in the source)")
        kind = block.get("kind")
        if kind not in VALUE_KINDS:
            ctx.err(bline, where, f"kind {kind!r} is not one of {', '.join(VALUE_KINDS)}")
        if "preferred" in block and not isinstance(block["preferred"], bool):
            ctx.err(bline, where, "preferred must be true or false")
        elif block.get("preferred") and not block.get("note"):
            ctx.err(bline, where, "preferred: true needs a note saying why the preference "
                                  "rule is set aside")
        for key in ("locator", "note", "qualifier"):
            if block.get(key) is not None and not isinstance(block[key], str):
                ctx.err(bline, where, f"{key} must be text, got {show(block[key])}")
        parsed = parse_value(f, block["value"], ctx, bline, where)
        if parsed is None:
            continue
        value, mag, unit, canonical = parsed
        density, direction = attributes.resolve(table.name, fname, block.get("density"),
                                                block.get("direction"))
        facts.append({
            "table": table.name, "id": row_id, "field": fname, "value": value,
            "magnitude": mag, "unit": unit, "canonical_unit": canonical, "source": src,
            "locator": str(block.get("locator", "")), "kind": kind,
            "preferred": bool(block.get("preferred", False)),
            "note": str(block.get("note", "") or ""),
            "qualifier": str(block.get("qualifier", "") or ""),
            "file": ctx.file, "line": bline, "density": density, "direction": direction,
            "derivation": "", "override": bool(block.get("preferred", False)),
        })
    return facts  # which value is preferred is decided by rule at load (trnkb.spec.prefer)
