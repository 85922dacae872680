"""The closing summary of ``make report``: what the run found, in a few lines.

``python -m trnkb.site.summary --site build/site --notebooks notebooks`` prints the number
of values, sources and conflicts, claims by verdict, the derived-versus-reported check,
the notebooks executed and where the site is. Expected findings (conflicts, contradicted
claims, derived values that differ from reported ones) are counts here, not failures:
the details are on the site's pages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def summary(site: Path, notebooks: Path, specs: Path | None = None) -> list[str]:
    """The summary lines (plain text)."""
    from trnkb.audit import claims
    from trnkb.audit.check import THRESHOLD, check
    from trnkb.kb import load
    from trnkb.site.pages import all_sources

    kb = load(specs)
    conflicts: Any = kb.conflicts["type"].value_counts() if len(kb.conflicts) else {}
    verdicts = claims.claims_table(claims.validate_claims(kb))["verdict"].value_counts()
    pairs = check(kb)
    flagged = int(pairs["flagged"].sum()) if len(pairs) else 0
    nbs = sorted(notebooks.glob("*.ipynb"))
    pages = [p for p in site.rglob("*.html") if "_static" not in p.parts] if site.is_dir() else []
    index = site / "index.html"
    return [
        "summary",
        f"  values     {len(kb.facts):,} from {len(kb.sources):,} sources; "
        f"{len(all_sources(kb)):,} sources with the claim files' own (the sources page)",
        f"  conflicts  {len(kb.conflicts):,} kept and listed ("
        + ", ".join(f"{n} {t}" for t, n in dict(conflicts).items())
        + ")",
        "  claims     "
        + ", ".join(
            f"{int(verdicts.get(v, 0))} {v}" for v in ("supported", "contradicted", "unverifiable")
        ),
        f"  derived    {len(pairs)} values recomputed; {flagged} differ from the reported "
        f"figure by more than {THRESHOLD:.0%} (listed by `trnkb check`)",
        f"  notebooks  {len(nbs)} executed ({', '.join(p.stem[:2] for p in nbs)})",
        f"  site       {len(pages)} pages: "
        f"{index if index.is_file() else str(site) + ' (not built)'}",
    ]


@app.command()
def main(
    site: Annotated[Path, typer.Option(help="Built site directory.")] = Path("build/site"),
    notebooks: Annotated[Path, typer.Option(help="Notebook folder.")] = Path("notebooks"),
    specs: Annotated[Path | None, typer.Option(help="Spec directory (default: shipped).")] = None,
) -> None:
    """Print the summary of a report run."""
    print("\n".join(summary(site, notebooks, specs)))


if __name__ == "__main__":
    app()
