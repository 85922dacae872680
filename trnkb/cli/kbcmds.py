"""Knowledge-base commands: validate, list, show, compare, sources, conflicts, export."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

if TYPE_CHECKING:  # imported lazily: `trnkb --help` must not load pandas and pint
    import pint
    from rich.console import Console
    from rich.table import Table

    from trnkb.kb import KnowledgeBase

FORMATS = ("parquet", "csv", "json")  # trnkb.output.export.FORMATS (a test checks they agree)
MISSING = "missing"


def _console() -> Console:
    from rich.console import Console

    return Console()


def _rich_table(*columns: str, title: str | None = None) -> Table:
    """A rich table whose cells wrap (``fold``) and are never cut with an ellipsis."""
    from rich.table import Table

    t = Table(title=title)
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


SpecsOpt = Annotated[Path | None,
                     typer.Option("--specs", help="Spec directory (default: shipped specs).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def value_json(value: object, fact: Any = None) -> dict[str, Any]:
    """The JSON form of one value: ``{"value", "unit", "source", "kind", ...}``."""
    import pint

    from trnkb.units import format_unit

    if isinstance(value, pint.Quantity):
        mag = value.magnitude
        mag = int(mag) if float(mag).is_integer() and abs(mag) < 2**53 else float(mag)
        unit = cast("pint.Unit", value.units)
        out: dict[str, Any] = {"value": mag,
                               "unit": "" if value.dimensionless else format_unit(unit)}
    else:
        out = {"value": value, "unit": ""}
    if fact is not None:
        out.update({"source": fact["source"], "kind": fact["kind"], "locator": fact["locator"]})
        if fact["note"]:
            out["note"] = fact["note"]
        if fact["qualifier"]:
            out["qualifier"] = fact["qualifier"]
        for key in ("density", "direction"):  # '' where the field has no such attribute
            if key in fact and isinstance(fact[key], str) and fact[key]:
                out[key] = fact[key]
    return out


def counts_text(v: dict[str, Any]) -> str:
    """What a value counts, for people: density (dense/sparse/unstated), direction
    (per-direction/bidirectional/unstated) and the qualifier, e.g.
    ``density unstated; dense or sparse not stated``. '' when none applies."""
    parts = [f"{k} {v[k]}" for k in ("density", "direction") if v.get(k)]
    if v.get("qualifier"):
        parts.append(str(v["qualifier"]))
    return "; ".join(parts)


def print_json(obj: object) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def _load(specs: Path | None) -> KnowledgeBase:
    from trnkb.kb import load

    return load(specs)


def row_json(kb: KnowledgeBase, row_id: str) -> dict[str, Any]:
    """Every field of one row: labels as text, values with provenance, missing fields
    marked as such (``"value": null``)."""
    from trnkb.spec.schema import TABLES

    table = kb.table_of(row_id)
    wide = kb.table(table)
    row = wide[wide["id"] == row_id].iloc[0]
    out: dict[str, Any] = {"id": row_id, "table": table}
    for f in TABLES[table].fields:
        if f.kind == "label":
            if f.name in row.index and isinstance(row[f.name], str):
                out[f.name] = row[f.name]
    facts = kb.facts[kb.facts["id"] == row_id]
    names = [f.name for f in TABLES[table].fields if f.kind != "label"]
    names += sorted(set(facts["field"]) - set(names))
    for name in names:
        sub = facts[facts["field"] == name].sort_values("preferred", ascending=False, kind="stable")
        if sub.empty:
            out[name] = _missing(kb, table, name)
            continue
        first = sub.iloc[0]
        entry = value_json(first["value"], first)
        if len(sub) > 1:
            entry["alternatives"] = [value_json(r["value"], r) for _, r in sub.iloc[1:].iterrows()]
        out[name] = entry
    return out


def _missing(kb: KnowledgeBase, table: str, name: str) -> dict[str, Any]:
    from trnkb.spec.schema import TABLES
    from trnkb.units import format_unit

    f = TABLES[table].field(name)
    unit = f.unit if f is not None else ""
    return {"value": None, "unit": format_unit(unit) if unit else "", "source": None,
            "kind": None, "note": "no source in the knowledge base gives this"}


def _cell(v: dict[str, Any], field: str = "") -> str:
    """One value for people: full precision, thousands separators (not in years),
    canonical unit."""
    from trnkb.units import format_number

    if v["value"] is None:
        return MISSING
    x = v["value"]
    if field == "year" or field.endswith("_year"):
        text = str(x)
    else:
        text = format_number(x, sig=15) if isinstance(x, (int, float)) else str(x)
    return f"{text} {v['unit']}".strip()


def _compare_row(kb: KnowledgeBase, table: str, f: str, by_id: dict[str, dict[str, Any]],
                 ids: list[str]) -> tuple[str, list[str | None]]:
    """(label, cells) of one compared field: quantities in the field's display unit
    (``dense_bf16 (TFLOP/s)``) so a row reads across; a qualifier is shown with its value."""
    import pint

    from trnkb.spec.schema import TABLES
    from trnkb.units import format_number, format_unit

    field = TABLES[table].field(f)
    unit = field.unit if field is not None and field.kind == "quantity" else ""
    cells: list[str | None] = []
    for i in ids:
        v = by_id[i]
        if v["value"] is None:
            cells.append(None)
            continue
        q = kb.get(i, f)
        if unit and isinstance(q, pint.Quantity):
            text = format_number(float(q.to(unit).magnitude), sig=15)
        else:
            text = _cell(v, f)
        if v.get("qualifier"):
            text += f" ({v['qualifier']})"
        cells.append(text)
    return (f"{f} ({format_unit(unit)})" if unit else f), cells


def compare_json(kb: KnowledgeBase, ids: list[str]) -> dict[str, Any]:
    """``{"table", "ids", "fields": {field: {id: value-json}}}`` over the union of the
    fields any of the rows has (in schema order); a row without the field gets
    ``{"value": null, ...}``. Raises ``ValueError`` when the ids are from several tables."""
    where = {i: kb.table_of(i) for i in ids}  # KeyError for an unknown id
    tables = sorted(set(where.values()))
    if len(tables) > 1:
        parts = "; ".join(f"{t}: {', '.join(i for i in ids if where[i] == t)}" for t in tables)
        raise ValueError(f"compare needs ids of one table, got {parts}")
    rows = {i: row_json(kb, i) for i in ids}
    names: list[str] = []
    for r in rows.values():
        names += [k for k, v in r.items() if isinstance(v, dict) and k not in names]
    fields = {f: {i: rows[i].get(f) or _missing(kb, tables[0], f) for i in ids} for f in names
              if any(rows[i].get(f, {}).get("value") is not None for i in ids)}
    return {"table": tables[0], "ids": ids, "fields": fields}


def register(app: typer.Typer) -> None:
    @app.command()
    def validate(
        directory: Annotated[Path | None,
                             typer.Argument(help="Spec directory (default: shipped specs).")]
        = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Load and check every spec file (and claim); exit 1 listing every problem."""
        from trnkb.audit import validate as audit_validate

        kb, n_claims = audit_validate(directory)
        summary: dict[str, Any] = {
            "ok": True, "facts": len(kb.facts), "sources": len(kb.sources),
            "rows": {t: len(kb.table(t)) for t in kb.tables}, "conflicts": len(kb.conflicts),
        }
        summary["claims"] = n_claims
        if as_json:
            print_json(summary)
            return
        rows = ", ".join(f"{t} {n}" for t, n in summary["rows"].items())
        claims = f", {n_claims} claims evaluated" if n_claims else ""
        _console().print(f"ok: {summary['facts']} values from {summary['sources']} sources "
                         f"({rows}); "
                         f"{summary['conflicts']} conflicts between sources{claims}")

    @app.command("list")
    def list_(
        table: Annotated[str | None,
                         typer.Argument(help="Table name; omit to list tables.")] = None,
        specs: SpecsOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """List the tables, or the rows of one table."""
        from trnkb.spec.schema import TABLES

        kb = _load(specs)
        if table is None:
            data: list[dict[str, Any]] = [
                {"table": t, "rows": len(kb.table(t)), "description": TABLES[t].description}
                    for t in kb.tables]
            if as_json:
                print_json(data)
                return
            rt = _rich_table("table", "rows", "description")
            for d in data:
                rt.add_row(d["table"], str(d["rows"]), d["description"])
            _console().print(rt)
            return
        if table not in TABLES:
            from trnkb.spec.specfile import show as show_value
            from trnkb.spec.specfile import suggest

            raise KeyError(f"no table {show_value(table)}{suggest(table, TABLES)}; tables are "
                           f"{', '.join(TABLES)}")
        ids = kb.ids(table)
        if as_json:
            print_json([row_json(kb, i) for i in ids])
            return
        wide = kb.table(table)
        labels = [c for c in ("name", "vendor", "status", "category") if c in wide.columns]
        rt = _rich_table("id", *labels, "values", title=f"{table} ({len(ids)} rows)")
        counts = kb.facts[kb.facts["table"] == table].groupby("id").size()
        for _, row in wide.iterrows():
            rt.add_row(row["id"], *[str(row[c]) if isinstance(row[c], str) else "" for c in labels],
                       str(counts.get(row["id"], 0)))
        _console().print(rt)

    @app.command()
    def show(
        row_id: Annotated[str, typer.Argument(metavar="ID", help="A chip, rack, network... id.")],
        specs: SpecsOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Every field of one row with its value, unit and source."""
        kb = _load(specs)
        data = row_json(kb, row_id)
        if as_json:
            print_json(data)
            return
        from rich.markup import escape

        title = " ".join(str(data.get(k, "")) for k in ("id", "name")).strip()
        rt = _rich_table("field", "value", "counts", "source", "kind", "locator",
                         title=escape(f"{title} [{data['table']}]"))
        missing = []
        for name, v in data.items():
            if not isinstance(v, dict):
                continue
            if v["value"] is None:
                missing.append(name)
                continue
            rt.add_row(name, escape(_cell(v, name)), escape(counts_text(v)), v["source"], v["kind"],
                       escape(v["locator"]))
            for alt in v.get("alternatives", []):
                rt.add_row("", "[yellow]" + escape(_cell(alt, name)) + "[/yellow]",
                           escape(counts_text(alt)), alt["source"], alt["kind"],
                           escape(alt["locator"]))
        console = _console()
        console.print(rt)
        if missing:
            console.print(f"[dim]no source gives: {', '.join(missing)}[/dim]")

    @app.command()
    def compare(
        ids: Annotated[list[str], typer.Argument(metavar="ID...",
                                                 help="Ids of one table (chips, racks...).")],
        specs: SpecsOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Side-by-side values of rows of one table (every field any of them has; missing
        shown as missing)."""
        kb = _load(specs)
        data = compare_json(kb, ids)
        if as_json:
            print_json(data)
            return
        from rich.markup import escape

        rt = _rich_table("field", *ids, title=f"{data['table']}: {', '.join(ids)}")
        for f, by_id in data["fields"].items():
            label, cells = _compare_row(kb, data["table"], f, by_id, ids)
            rt.add_row(escape(label), *[f"[dim]{MISSING}[/dim]" if c is None else escape(c)
                                        for c in cells])
        _console().print(rt)
        console = _console()
        console.print(f"[dim]values in the field's unit; {MISSING}: no source gives it; "
                      "--json for sources and alternatives[/dim]")

    @app.command()
    def sources(specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """The bibliography, with how many values cite each source."""
        kb = _load(specs)
        counts = kb.facts.groupby("source").size()
        data = [{**r, "values": int(counts.get(r["id"], 0))} for r in kb.sources.to_dict("records")]
        if as_json:
            print_json(data)
            return
        # one block per source, the id and URL each whole on a line of their own: the
        # terminal may wrap them but nothing is cut
        for d in data:
            print(f"{d['id']}  [{d['kind']}]  {d['values']} values")
            print(f"    {d['publisher']}: {d['title']}")
            print(f"    {d['url']}")

    @app.command()
    def conflicts(specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """Values that disagree between sources (never silently dropped)."""
        kb = _load(specs)
        data = kb.conflicts.to_dict("records")
        for d in data:
            if isinstance(d["relative_difference"], float) and math.isnan(d["relative_difference"]):
                d["relative_difference"] = None
        if as_json:
            print_json(data)
            return
        from rich.markup import escape

        rt = _rich_table("id", "field", "preferred", "other", "diff", "type",
                         title="Conflicts between sources")
        for d in data:
            diff = "" if d["relative_difference"] is None else f"{d['relative_difference']:.1%}"
            rt.add_row(d["id"], d["field"], escape(f"{d['preferred']} ({d['preferred_source']})"),
                       escape(f"{d['other']} ({d['other_source']})"), diff, d["type"])
        _console().print(rt)

    @app.command("export")
    def export_(
        out: Annotated[Path, typer.Option("--out", help="Output directory.")],
        fmt: Annotated[str, typer.Option(
            "--format", help=f"One of {', '.join(FORMATS)}, or all (each format in "
                             "OUT/<format>/, claims included, and OUT/zip/ with a zip of "
                             "everything).")] = "parquet",
        specs: SpecsOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Write every table, facts, sources and conflicts plus a Frictionless datapackage.json."""
        from trnkb.output.export import write_export

        kb = _load(specs)
        if fmt == "all":
            from trnkb.output.export import export_all
            from trnkb.site.seeds import SEEDS

            results = export_all(kb, out, seed_urls={k: v["public_url"] for k, v in SEEDS.items()
                                                     if v.get("public_url")})
            if as_json:
                print_json({"format": "all", "datapackages": [str(r.descriptor)
                                                              for r in results[:-1]],
                            "zip": str(results[-1].descriptor)})
                return
            print(f"wrote {sum(len(r.written) for r in results)} files to {out} "
                  f"(zip: {results[-1].descriptor})")
            return
        result = write_export(kb, out, fmt)
        if as_json:
            print_json({"datapackage": str(result.descriptor), "format": fmt,
                        "files": [p.name for p in result.written]})
            return
        print(f"wrote {len(result.written)} files to {result.descriptor.parent} "
              f"(descriptor: {result.descriptor.name})")
