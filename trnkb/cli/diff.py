"""``trnkb diff OLD NEW``: values, sources, conflicts and verdicts that changed."""

from __future__ import annotations

import json
from collections import Counter

import typer


def diff_command(
    old: str = typer.Argument(
        ..., help="Spec directory or git revision (tag, commit) of the older version."
    ),
    new: str | None = typer.Argument(
        None,
        help="Spec directory or git revision of the newer "
        "version (default: the specs trnkb ships).",
    ),
    repo: str | None = typer.Option(
        None,
        "--repo",
        help="Git checkout that revisions are read "
        "from (default: the checkout trnkb runs from, else the "
        "current directory).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List what changed between two versions of the knowledge base.

    What a data user checks before upgrading: values (compared in SI base units, so a
    respelled unit is not a change), sources, conflicts and claim verdicts. A git revision
    is read with its own code, so older spec formats still load.

    Example: ``trnkb diff cc65f25`` (the 0.1.0 release against the specs of this checkout).
    """
    from pathlib import Path

    from trnkb.kb import default_specs_dir
    from trnkb.views.diff import diff

    specs = default_specs_dir()
    for name, given in (("OLD", old), ("NEW", new), ("--repo", repo)):
        if given is not None and not given.strip():
            raise ValueError(f"{name}: empty; give a spec directory or a git revision")
    if repo is not None and not Path(repo).is_dir():
        raise ValueError(f"--repo: {repo[:200]!r} is not a directory (a git checkout)")
    if repo is None:
        checkout = specs.parent
        repo = str(checkout) if (checkout / ".git").exists() else "."
    changes = diff(old, new if new is not None else str(specs), Path(repo))
    if as_json:
        print(
            json.dumps(
                [
                    {"what": c.what, "status": c.status, "key": c.key, "old": c.old, "new": c.new}
                    for c in changes
                ],
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    for c in changes:
        if c.status == "changed":
            print(f"~ {c.what} {c.key}: {c.old} -> {c.new}")
        else:
            print(f"{'+' if c.status == 'added' else '-'} {c.what} {c.key}: {c.new or c.old}")
    counts = Counter((c.what, c.status) for c in changes)
    summary = ", ".join(f"{n} {what}(s) {status}" for (what, status), n in sorted(counts.items()))
    print(f"{len(changes)} change(s)" + (f": {summary}" if summary else ""))


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
