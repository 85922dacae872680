"""Build the static site: ``python -m trnkb.site build/site``.

Stages ``docs/`` (hand-written pages and ``conf.py``), the executed notebooks and pages
generated from the knowledge base (data dictionary, bibliography, conflicts, claims
audit, API reference) into a build directory, then runs Sphinx + myst-nb with stored
notebook outputs. Nothing generated is written into ``docs/``.

The result must open from disk with no network: :func:`external_resources` lists any
script, stylesheet, image or font the built pages would fetch from elsewhere, and
:func:`build` refuses to finish while there is one.
"""

from __future__ import annotations

import os
import pkgutil
import re
import shutil
import sys
import warnings
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

import trnkb
from trnkb import claims
from trnkb import markdown as md
from trnkb.kb import KnowledgeBase, load
from trnkb.schema import TABLES, Table
from trnkb.site import outdir
from trnkb.specfile import SpecError

__all__ = ["build", "external_resources", "pages"]

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

REPO = Path(__file__).resolve().parent.parent
# Modules left out of the API reference: command-line plumbing.
PRIVATE_MODULES = ("trnkb.cli", "trnkb.__main__")
# Docstring markup slips in the API reference are printed but do not fail the build;
# everything else (broken cross-references, bad notebooks, bad generated pages) does.
TOLERATED_WARNINGS = ("docstring of", "didn't match any documents")


def _field_rows(table: Table) -> pd.DataFrame:
    rows = []
    for f, pattern in [(f, f.name) for f in table.fields] + [(f, f"{f.name}*") for f in table.prefix_fields]:
        if f.kind == "quantity":
            rng = f"{f.lo:g} to {f.hi:g} {f.unit}"
        elif f.kind == "count" and f.lo is not None:
            rng = f"{f.lo:g} to {f.hi:g}"
        elif f.choices:
            rng = ", ".join(f.choices)
        else:
            rng = ""
        kind = f"ref → {f.ref}" if f.kind == "ref" else f.kind
        rows.append({"field": pattern, "kind": kind, "unit": f.unit, "range": rng,
                     "required": "yes" if f.required else "", "meaning": f.description})
    return pd.DataFrame(rows)


def data_dictionary() -> str:
    """Markdown: every table and field of :data:`trnkb.schema.TABLES`."""
    out = ["# Data dictionary\n",
           "Generated from `trnkb/schema.py`. Quantities are stored with their unit as the "
           "source writes it and shown in the unit below; `range` is the plausible range "
           "outside which a value is refused. `kind` is `quantity` (with a unit), `count`, "
           "`text` (sourced text), `ref` (the id of a row in another table) or `label` "
           "(plain, unsourced name or class).\n"]
    for t in TABLES.values():
        out += [f"## {md.escape(t.name)}\n", md.escape(t.description) + "\n",
                md.table(_field_rows(t))]
    return "\n".join(out)


def bibliography(kb: KnowledgeBase) -> str:
    """Markdown: every source in ``sources.yaml`` with the number of values citing it."""
    counts = kb.facts["source"].value_counts()
    df = kb.sources.sort_values("id").assign(
        title=[md.link(t, u) for t, u in zip(kb.sources.sort_values("id")["title"],
                                              kb.sources.sort_values("id")["url"], strict=True)],
        values=lambda d: [int(counts.get(i, 0)) for i in d["id"]],
    )
    seeds = df["url"].where(~df["url"].str.startswith(("http://", "https://")), "")
    df = df.assign(document=seeds)[["id", "title", "publisher", "date", "kind", "document", "values"]]
    return ("# Sources\n\nEvery source the knowledge base cites (`specs/sources.yaml`). "
            "`document` names a seed file for sources that are not on the web; `values` "
            "counts the spec values that cite the source.\n\n" + md.table(df, raw=("title",)))


def conflicts_page(kb: KnowledgeBase) -> str:
    """Markdown: values of one field that disagree between sources."""
    c = kb.conflicts
    head = ("# Conflicts between sources\n\nWhere sources disagree beyond a field's tolerance "
            "the knowledge base keeps every value; the preferred one is used in tables. "
            "`type` is `value` (different figures), `unit-ambiguity` (the same number with "
            "decimal and binary prefixes, e.g. GB vs GiB) or `text`.\n\n")
    if c.empty:
        return head + "No conflicts in the current knowledge base.\n"
    return head + md.table(c.assign(relative_difference=c["relative_difference"].map(
        lambda x: "" if pd.isna(x) else f"{x:.1%}")))


def claims_page(kb: KnowledgeBase) -> str:
    """Markdown: every claim of ``specs/claims.yaml`` with its verdict, by verdict."""
    df = claims.claims_table(claims.validate_claims(kb))
    counts = df["verdict"].value_counts()
    out = ["# Claims audit\n",
           "Every published statement in `specs/claims.yaml` (paraphrased), recomputed from "
           "the knowledge base with the calculators, and the verdict that follows: "
           + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in claims.VERDICTS) + ". "
           "`claimed` is what the source says, `computed` what the knowledge base gives. "
           "Claims are evaluated when the site is built; the notebook "
           "[09 claims audit](notebooks/09-claims-audit.ipynb) shows them by source.\n"]
    df = df.assign(relative_difference=df["relative_difference"].map(
        lambda x: "" if pd.isna(x) else f"{x:.1%}"))
    for verdict in claims.VERDICTS:
        sub = df[df["verdict"] == verdict].drop(columns="verdict")
        if len(sub):
            out += [f"## {verdict.capitalize()} ({len(sub)})\n", md.table(sub)]
    return "\n".join(out)


def _public_modules() -> list[tuple[str, bool]]:
    """``(module name, is a package)`` for every public module, sorted."""
    names = [("trnkb", True)]
    for m in pkgutil.walk_packages(trnkb.__path__, "trnkb."):
        if not m.name.startswith(PRIVATE_MODULES) and not m.name.split(".")[-1].startswith("_"):
            names.append((m.name, m.ispkg))
    return sorted(names)


def api_page() -> str:
    """MyST page with an autodoc section per public module.

    Packages re-export their modules' names, so their entries are not indexed: every
    cross-reference then resolves to the one place a name is defined.
    """
    out = ["# API reference\n",
           "The public names of `trnkb` and its modules (numpydoc docstrings state units "
           "and formulas). `import trnkb; kb = trnkb.load()` is the entry point.\n"]
    for name, package in _public_modules():
        opts = ["   :members:\n"] + (["   :no-index:\n"] if package else [])
        out.append(f"## `{name}`\n\n```{{eval-rst}}\n.. automodule:: {name}\n"
                   + "".join(opts) + "```\n")
    return "\n".join(out)


def pages(kb: KnowledgeBase) -> dict[str, str]:
    """The generated pages, file name -> MyST Markdown text."""
    return {
        "data-dictionary.md": data_dictionary(),
        "sources.md": bibliography(kb),
        "conflicts.md": conflicts_page(kb),
        "claims.md": claims_page(kb),
        "api.md": api_page(),
    }


_RESOURCE = re.compile(r"""<(script|link|img|iframe|source)\b[^>]*?\b(src|href)=["']([^"']+)["']""",
                       re.IGNORECASE)
_CSS_URL = re.compile(r"""url\(\s*["']?([^"')]+)["']?\s*\)""")


def external_resources(site: Path) -> list[str]:
    """``file: url`` for every resource a built page or stylesheet would load from the network.

    Plain ``<a href>`` links to the web are fine (they are links, not loads); scripts,
    stylesheets, images, frames and CSS ``url()`` targets must be local.
    """
    found = []
    for p in sorted(site.rglob("*")):
        if p.suffix == ".html":
            text = p.read_text(encoding="utf-8", errors="replace")
            urls = [u for tag, attr, u in _RESOURCE.findall(text)
                    if not (tag.lower() == "link" and _is_nav_link(text, u))]
        elif p.suffix == ".css":
            urls = _CSS_URL.findall(p.read_text(encoding="utf-8", errors="replace"))
        else:
            continue
        found += [f"{p.relative_to(site)}: {u}" for u in urls if re.match(r"^(https?:)?//", u)]
    return found


def _is_nav_link(html: str, url: str) -> bool:
    # <link rel="index"/"search"/"next"...> are navigation hints, never fetched.
    m = re.search(r"<link\b[^>]*href=[\"']" + re.escape(url) + r"[\"'][^>]*>", html)
    return bool(m) and not re.search(r"rel=[\"'](stylesheet|preload|modulepreload|icon|"
                                     r"shortcut icon|preconnect|dns-prefetch|manifest)[\"']", m.group(0))


def stage(src: Path, kb: KnowledgeBase, docs: Path, notebooks: Path | None) -> None:
    """Write the Sphinx source tree into ``src``: docs, notebooks, generated pages."""
    shutil.copytree(docs, src, ignore=shutil.ignore_patterns("_build", "__pycache__"),
                    dirs_exist_ok=True)
    nbdir = src / "notebooks"
    nbdir.mkdir(exist_ok=True)
    for nb in sorted(notebooks.glob("*.ipynb")) if notebooks else []:
        shutil.copy2(nb, nbdir / nb.name)
    for name, text in pages(kb).items():
        (src / name).write_text(text, encoding="utf-8")


def build(out: str | Path = "build/site", docs: str | Path = REPO / "docs",
          notebooks: str | Path | None = REPO / "notebooks", specs: str | Path | None = None,
          strict: bool = True) -> Path:
    """Build the site into ``out`` and return the path of its ``index.html``.

    Parameters
    ----------
    docs : path
        Hand-written pages and ``conf.py``.
    notebooks : path or None
        Executed notebooks to include (their stored outputs are rendered, not re-run).
    specs : path, optional
        Spec directory for the generated pages; default the shipped specs.
    strict : bool
        Fail on Sphinx warnings other than :data:`TOLERATED_WARNINGS`.
    """
    from sphinx.cmd.build import build_main

    kb = load(specs)  # a bad spec directory is refused before any directory is touched
    out = Path(os.path.abspath(out))
    src = out.parent / f"{out.name}-src"
    outdir.check(out, kb.path)
    outdir.check(src, kb.path)
    stage(outdir.claim(src, kb.path), kb, Path(docs), Path(notebooks) if notebooks else None)
    outdir.claim(out, kb.path)
    log = src / "warnings.txt"
    args = ["-b", "html", "-q", "-E", "-w", str(log), "-d", str(src / ".doctrees"),
            str(src), str(out)]
    with warnings.catch_warnings():  # extensions' deprecation notices about Sphinx 11
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        status = build_main(args)
    if status != 0:
        raise RuntimeError(f"sphinx-build failed for {src}")
    serious = [w for w in log.read_text(encoding="utf-8").splitlines()
               if "WARNING" in w and not any(x in w for x in TOLERATED_WARNINGS)]
    if strict and serious:
        raise RuntimeError("sphinx warnings in the site's own pages:\n" + "\n".join(serious))
    # pydata-sphinx-theme copies one of its Jinja templates into _static; it is not a page.
    (out / "_static" / "webpack-macros.html").unlink(missing_ok=True)
    bad = external_resources(out)
    if bad:
        raise RuntimeError("the site would load resources from the network:\n" + "\n".join(bad))
    return out / "index.html"


@app.command()
def main(
    out: Annotated[Path, typer.Argument(help="Output directory.")] = Path("build/site"),
    specs: Annotated[Path | None, typer.Option(help="Spec directory (default: shipped).")] = None,
    notebooks: Annotated[Path, typer.Option(help="Executed notebooks.")] = REPO / "notebooks",
    strict: Annotated[bool, typer.Option(help="Fail on Sphinx warnings.")] = True,
) -> None:
    """Build the static site into OUT (only ever clearing directories it created)."""
    try:
        index = build(out, specs=specs, notebooks=notebooks, strict=strict)
    except (outdir.UnsafeOutput, SpecError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise typer.Exit(1) from None
    print(f"site: {index}")


if __name__ == "__main__":
    app()
