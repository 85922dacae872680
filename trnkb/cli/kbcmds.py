"""Knowledge-base commands: validate, list, show, compare, sources, conflicts, export."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Annotated

import pint
import typer
from rich.console import Console
from rich.table import Table as RichTable

import trnkb
from trnkb.export import FORMATS, export
from trnkb.kb import KnowledgeBase
from trnkb.schema import TABLES
from trnkb.specfile import show as show_value
from trnkb.specfile import suggest

console = Console()

SpecsOpt = Annotated[Path | None, typer.Option("--specs", help="Spec directory (default: shipped specs).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def value_json(value, fact=None) -> dict:
    """The JSON form of one value: ``{"value", "unit", "source", "kind", ...}``."""
    if isinstance(value, pint.Quantity):
        mag = value.magnitude
        mag = int(mag) if float(mag).is_integer() and abs(mag) < 2**53 else float(mag)
        out = {"value": mag, "unit": "" if value.dimensionless else f"{value.units:~}"}
    else:
        out = {"value": value, "unit": ""}
    if fact is not None:
        out.update({"source": fact["source"], "kind": fact["kind"], "locator": fact["locator"]})
        if fact["note"]:
            out["note"] = fact["note"]
        if fact["qualifier"]:
            out["qualifier"] = fact["qualifier"]
    return out


def fmt_value(value) -> str:
    if isinstance(value, pint.Quantity):
        if value.dimensionless:
            return f"{value.magnitude:g}"
        return f"{value.magnitude:g} {value.units:~}"
    return str(value)


def print_json(obj) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def _load(specs: Path | None) -> KnowledgeBase:
    return trnkb.load(specs)


def row_json(kb: KnowledgeBase, row_id: str) -> dict:
    """Every field of one row: labels as text, values with provenance, missing fields
    marked as such."""
    table = kb.table_of(row_id)
    wide = kb.table(table)
    row = wide[wide["id"] == row_id].iloc[0]
    out: dict = {"id": row_id, "table": table}
    for f in TABLES[table].fields:
        if f.kind == "label":
            if f.name in row.index and isinstance(row[f.name], str):
                out[f.name] = row[f.name]
    facts = kb.facts[kb.facts["id"] == row_id]
    names = [f.name for f in TABLES[table].fields if f.kind != "label"]
    names += sorted(set(facts["field"]) - set(names))
    for name in names:
        sub = facts[facts["field"] == name].sort_values("preferred", ascending=False)
        if sub.empty:
            out[name] = {"value": None, "unit": TABLES[table].field(name).unit, "source": None,
                         "kind": None, "note": "no source in the knowledge base gives this"}
            continue
        first = sub.iloc[0]
        entry = value_json(first["value"], first)
        if len(sub) > 1:
            entry["alternatives"] = [value_json(r["value"], r) for _, r in sub.iloc[1:].iterrows()]
        out[name] = entry
    return out


def register(app: typer.Typer) -> None:
    @app.command()
    def validate(
        directory: Annotated[Path | None, typer.Argument(help="Spec directory (default: shipped specs).")] = None,
        as_json: JsonOpt = False,
    ):
        """Load and check every spec file (and claim); exit 1 listing every problem."""
        kb = _load(directory)
        n_claims = None
        if importlib.util.find_spec("trnkb.claims") is not None:
            from trnkb.claims import validate_claims

            n_claims = len(validate_claims(kb))
        summary = {
            "ok": True, "facts": len(kb.facts), "sources": len(kb.sources),
            "rows": {t: len(kb.table(t)) for t in kb.tables}, "conflicts": len(kb.conflicts),
        }
        if n_claims is not None:
            summary["claims"] = n_claims
        if as_json:
            print_json(summary)
            return
        rows = ", ".join(f"{t} {n}" for t, n in summary["rows"].items())
        claims = f", {n_claims} claims evaluated" if n_claims is not None else ""
        console.print(f"ok: {summary['facts']} values from {summary['sources']} sources ({rows}); "
                      f"{summary['conflicts']} conflicts between sources{claims}")

    @app.command("list")
    def list_(
        table: Annotated[str | None, typer.Argument(help="Table name; omit to list tables.")] = None,
        specs: SpecsOpt = None,
        as_json: JsonOpt = False,
    ):
        """List the tables, or the rows of one table."""
        kb = _load(specs)
        if table is None:
            data = [{"table": t, "rows": len(kb.table(t)), "description": TABLES[t].description}
                    for t in kb.tables]
            if as_json:
                print_json(data)
                return
            rt = RichTable("table", "rows", "description")
            for d in data:
                rt.add_row(d["table"], str(d["rows"]), d["description"])
            console.print(rt)
            return
        if table not in TABLES:
            raise KeyError(f"no table {show_value(table)}{suggest(table, TABLES)}; tables are "
                           f"{', '.join(TABLES)}")
        ids = kb.ids(table)
        if as_json:
            print_json([row_json(kb, i) for i in ids])
            return
        wide = kb.table(table)
        labels = [c for c in ("name", "vendor", "status", "category") if c in wide.columns]
        rt = RichTable("id", *labels, "values", title=f"{table} ({len(ids)} rows)")
        counts = kb.facts[kb.facts["table"] == table].groupby("id").size()
        for _, row in wide.iterrows():
            rt.add_row(row["id"], *[str(row[c]) if isinstance(row[c], str) else "" for c in labels],
                       str(counts.get(row["id"], 0)))
        console.print(rt)

    @app.command()
    def show(
        row_id: Annotated[str, typer.Argument(metavar="ID", help="A chip, rack, network... id.")],
        specs: SpecsOpt = None,
        as_json: JsonOpt = False,
    ):
        """Every field of one row with its value, unit and source."""
        kb = _load(specs)
        data = row_json(kb, row_id)
        if as_json:
            print_json(data)
            return
        title = " ".join(str(data.get(k, "")) for k in ("id", "name")).strip()
        rt = RichTable("field", "value", "source", "kind", "locator", title=f"{title} [{data['table']}]")
        missing = []
        for name, v in data.items():
            if not isinstance(v, dict):
                continue
            if v["value"] is None:
                missing.append(name)
                continue
            shown = f"{v['value']} {v['unit']}".strip()
            rt.add_row(name, shown, v["source"], v["kind"], v["locator"])
            for alt in v.get("alternatives", []):
                rt.add_row("", f"[yellow]{alt['value']} {alt['unit']}".strip() + "[/yellow]",
                           alt["source"], alt["kind"], alt["locator"])
        console.print(rt)
        if missing:
            console.print(f"[dim]no source gives: {', '.join(missing)}[/dim]")

    @app.command()
    def compare(
        ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Two or more ids of one table.")],
        specs: SpecsOpt = None,
        as_json: JsonOpt = False,
    ):
        """Side-by-side values of rows of one table (fields that any of them has)."""
        kb = _load(specs)
        tables = {kb.table_of(i) for i in ids}
        if len(tables) > 1:
            raise ValueError(f"ids come from different tables ({', '.join(sorted(tables))})")
        rows = {i: row_json(kb, i) for i in ids}
        fields = [f for f in next(iter(rows.values())) if isinstance(next(iter(rows.values()))[f], dict)]
        fields = [f for f in fields if any(rows[i][f]["value"] is not None for i in ids)]
        if as_json:
            print_json({"table": tables.pop(), "ids": ids,
                        "fields": {f: {i: rows[i][f] for i in ids} for f in fields}})
            return
        rt = RichTable("field", *ids)
        for f in fields:
            cells = []
            for i in ids:
                v = rows[i][f]
                cells.append("-" if v["value"] is None else f"{v['value']} {v['unit']}".strip())
            rt.add_row(f, *cells)
        console.print(rt)

    @app.command()
    def sources(specs: SpecsOpt = None, as_json: JsonOpt = False):
        """The bibliography, with how many values cite each source."""
        kb = _load(specs)
        counts = kb.facts.groupby("source").size()
        data = [{**r, "values": int(counts.get(r["id"], 0))} for r in kb.sources.to_dict("records")]
        if as_json:
            print_json(data)
            return
        rt = RichTable("id", "kind", "publisher", "title", "url", "values")
        for d in data:
            rt.add_row(d["id"], d["kind"], d["publisher"], d["title"], d["url"], str(d["values"]))
        console.print(rt)

    @app.command()
    def conflicts(specs: SpecsOpt = None, as_json: JsonOpt = False):
        """Values that disagree between sources (never silently dropped)."""
        kb = _load(specs)
        data = kb.conflicts.to_dict("records")
        for d in data:
            if isinstance(d["relative_difference"], float) and math.isnan(d["relative_difference"]):
                d["relative_difference"] = None
        if as_json:
            print_json(data)
            return
        rt = RichTable("id", "field", "preferred", "other", "diff", "type", title="Conflicts between sources")
        for d in data:
            diff = "" if d["relative_difference"] is None else f"{d['relative_difference']:.1%}"
            rt.add_row(d["id"], d["field"], f"{d['preferred']} ({d['preferred_source']})",
                       f"{d['other']} ({d['other_source']})", diff, d["type"])
        console.print(rt)

    @app.command("export")
    def export_(
        out: Annotated[Path, typer.Option("--out", help="Output directory.")],
        fmt: Annotated[str, typer.Option("--format", help=f"One of {', '.join(FORMATS)}.")] = "parquet",
        specs: SpecsOpt = None,
        as_json: JsonOpt = False,
    ):
        """Write every table, facts, sources and conflicts plus a Frictionless datapackage.json."""
        kb = _load(specs)
        path = export(kb, out, fmt)
        files = sorted(p.name for p in path.parent.iterdir())
        if as_json:
            print_json({"datapackage": str(path), "format": fmt, "files": files})
            return
        console.print(f"wrote {len(files)} files to {path.parent} (descriptor: {path.name})")
