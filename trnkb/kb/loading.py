"""Loading a spec directory: a pipeline of steps, each adding errors or data.

    read sources -> parse facts -> derive -> validate -> conflicts -> index

1. :func:`read_sources` and :func:`read_tables` parse ``sources.yaml`` and every
   ``<table>.yaml`` into row labels and facts (one per value and source);
2. *derive*: derived-value declarations are evaluated into facts (hook:
   :func:`derive_facts`);
3. :func:`check_references` and the pandera schemas validate the whole;
4. :func:`~trnkb.kb.conflicts.find_conflicts` compares sources;
5. :class:`~trnkb.kb.base.KnowledgeBase` builds its look-up index.

Nothing is returned unless every step passed: a directory with any error raises
:class:`~trnkb.specfile.SpecError` listing every ``file:line: field: problem``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from trnkb.kb.base import KnowledgeBase
from trnkb.kb.conflicts import find_conflicts
from trnkb.kb.files import parse_sources, parse_table
from trnkb.kb.tables import wide_table
from trnkb.kb.values import FACT_COLUMNS, suggest
from trnkb.schema import SOURCE_FIELDS, TABLES, pandera_schema
from trnkb.specfile import SpecError, display_path


def default_specs_dir() -> Path:
    """The specs shipped with the package (``trnkb/specs`` in a wheel, ``specs/`` in a checkout)."""
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
    labels: dict[str, list[dict]] = field(default_factory=dict)  # table -> row labels
    facts: list[dict] = field(default_factory=list)
    unreadable: set[str] = field(default_factory=set)  # tables whose file failed to parse

    def raise_if_errors(self) -> None:
        if self.errors:
            raise SpecError(self.errors)


def read_sources(p: Parsed) -> None:
    path = p.root / "sources.yaml"
    if not path.exists():
        raise SpecError([f"{display_path(path)}:0: (file): missing; every value needs a source"])
    try:
        p.sources = parse_sources(path, p.errors)
    except SpecError as e:
        p.errors += e.errors
        p.sources = pd.DataFrame(columns=SOURCE_FIELDS)


def read_tables(p: Parsed) -> None:
    source_ids = set(p.sources["id"])
    ids: dict[str, str] = {}
    for name, table in TABLES.items():
        path = p.root / f"{name}.yaml"
        p.labels[name] = []
        if not path.exists():
            continue
        try:
            labels, facts = parse_table(path, table, source_ids, p.errors, ids)
        except SpecError as e:
            p.errors += e.errors
            p.unreadable.add(name)
            continue
        p.labels[name] = labels
        p.facts += facts
    known = {f"{n}.yaml" for n in TABLES} | {"sources.yaml", "claims.yaml"}
    for path in sorted(p.root.glob("*.yaml")):
        if path.name not in known:
            p.errors.append(f"{display_path(path)}:1: (file): unknown spec file; tables are "
                            f"{', '.join(TABLES)}")


def derive_facts(p: Parsed) -> None:
    """Evaluate derived-value declarations into facts (their provenance lists every
    input's source). Runs after parsing, before validation."""


def check_references(p: Parsed) -> None:
    table_ids = {name: {x["id"] for x in labels} for name, labels in p.labels.items()}
    for fact in p.facts:
        f = TABLES[fact["table"]].field(fact["field"])
        if f.kind == "ref" and f.ref not in p.unreadable and fact["value"] not in table_ids[f.ref]:
            p.errors.append(f"{fact['file']}:{fact['line']}: {fact['id']}.{fact['field']}: "
                            f"dangling reference {fact['value']!r}: no such id in {f.ref}"
                            f"{suggest(fact['value'], sorted(table_ids[f.ref]))}")


def build_tables(p: Parsed) -> dict[str, pd.DataFrame]:
    """The wide pint-pandas tables, each checked against its pandera schema."""
    preferred: dict[str, dict[str, dict[str, dict]]] = {}  # table -> field -> id -> fact
    for fact in p.facts:
        if fact["preferred"]:
            preferred.setdefault(fact["table"], {}).setdefault(fact["field"], {})[fact["id"]] = fact
    tables = {}
    for name, table in TABLES.items():
        wide = wide_table(table, p.labels[name], preferred.get(name, {}))
        schema = pandera_schema(table, list(wide.columns))
        try:
            schema.validate(wide, lazy=True)
        except Exception as e:  # pandera SchemaErrors: report per column
            cases = getattr(e, "failure_cases", None)
            if cases is None:
                raise
            for _, c in cases.iterrows():
                p.errors.append(f"{name}.yaml:0: {c['column']}: fails {c['check']} "
                                f"({c['failure_case']})")
        tables[name] = wide
    return tables


def load(path: str | Path | None = None) -> KnowledgeBase:
    """Load and validate a spec directory (default: the specs shipped with trnkb).

    Raises :class:`~trnkb.specfile.SpecError` listing every problem; nothing is returned
    unless the whole directory is valid.
    """
    root = Path(path) if path is not None else default_specs_dir()
    if not root.is_dir():
        raise SpecError([f"{root}:0: (dir): not a directory"])
    p = Parsed(root)
    read_sources(p)
    read_tables(p)
    derive_facts(p)
    check_references(p)
    p.raise_if_errors()
    tables = build_tables(p)
    p.raise_if_errors()
    facts = pd.DataFrame(p.facts, columns=FACT_COLUMNS)
    return KnowledgeBase(root, facts, p.sources, tables, find_conflicts(p.facts))
