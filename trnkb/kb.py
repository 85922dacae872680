"""Loading the knowledge base: ``specs/*.yaml`` -> facts (long) -> validated wide tables.

A spec value is written with its unit and provenance::

    hbm_capacity:
      - {value: 144 GB, source: semianalysis-trn3, locator: "HBM", kind: reported, preferred: true}
      - {value: 144 GiB, source: neuron-trn3-arch, locator: "Memory", kind: reported}

Everything is checked before anything is returned: a spec directory with any error is
refused whole (:class:`~trnkb.specfile.SpecError`, one ``file:line: field: problem``
message per error).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd
import pint

from trnkb.schema import (
    ID_PATTERN,
    SOURCE_FIELDS,
    SOURCE_KINDS,
    TABLES,
    VALUE_KINDS,
    Field,
    Table,
    date_problem,
    pandera_schema,
    value_problem,
)
from trnkb.specfile import LineDict, SpecError, display_path, item_line, read_yaml, show, suggest
from trnkb.units import DIMENSIONS, QuantityError, is_binary_prefixed, parse, ureg

VALUE_KEYS = {"value", "source", "locator", "kind", "preferred", "note", "qualifier"}
SEED_PATTERN = re.compile(r"^\d{3}_[0-9a-f]{16}\.txt$")
FACT_COLUMNS = [
    "table", "id", "field", "value", "magnitude", "unit", "source", "locator", "kind",
    "preferred", "note", "qualifier", "file", "line",
]


def default_specs_dir() -> Path:
    """The specs shipped with the package (``trnkb/specs`` in a wheel, ``specs/`` in a checkout)."""
    packaged = resources.files("trnkb").joinpath("specs")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "specs"


@dataclass
class _Ctx:
    file: str
    errors: list[str]

    def err(self, line: int, where: str, msg: str) -> None:
        self.errors.append(f"{self.file}:{line}: {where}: {msg}")


def _parse_sources(path: Path, errors: list[str]) -> pd.DataFrame:
    ctx = _Ctx(display_path(path), errors)
    data = read_yaml(path)
    rows, seen = [], {}
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
        if d is not None and date_problem(d):
            ctx.err(item.key_lines["date"], f"{sid}.date", date_problem(d))
        rows.append({k: (str(item.get(k)) if item.get(k) is not None else "") for k in SOURCE_FIELDS})
    return pd.DataFrame(rows, columns=list(SOURCE_FIELDS))


def _suggest(name: str, options: list[str]) -> str:
    return suggest(name, options)


def _parse_value(f: Field, raw, ctx: _Ctx, line: int, where: str):
    """Return (value, magnitude_in_display_unit, unit_string) or None after an error."""
    if f.kind in ("text", "ref"):
        if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
            ctx.err(line, where, f"expected text, got {show(raw)}")
            return None
        return str(raw), math.nan, ""
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
    except (pint.errors.UndefinedUnitError, AttributeError) as e:
        bad = getattr(e, "unit_names", None) or [str(raw)]
        ctx.err(line, where, f"unknown unit {', '.join(map(str, bad))!r} in {raw!r}")
        return None
    except Exception as e:  # pint raises assorted parser errors for garbage
        ctx.err(line, where, f"cannot parse {raw!r} as a quantity ({type(e).__name__})")
        return None
    want = DIMENSIONS[f.dim] if f.kind == "quantity" else ""
    want_dim = ureg.get_dimensionality(want) if want else ureg.dimensionless.dimensionality
    if q.dimensionality != want_dim:
        got = str(q.dimensionality) if not q.dimensionless else "dimensionless"
        ctx.err(line, where, f"wrong dimension: {raw!r} is {got}, expected {want or 'a plain count'}"
                             f" (e.g. {f.unit or 'a number'})")
        return None
    problem = value_problem(f, q)  # counts: plain whole numbers; quantities: unit family
    if problem:
        ctx.err(line, where, problem)
        return None
    mag = q.to(f.unit).magnitude if f.unit else q.to("").magnitude
    if mag < 0:
        ctx.err(line, where, f"negative value {raw!r}")
        return None
    if f.lo is not None and not (f.lo <= mag <= f.hi):
        ctx.err(line, where, f"implausible value {raw!r}: expected {f.lo:g} to {f.hi:g} {f.unit}".rstrip())
        return None
    return q, float(mag), ("" if q.dimensionless else f"{q.units:~}")


def _parse_field(table: Table, row_id: str, fname: str, raw, row: LineDict, ctx: _Ctx,
                 source_ids: set[str]) -> list[dict]:
    f = table.field(fname)
    line = row.key_lines.get(fname, row.line)
    where = f"{row_id}.{fname}"
    if f is None:
        ctx.err(line, where, f"unknown field for table {table.name}{_suggest(fname, table.names)}")
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
    facts = []
    for block in blocks:
        bline = block.line if isinstance(block, LineDict) else line
        if not isinstance(block, LineDict):
            ctx.err(bline, where, "expected {value, source, locator, kind}; a value needs its source "
                                  f"(got {show(block)})")
            continue
        for key in block:
            if key not in VALUE_KEYS:
                ctx.err(bline, where, f"unknown key {show(key)}{_suggest(key, sorted(VALUE_KEYS))}")
        if "value" not in block:
            ctx.err(bline, where, "missing value")
            continue
        src = block.get("source")
        if not src:
            ctx.err(bline, where, "missing source")
        elif src not in source_ids:
            ctx.err(bline, where, f"unknown source {src!r} (not in sources.yaml)"
                                  f"{_suggest(str(src), sorted(source_ids))}")
        if not block.get("locator"):
            ctx.err(bline, where, "missing locator (section or page in the source)")
        kind = block.get("kind")
        if kind not in VALUE_KINDS:
            ctx.err(bline, where, f"kind {kind!r} is not one of {', '.join(VALUE_KINDS)}")
        if "preferred" in block and not isinstance(block["preferred"], bool):
            ctx.err(bline, where, "preferred must be true or false")
        parsed = _parse_value(f, block["value"], ctx, bline, where)
        if parsed is None:
            continue
        value, mag, unit = parsed
        facts.append({
            "table": table.name, "id": row_id, "field": fname, "value": value,
            "magnitude": mag, "unit": unit, "source": src, "locator": str(block.get("locator", "")),
            "kind": kind, "preferred": bool(block.get("preferred", False)),
            "note": str(block.get("note", "") or ""), "qualifier": str(block.get("qualifier", "") or ""),
            "file": ctx.file, "line": bline,
        })
    if len(facts) == 1:
        facts[0]["preferred"] = True
    elif len(facts) > 1 and sum(x["preferred"] for x in facts) != 1:
        ctx.err(line, where, f"{len(facts)} values: mark exactly one 'preferred: true'")
    return facts


def _parse_table(path: Path, table: Table, source_ids: set[str], errors: list[str],
                 ids: dict[str, str]):
    ctx = _Ctx(display_path(path), errors)
    data = read_yaml(path)
    labels, facts = [], []
    if not isinstance(data, list):
        ctx.err(1, "(file)", f"expected a list of {table.name} rows")
        return labels, facts
    if not data:
        ctx.err(getattr(data, "line", 1), "(file)", f"no {table.name} rows; add one or remove the file")
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
        label = {"id": rid, "_line": row.line, "_file": ctx.file}
        for fname, raw in row.items():
            if fname == "id":
                continue
            f = table.field(fname)
            if f is not None and f.kind == "label":
                label[fname] = raw
            facts += _parse_field(table, rid, fname, raw, row, ctx, source_ids)
        labels.append(label)
    return labels, facts


def _wide(table: Table, labels: list[dict], facts: list[dict]) -> pd.DataFrame:
    ids = [x["id"] for x in labels]
    out = pd.DataFrame({"id": pd.Series(ids, dtype="str")})
    preferred: dict[str, dict[str, dict]] = {}  # field -> id -> fact
    for fact in facts:
        if fact["table"] == table.name and fact["preferred"]:
            preferred.setdefault(fact["field"], {})[fact["id"]] = fact
    names = table.names + sorted(set(preferred) - set(table.names))
    for name in names:
        f = table.field(name)
        if f.kind == "label":
            vals = [x.get(name) for x in labels]
            if any(v is not None for v in vals):
                out[name] = pd.Series(vals, dtype="str")
            continue
        if name not in preferred:
            continue
        got = [preferred[name].get(i) for i in ids]
        if f.kind in ("text", "ref"):
            out[name] = pd.Series([g["value"] if g else None for g in got], dtype="str")
            continue
        mags = [g["magnitude"] if g else math.nan for g in got]
        if f.kind == "count":
            integral = all(math.isnan(m) or float(m).is_integer() for m in mags)
            out[name] = pd.array([None if math.isnan(m) else m for m in mags],
                                 dtype="Int64" if integral else "Float64")
        else:
            out[name] = pd.Series(pd.array(mags, dtype=f"pint[{f.unit}][Float64]"))
    return out


CONFLICT_COLUMNS = ["table", "id", "field", "preferred", "preferred_source", "other",
                    "other_source", "relative_difference", "type"]


def _conflict_type(f: Field, pref: dict, other: dict) -> tuple[float, str] | None:
    """(relative difference, type) when two values of one field disagree, else None."""
    if f.kind in ("text", "ref"):
        same = str(other["value"]).strip().lower() == str(pref["value"]).strip().lower()
        return None if same else (math.nan, "text")
    a, b = pref["magnitude"], other["magnitude"]
    rel = abs(a - b) / max(abs(a), abs(b)) if max(abs(a), abs(b)) else 0.0
    if rel <= f.tolerance:
        return None
    pa_, pb = pref["value"], other["value"]
    if is_binary_prefixed(pa_.units) != is_binary_prefixed(pb.units):
        # 144 GB vs 144 GiB, or 9 TB vs 9,216 GiB (= 9 TiB): equal once one side's
        # prefix is read the other way
        for x, y in ((pa_, pb), (pb, pa_)):
            if math.isclose(_other_prefix(x).to(y.units).magnitude, y.magnitude, rel_tol=1e-3):
                return rel, "unit-ambiguity"
    if pref["qualifier"] != other["qualifier"]:
        return rel, "qualifier"  # e.g. usable vs physical: different things, both kept
    return rel, "value"


_PREFIX_PAIRS = (("kibi", "kilo"), ("mebi", "mega"), ("gibi", "giga"), ("tebi", "tera"),
                 ("pebi", "peta"))


def _other_prefix(q: pint.Quantity) -> pint.Quantity:
    """``q`` with binary prefixes read as decimal and decimal as binary (GB <-> GiB)."""
    text = str(q.units)
    swapped = text
    for binary, decimal in _PREFIX_PAIRS:
        swapped = swapped.replace(binary, "\0").replace(decimal, binary).replace("\0", decimal)
    return q.magnitude * ureg.Unit(swapped)


def _conflicts(facts: list[dict]) -> pd.DataFrame:
    groups: dict[tuple, list[dict]] = {}
    for fact in facts:
        groups.setdefault((fact["table"], fact["id"], fact["field"]), []).append(fact)
    rows = []
    for (table, rid, fname), group in sorted(groups.items()):
        if len(group) < 2:
            continue
        f = TABLES[table].field(fname)
        pref = next(x for x in group if x["preferred"])
        for other in (x for x in group if not x["preferred"]):
            found = _conflict_type(f, pref, other)
            if found is None:
                continue
            rows.append({
                "table": table, "id": rid, "field": fname,
                "preferred": _fmt(pref["value"]), "preferred_source": pref["source"],
                "other": _fmt(other["value"]), "other_source": other["source"],
                "relative_difference": found[0], "type": found[1],
            })
    return pd.DataFrame(rows, columns=CONFLICT_COLUMNS)


def _fmt(v) -> str:
    if isinstance(v, pint.Quantity):
        return f"{v.magnitude:g} {v.units:~}".strip() if not v.dimensionless else f"{v.magnitude:g}"
    return str(v)


class KnowledgeBase:
    """The validated knowledge base.

    Attributes
    ----------
    facts : DataFrame
        Long table, one row per value: table, id, field, value (Quantity or str),
        magnitude (in the field's display unit), unit (as written), source, locator,
        kind, preferred, note, qualifier, file, line.
    sources : DataFrame
        ``specs/sources.yaml``.
    conflicts : DataFrame
        Values of one field from different sources that disagree beyond the field's
        tolerance; ``type`` is ``value``, ``unit-ambiguity`` (e.g. 144 GB vs 144 GiB),
        ``qualifier`` (the values carry different qualifiers, e.g. usable vs physical) or
        ``text``.
    """

    def __init__(self, path: Path, facts: pd.DataFrame, sources: pd.DataFrame,
                 tables: dict[str, pd.DataFrame], conflicts: pd.DataFrame):
        self.path = path
        self.facts = facts
        self.sources = sources
        self._tables = tables
        self.conflicts = conflicts

    @property
    def tables(self) -> list[str]:
        return list(self._tables)

    def table(self, name: str) -> pd.DataFrame:
        """Wide view of a table: one row per id, preferred values, pint-pandas columns."""
        if name not in self._tables:
            raise KeyError(f"no table {name!r}; tables are {', '.join(self._tables)}")
        return self._tables[name].copy()

    def table_of(self, row_id: str) -> str:
        """The table an id lives in (ids are unique across tables)."""
        for name, df in self._tables.items():
            if (df["id"] == row_id).any():
                return name
        raise KeyError(f"no row with id {row_id!r}{_suggest(row_id, self.ids())}")

    def ids(self, table: str | None = None) -> list[str]:
        names = [table] if table else self.tables
        return [i for n in names for i in self._tables[n]["id"]]

    def _fact(self, row_id: str, field: str) -> pd.Series:
        sub = self.facts[(self.facts["id"] == row_id) & (self.facts["field"] == field)
                         & self.facts["preferred"]]
        if sub.empty:
            self.table_of(row_id)  # raises for an unknown id
            raise KeyError(f"{row_id} has no value for {field!r}")
        return sub.iloc[0]

    def value(self, row_id: str, field: str):
        """The preferred value: a pint Quantity (counts are dimensionless) or a string."""
        return self._fact(row_id, field)["value"]

    def get(self, row_id: str, field: str, default=None):
        """Like :meth:`value` but returns ``default`` when no source gives the field."""
        try:
            return self.value(row_id, field)
        except KeyError:
            return default

    def provenance(self, row_id: str, field: str) -> dict:
        """Source, locator, kind, note and file:line of the preferred value."""
        f = self._fact(row_id, field)
        return {k: f[k] for k in ("source", "locator", "kind", "note", "qualifier", "file", "line")}

    def values(self, row_id: str, field: str) -> pd.DataFrame:
        """Every value of one field, from every source, preferred first."""
        sub = self.facts[(self.facts["id"] == row_id) & (self.facts["field"] == field)]
        return sub.sort_values("preferred", ascending=False).reset_index(drop=True)

    def source(self, source_id: str) -> dict:
        row = self.sources[self.sources["id"] == source_id]
        if row.empty:
            raise KeyError(f"no source {source_id!r}")
        return row.iloc[0].to_dict()

    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}={len(t)}" for n, t in self._tables.items())
        return f"<KnowledgeBase {len(self.facts)} facts, {len(self.sources)} sources; {sizes}>"


def load(path: str | Path | None = None) -> KnowledgeBase:
    """Load and validate a spec directory (default: the specs shipped with trnkb).

    Raises :class:`~trnkb.specfile.SpecError` listing every problem; nothing is returned
    unless the whole directory is valid.
    """
    root = Path(path) if path is not None else default_specs_dir()
    if not root.is_dir():
        raise SpecError([f"{root}:1: (dir): not a directory"])
    errors: list[str] = []
    src_path = root / "sources.yaml"
    if not src_path.exists():
        raise SpecError([f"{display_path(src_path)}:1: (file): missing; every value needs a source"])
    parsed: dict[str, tuple] = {}
    try:
        sources = _parse_sources(src_path, errors)
    except SpecError as e:
        errors += e.errors
        sources = pd.DataFrame(columns=SOURCE_FIELDS)
    source_ids = set(sources["id"])
    ids: dict[str, str] = {}
    unreadable: set[str] = set()  # tables whose file failed to parse: no dangling-ref noise
    for name, table in TABLES.items():
        p = root / f"{name}.yaml"
        if not p.exists() and not p.is_symlink():
            parsed[name] = ([], [])
            continue
        try:
            parsed[name] = _parse_table(p, table, source_ids, errors, ids)
        except SpecError as e:
            errors += e.errors
            parsed[name] = ([], [])
            unreadable.add(name)
    known = {f"{n}.yaml" for n in TABLES} | {"sources.yaml", "claims.yaml"}
    for p in sorted(root.iterdir()):
        if p.suffix.lower() in (".yaml", ".yml") and p.name not in known:
            stem = p.name.split(".")[0]
            hint = (f"rename it {stem}.yaml" if f"{stem}.yaml" in known
                    else f"tables are {', '.join(TABLES)}{_suggest(stem, list(TABLES))}")
            errors.append(f"{display_path(p)}:1: (file): unknown spec file; {hint}")
    all_facts = [f for _, fs in parsed.values() for f in fs]
    facts = pd.DataFrame(all_facts, columns=FACT_COLUMNS)
    # foreign keys
    table_ids = {name: {x["id"] for x in labels} for name, (labels, _) in parsed.items()}
    for fact in all_facts:
        f = TABLES[fact["table"]].field(fact["field"])
        if f.kind == "ref" and f.ref not in unreadable and fact["value"] not in table_ids[f.ref]:
            errors.append(f"{fact['file']}:{fact['line']}: {fact['id']}.{fact['field']}: "
                          f"dangling reference {fact['value']!r}: no such id in {f.ref}"
                          f"{_suggest(fact['value'], sorted(table_ids[f.ref]))}")
    if errors:
        raise SpecError(errors)
    tables = {}
    for name, table in TABLES.items():
        labels, _ = parsed[name]
        wide = _wide(table, labels, all_facts)
        schema = pandera_schema(table, list(wide.columns))
        try:
            schema.validate(wide, lazy=True)
        except Exception as e:  # pandera SchemaErrors: report per row and column
            cases = getattr(e, "failure_cases", None)
            if cases is None:
                raise
            errors += _schema_errors(root, name, cases, labels, all_facts)
        tables[name] = wide
    if errors:
        raise SpecError(errors)
    kb = KnowledgeBase(root, facts, sources, tables, _conflicts(all_facts))
    _check_claims(kb)
    return kb


def _schema_errors(root: Path, name: str, cases: pd.DataFrame, labels: list[dict],
                   facts: list[dict]) -> list[str]:
    """pandera failure cases as ``file:line: id.field: problem`` (the value's own line)."""
    out = []
    for _, c in cases.iterrows():
        idx, column = c.get("index"), c.get("column")
        row = labels[int(idx)] if isinstance(idx, (int, float)) and idx == idx \
            and 0 <= int(idx) < len(labels) else None
        rid = row["id"] if row else "(table)"
        where = next((f for f in facts if f["table"] == name and f["id"] == rid
                      and f["field"] == column and f["preferred"]), None)
        file = where["file"] if where else (row["_file"] if row else display_path(root / f"{name}.yaml"))
        line = where["line"] if where else (row["_line"] if row else 1)
        out.append(f"{file}:{line}: {rid}.{column}: fails {c['check']} ({show(c['failure_case'])})")
    return out


def _check_claims(kb: KnowledgeBase) -> None:
    """Evaluate ``claims.yaml`` when the directory has one: a broken claim refuses the load."""
    path = Path(kb.path) / "claims.yaml"
    if not path.exists() and not path.is_symlink():
        return
    from trnkb.claims import evaluate_claims

    try:
        _, errors = evaluate_claims(kb, path)
    except (ArithmeticError, TypeError, ValueError, KeyError) as e:  # safety net: one line
        errors = [f"{display_path(path)}:1: (claims): cannot evaluate ({type(e).__name__}: "
                  f"{show(str(e), 200)})"]
    if errors:
        raise SpecError(errors)
