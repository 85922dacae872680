"""Loading a spec directory: a pipeline of steps, each adding errors or data.

    read sources -> parse facts -> derive -> validate -> conflicts -> index

1. :func:`read_sources` and :func:`read_tables` parse ``sources.yaml`` and every
   ``<table>.yaml`` into row labels and facts (one per value and source);
2. *derive*: derived-value declarations are evaluated into facts (hook:
   :func:`derive_facts`);
3. :func:`check_references` validates the whole (every value was already checked for
   unit, dimension, range and provenance as it was read; ``load(schemas=True)`` and
   ``trnkb validate`` also run the pandera table schemas, :func:`check_schemas`);
4. :func:`~trnkb.kb.conflicts.find_conflicts` compares sources;
5. :class:`~trnkb.kb.base.KnowledgeBase` builds its look-up index; the wide pint-pandas
   tables are built on first use.

Nothing is returned unless every step passed: a directory with any error raises
:class:`~trnkb.spec.specfile.SpecError` listing every ``file:line: field: problem``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from trnkb.kb import derive
from trnkb.kb.base import KnowledgeBase
from trnkb.kb.conflicts import find_conflicts
from trnkb.kb.files import parse_sources, parse_table
from trnkb.kb.rules import check_rules
from trnkb.kb.tables import wide_table
from trnkb.kb.values import FACT_COLUMNS, suggest
from trnkb.spec.schema import SOURCE_FIELDS, TABLES, pandera_schema
from trnkb.spec.specfile import SpecError, display_path, show


def default_specs_dir() -> Path:
    """The specs shipped with the package (``trnkb/specs`` in a wheel, ``specs/`` in a
    checkout)."""
    packaged = resources.files("trnkb").joinpath("specs")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent.parent / "specs"


@dataclass
class Parsed:
    """What the pipeline carries between steps."""

    root: Path
    errors: list[str] = field(default_factory=list)
    sources: pd.DataFrame | None = None
    labels: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # table -> row labels
    facts: list[dict[str, Any]] = field(default_factory=list)
    unreadable: set[str] = field(default_factory=set)  # tables whose file failed to parse
    declarations: list[Any] = field(default_factory=list)  # derived values (trnkb.kb.derive)

    def raise_if_errors(self) -> None:
        if self.errors:
            raise SpecError(self.errors)


def read_sources(p: Parsed) -> None:
    path = p.root / "sources.yaml"
    if not path.exists() and not path.is_symlink():
        raise SpecError([f"{display_path(path)}:1: (file): missing; every value needs a source"])
    try:
        p.sources = parse_sources(path, p.errors)
    except SpecError as e:
        p.errors += e.errors
        p.sources = pd.DataFrame(columns=SOURCE_FIELDS)


def read_tables(p: Parsed) -> None:
    assert p.sources is not None  # read_sources ran first
    source_ids = set(p.sources["id"])
    ids: dict[str, str] = {}
    for name, table in TABLES.items():
        path = p.root / f"{name}.yaml"
        p.labels[name] = []
        if not path.exists() and not path.is_symlink():
            continue
        try:
            labels, facts = parse_table(path, table, source_ids, p.errors, ids, p.declarations)
        except SpecError as e:
            p.errors += e.errors
            p.unreadable.add(name)
            continue
        p.labels[name] = labels
        p.facts += facts
    known = {f"{n}.yaml" for n in TABLES} | {"sources.yaml", "claims.yaml", "benchmarks.yaml"}
    for path in sorted(p.root.iterdir()):
        if path.suffix.lower() in (".yaml", ".yml") and path.name not in known:
            stem = path.name.split(".")[0]
            hint = (f"; rename it {stem}.yaml" if f"{stem}.yaml" in known
                    else f"{suggest(stem + '.yaml', sorted(known))}; tables are "
                         f"{', '.join(TABLES)}")
            p.errors.append(f"{display_path(path)}:1: (file): unknown spec file{hint}")


def derive_facts(p: Parsed) -> None:
    """Evaluate derived-value declarations into facts (their provenance lists every
    input's source), then mark the preferred value of every field by rule
    (:mod:`trnkb.spec.prefer`). Runs after parsing, before validation."""
    p.facts += derive.derive_and_prefer(p.facts, p.declarations, p.sources, p.labels, p.errors)
    p.errors += check_rules(p.facts)


def check_references(p: Parsed) -> None:
    table_ids = {name: {x["id"] for x in labels} for name, labels in p.labels.items()}
    for fact in p.facts:
        f = TABLES[fact["table"]].field(fact["field"])
        assert f is not None  # checked when the fact was read
        if f.kind == "ref" and f.ref not in p.unreadable and fact["value"] not in table_ids[f.ref]:
            p.errors.append(f"{fact['file']}:{fact['line']}: {fact['id']}.{fact['field']}: "
                            f"dangling reference {fact['value']!r}: no such id in {f.ref}"
                            f"{suggest(fact['value'], sorted(table_ids[f.ref]))}")


def _preferred(p: Parsed) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """table -> field -> id -> preferred fact."""
    preferred: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for fact in p.facts:
        if fact["preferred"]:
            preferred.setdefault(fact["table"], {}).setdefault(fact["field"], {})[fact["id"]] = fact
    return preferred


def table_builders(p: Parsed) -> dict[str, Callable[[], pd.DataFrame]]:
    """A builder of each wide pint-pandas table (called on first use)."""
    preferred = _preferred(p)
    return {name: functools.partial(wide_table, table, p.labels[name], preferred.get(name, {}))
            for name, table in TABLES.items()}


def check_schemas(kb: KnowledgeBase) -> list[str]:
    """Check every wide table against its pandera schema (:func:`trnkb.spec.schema.pandera_schema`).

    The schemas restate rules the loader already applies to each value as it is read
    (dimension, plausible range, id pattern and uniqueness, choices, required fields),
    as a second, independent implementation. ``trnkb validate`` runs them; a plain
    :func:`load` does not (importing and running pandera costs more than the rest of
    loading). A pass is remembered by content (:mod:`trnkb.kb.schema_memo`), so the same
    tables are not checked twice. Returns ``file:line: id.column: problem`` lines (empty
    when all pass), at the line of the failing value (of its row when the value has no
    line).
    """
    from trnkb.kb import schema_memo

    k = schema_memo.key(kb, pandera_schema)
    if schema_memo.passed(k):  # these very tables passed these very schemas before
        return []
    errors = []
    for name in kb.tables:
        wide = kb.table(name)
        schema = pandera_schema(TABLES[name], list(wide.columns))
        try:
            schema.validate(wide, lazy=True)
        except Exception as e:  # pandera SchemaErrors: report per row and column
            cases = getattr(e, "failure_cases", None)
            if cases is None:
                raise
            errors += _schema_errors(kb, name, wide, cases)
    if not errors:
        schema_memo.remember(k)
    return errors


def _schema_errors(kb: KnowledgeBase, name: str, wide: pd.DataFrame, cases: pd.DataFrame
                   ) -> list[str]:
    facts = kb.facts[(kb.facts["table"] == name) & kb.facts["preferred"]]
    default = display_path(Path(kb.path) / f"{name}.yaml")
    out = []
    for _, c in cases.iterrows():
        idx, column = c.get("index"), str(c.get("column"))
        rid = "(table)"
        if isinstance(idx, (int, float)) and idx == idx and 0 <= int(idx) < len(wide):
            rid = str(wide["id"].iloc[int(idx)])
        mine = facts[(facts["id"] == rid) & (facts["field"] == column)]
        if mine.empty:
            mine = kb.facts[kb.facts["id"] == rid]
        file, line = (mine["file"].iloc[0], int(mine["line"].iloc[0])) if not mine.empty \
            else (default, 1)
        out.append(f"{file}:{line}: {rid}.{column}: fails {c['check']} "
                   f"({show(c['failure_case'])})")
    return out


def load(path: str | Path | None = None, *, schemas: bool = False) -> KnowledgeBase:
    """Load and validate a spec directory (default: the specs shipped with trnkb).

    Every value is checked as it is read; ``schemas=True`` also runs the pandera table
    schemas (:func:`check_schemas`), as ``trnkb validate`` does. Loading reads and checks
    data only: the claim files are judged by :func:`trnkb.audit.validate` (``trnkb
    validate``), which loads first, so a data error is reported before any claim runs.

    Raises :class:`~trnkb.spec.specfile.SpecError` listing every problem; nothing is returned
    unless the whole directory is valid.
    """
    root = Path(path) if path is not None else default_specs_dir()
    if not root.is_dir():
        raise SpecError([f"{show(str(root))[1:-1]}:1: (dir): not a directory"])
    p = Parsed(root)
    read_sources(p)
    read_tables(p)
    derive_facts(p)
    check_references(p)
    p.raise_if_errors()
    assert p.sources is not None  # read_sources ran first
    facts = pd.DataFrame(p.facts, columns=FACT_COLUMNS)
    row_ids = {name: [x["id"] for x in labels] for name, labels in p.labels.items()}
    kb = KnowledgeBase(root, facts, p.sources, table_builders(p), find_conflicts(p.facts),
                       row_ids=row_ids)
    if schemas:
        errors = check_schemas(kb)
        if errors:
            raise SpecError(errors)
    return kb
