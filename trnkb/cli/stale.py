"""``trnkb stale``: values a newer source of the same kind may have overtaken."""

from __future__ import annotations

import typer

from trnkb.cli.kbcmds import JsonOpt, SpecsOpt, print_json


def stale_command(as_json: JsonOpt = False, specs: SpecsOpt = None) -> None:
    """List values whose source is older than a newer same-kind source on the same row,
    and rows still 'announced' that a shipping system, a price or a device string names.

    'same-field': the newer source gives the same field (the older value is history);
    'same-publisher': the publisher has a newer page for this system, not read for this
    field. Exit 0 either way: the list is for a reviewer, not a failure.
    """
    from trnkb.audit.stale import stale
    from trnkb.kb import load

    result = stale(load(specs))
    if as_json:
        print_json(result)
        return
    older = result["older_values"]
    print(f"{len(older)} value(s) with a newer same-kind source on their row:")
    for r in older:
        mark = "*" if r["preferred"] else " "
        print(f" {mark} {r['id']}.{r['field']}: {r['source']} ({r['date']}) < "
              f"{r['newer_source']} ({r['newer_date']}) [{r['reason']}]")
    used = result["announced_in_use"]
    print(f"{len(used)} row(s) marked announced but in use:")
    for r in used:
        print(f"   {r['id']}: {'; '.join(r['evidence'])}")
    print("(* = the preferred value of its field)")


def register(app: typer.Typer) -> None:
    app.command("stale")(stale_command)
