"""``trnkb claims``: the claims registry with verdicts, their history and seed coverage."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from trnkb.audit.claims.core import Claim


def _print_claims(sel: list[Claim]) -> None:
    from trnkb.audit.claims import claims_table

    for r in claims_table(sel).to_dict("records"):
        print(f"[{r['verdict']}] {r['id']} ({r['source']}): {r['statement']}")
        if r["computed"]:
            print(f"    claimed {r['compare']} {r['claimed']}; computed {r['computed']}")
        if r["why"]:
            print(f"    tolerance {r['tolerance']:g}: {r['why']}")
        if r["reason"]:
            print(f"    {r['reason']}")


def claims_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    verdict: str = typer.Option(None, "--verdict", help="Only this verdict."),
    source: str = typer.Option(None, "--source", help="Only claims from this source id."),
    kind: str = typer.Option(None, "--kind", help="Only this kind: statement, tool, measured."),
    summary: bool = typer.Option(False, "--summary", help="Counts per verdict and source."),
    changed_since: str = typer.Option(None, "--changed-since", metavar="VERSION",
                                      help="Claims whose verdict moved since a release."),
    record: str = typer.Option(None, "--record", metavar="VERSION",
                               help="Record the current verdicts as this release."),
    coverage: bool = typer.Option(False, "--coverage", help="Seed coverage per section."),
    claim_id: str = typer.Option(None, "--id", metavar="ID",
                                 help="One claim explained: statement, locator, formula, "
                                      "inputs with values and sources, tolerance, note, "
                                      "verdict history."),
    grep: str = typer.Option(None, "--grep", metavar="TEXT",
                             help="Only claims whose id, statement, quantity, locator, note or "
                                  "reason contains TEXT (case-insensitive)."),
) -> None:
    """Published statements tested against the knowledge base, with their verdicts.

    --source takes a source id or a seed document's file name (004_406711927e432c17.txt).
    """
    import trnkb
    from trnkb.audit.claims import VERDICTS, validate_claims
    from trnkb.audit.claims.core import KINDS
    from trnkb.cli.validate import choice

    choice(verdict, VERDICTS, "--verdict")
    choice(kind, KINDS, "--kind")
    if grep is not None and not grep.strip():
        raise ValueError("--grep: give some text to search for (an empty one would match "
                         "every claim; leave --grep out for all)")
    kb = trnkb.load()
    if source is not None:  # refused before the claims are evaluated (seconds of CPU)
        source = _source_id(kb, source)
    claims = validate_claims(kb)
    if claim_id is not None:
        _explain(kb, claims, claim_id, as_json)
        return
    if record is not None:
        from trnkb.audit.claims.history import history_path, record_release

        record_release(record, claims, history_path(kb))
        print(f"recorded {len(claims)} verdicts as release {record} in "
              f"{history_path(kb)}")
        return
    if changed_since is not None:
        from trnkb.audit.claims.history import changes_since, history_path

        moved = changes_since(changed_since, claims, history_path(kb))
        if as_json:
            print(json.dumps([m.__dict__ for m in moved], indent=2))
            return
        print(f"{len(moved)} claim(s) changed since {changed_since}:")
        for m in moved:
            print(f"  {m.id}: {m.before} -> {m.after}" + (f"  ({m.statement})"
                                                          if m.statement else ""))
        return
    if coverage:
        from trnkb.audit.claims.coverage import coverage_markdown, coverage_path, coverage_table

        if as_json:
            print(coverage_table(claims, coverage_path(kb)).to_json(orient="records",
                                                                   indent=2))
        else:
            print(coverage_markdown(claims, coverage_path(kb)), end="")
        return
    if source is not None and source not in {c.source for c in claims}:
        from trnkb.spec.specfile import show, suggest

        raise KeyError(f"no claims from source {show(source)}"
                       f"{suggest(source, sorted({c.source for c in claims}))}")
    needle = grep.lower() if grep else None
    sel = [c for c in claims if (verdict is None or c.verdict == verdict)
           and (source is None or c.source == source) and (kind is None or c.kind == kind)
           and (needle is None or needle in " ".join(
               (c.id, c.statement, c.quantity, c.locator, c.note, c.reason)).lower())]
    if summary:
        counts = Counter(c.verdict for c in sel)
        by_source = Counter((c.source, c.verdict) for c in sel)
        by_kind = Counter((c.kind, c.verdict) for c in sel)
        data = {"claims": len(sel), "verdicts": {v: counts.get(v, 0) for v in VERDICTS},
                "by_kind": {k: {v: by_kind.get((k, v), 0) for v in VERDICTS}
                            for k in KINDS if any(c.kind == k for c in sel)},
                "by_source": {s: {v: by_source.get((s, v), 0) for v in VERDICTS}
                              for s in sorted({c.source for c in sel})}}
        if as_json:
            print(json.dumps(data, indent=2))
        else:
            print(f"{data['claims']} claims: " + ", ".join(
                f"{n} {v}" for v, n in data["verdicts"].items()))
            for k, vs in data["by_kind"].items():
                print(f"  kind {k}: " + ", ".join(f"{n} {v}" for v, n in vs.items() if n))
            for s, vs in data["by_source"].items():
                print(f"  {s}: " + ", ".join(f"{n} {v}" for v, n in vs.items() if n))
        return
    if as_json:
        print(json.dumps([c.to_dict() for c in sel], indent=2, default=str))
        return
    _print_claims(sel)


def _source_id(kb: object, text: str) -> str:
    """A source id, or the id of the source whose URL is the seed file ``text``
    (``004_406711927e432c17.txt``, with or without ``.txt``); KeyError when neither."""
    from trnkb.audit.claims import claim_sources
    from trnkb.spec.specfile import show, suggest

    sources = kb.sources  # type: ignore[attr-defined]
    extra = claim_sources(kb)  # type: ignore[arg-type]
    ids = set(sources["id"]) | (set(extra["id"]) if not extra.empty else set())
    if text in ids:
        return text
    seeds = {str(u): str(i) for i, u in zip(sources["id"], sources["url"], strict=True)
             if str(u).endswith(".txt") and "/" not in str(u)}
    seeds.update({u.removesuffix(".txt"): i for u, i in list(seeds.items())})
    if text in seeds:
        return seeds[text]
    raise KeyError(f"unknown source {show(text)} (neither a source id nor a seed file name)"
                   f"{suggest(text, sorted(ids | set(seeds)))}")


def _explain(kb: object, claims: list[Claim], claim_id: str, as_json: bool) -> None:
    from trnkb.audit.claims.explain import explain, explain_text
    from trnkb.spec.specfile import show, suggest

    hit = next((c for c in claims if c.id == claim_id), None)
    if hit is None:
        raise KeyError(f"no claim {show(claim_id)}{suggest(claim_id, [c.id for c in claims])}")
    e = explain(hit, kb)  # type: ignore[arg-type]
    print(json.dumps(e, indent=2, default=str) if as_json else explain_text(e))


def register(app: typer.Typer) -> None:
    app.command("claims")(claims_command)
