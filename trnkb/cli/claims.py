"""``trnkb claims``: the claims registry with verdicts."""

from __future__ import annotations

import json
from collections import Counter

import typer

from trnkb.specfile import show, suggest


def claims_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    verdict: str = typer.Option(None, "--verdict", help="Only this verdict."),
    source: str = typer.Option(None, "--source", help="Only claims from this source id."),
    summary: bool = typer.Option(False, "--summary", help="Counts per verdict and source."),
) -> None:
    """Published statements tested against the knowledge base, with their verdicts."""
    import trnkb
    from trnkb.claims import VERDICTS, claims_table, validate_claims
    from trnkb.cli.validate import choice

    choice(verdict, VERDICTS, "--verdict")
    kb = trnkb.load()
    if source is not None and source not in set(kb.sources["id"]):
        raise KeyError(f"no source {show(source)}{suggest(source, kb.sources['id'])}")
    claims = validate_claims(kb)
    sel = [c for c in claims if (verdict is None or c.verdict == verdict)
           and (source is None or c.source == source)]
    if summary:
        counts = Counter(c.verdict for c in sel)
        by_source = Counter((c.source, c.verdict) for c in sel)
        data = {"claims": len(sel), "verdicts": {v: counts.get(v, 0) for v in VERDICTS},
                "by_source": {s: {v: by_source.get((s, v), 0) for v in VERDICTS}
                              for s in sorted({c.source for c in sel})}}
        if as_json:
            print(json.dumps(data, indent=2))
        else:
            print(f"{data['claims']} claims: " + ", ".join(
                f"{n} {v}" for v, n in data["verdicts"].items()))
            for s, vs in data["by_source"].items():
                print(f"  {s}: " + ", ".join(f"{n} {v}" for v, n in vs.items() if n))
        return
    if as_json:
        print(json.dumps([c.to_dict() for c in sel], indent=2, default=str))
        return
    for r in claims_table(sel).itertuples():
        print(f"[{r.verdict}] {r.id} ({r.source}): {r.statement}")
        if r.computed:
            print(f"    claimed {r.compare} {r.claimed}; computed {r.computed}")
        if r.reason:
            print(f"    {r.reason}")


def register(app: typer.Typer) -> None:
    app.command("claims")(claims_command)
