"""``trnkb audit``: other tools' hardware constants checked live against the KB."""

from __future__ import annotations

import json

import typer

audit_app = typer.Typer(
    help="Compare another tool's hardware constants with the knowledge base.", no_args_is_help=True
)


@audit_app.command("mlsysim")
def mlsysim_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    all_rows: bool = typer.Option(False, "--all", help="Also list the constants that agree."),
) -> None:
    """Compare the installed MLSys·im hardware registry with the KB; print disagreements
    with both sources."""
    import trnkb
    from trnkb.audit.claims.audit import MissingTool, audit_mlsysim
    from trnkb.units import format_quantity

    kb = trnkb.load()
    try:
        version, rows = audit_mlsysim(kb)
    except MissingTool as e:
        raise ValueError(str(e)) from None
    bad = [r for r in rows if not r.agrees]
    if as_json:
        print(
            json.dumps(
                {
                    "mlsysim": version,
                    "compared": len(rows),
                    "disagree": len(bad),
                    "rows": [
                        {
                            "claim": r.claim,
                            "mlsysim_key": r.key,
                            "kb_field": r.kb_field,
                            "mlsysim": None
                            if r.tool_value is None
                            else format_quantity(r.tool_value, sig=6),
                            "kb": format_quantity(r.kb_value, sig=6),
                            "kb_source": r.kb_source,
                            "agrees": r.agrees,
                            "changed_since_recorded": r.changed,
                            "why": r.diagnosis,
                        }
                        for r in (rows if all_rows else bad)
                    ],
                },
                indent=2,
            )
        )
        return
    print(f"mlsysim {version}: {len(rows)} constants compared, {len(bad)} disagree with the KB")
    for r in rows if all_rows else bad:
        mark = "ok  " if r.agrees else "DIFF"
        tv = "missing" if r.tool_value is None else format_quantity(r.tool_value, sig=6)
        kv = format_quantity(r.kb_value, sig=6)
        print(
            f"{mark} {r.kb_field}: mlsysim {tv} (mlsysim/hardware/data/cloud/"
            f"{r.key.split(':')[0]}.yaml {r.key.split(':')[1]}) vs KB {kv} "
            f"({r.kb_source})"
            + (f" -- {r.diagnosis}" if r.diagnosis else "")
            + (" [changed since recorded]" if r.changed else "")
        )


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")
