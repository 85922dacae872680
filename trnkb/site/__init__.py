"""Build the static site: ``python -m trnkb.site build/site``.

Stages ``docs/`` (hand-written pages and ``conf.py``), the executed notebooks and pages
generated from the knowledge base (data dictionary, bibliography, conflicts, claims
audit, API reference) into a build directory, then runs Sphinx + myst-nb with stored
notebook outputs. Nothing generated is written into ``docs/``.

The result must open from disk with no network: :func:`external_resources` lists any
script, stylesheet, image or font the built pages would fetch from elsewhere, and
:func:`build` refuses to finish while there is one.

May import: every layer below it: views, compare, output, audit and the models.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

import nbformat
import typer

from trnkb.kb import KnowledgeBase, load
from trnkb.output import export
from trnkb.site import explorer, headtohead, landing, outdir, planner, post, serving_grid
from trnkb.site.pages import (
    all_sources,
    api_page,
    bibliography,
    claims_page,
    conflicts_page,
    data_dictionary,
)
from trnkb.site.seeds import SEEDS
from trnkb.spec.specfile import SpecError

__all__ = ["build", "external_resources", "pages"]

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

REPO = Path(__file__).resolve().parents[2]


def shipped(name: str) -> Path:
    """``docs`` or ``notebooks``: packaged in the wheel (``trnkb/_site/NAME``), else the
    checkout's."""
    packaged = Path(__file__).resolve().parents[1] / "_site" / name
    return packaged if packaged.is_dir() else REPO / name


DOCS = shipped("docs")
NOTEBOOKS = shipped("notebooks")

# Docstring markup slips in the API reference are printed but do not fail the build;
# everything else (broken cross-references, bad notebooks, bad generated pages) does.
DOWNLOAD_FORMATS = export.FORMATS
SEED_URLS = {k: v["public_url"] for k, v in SEEDS.items() if v.get("public_url")}
TOLERATED_WARNINGS = ("docstring of", "didn't match any documents",
                      "more than one target found for cross-reference")


def pages(kb: KnowledgeBase) -> dict[str, str]:
    """The generated pages, file name -> MyST Markdown text."""
    return {
        "data-dictionary.md": data_dictionary(),
        "sources.md": bibliography(kb),
        "conflicts.md": conflicts_page(kb),
        "claims.md": claims_page(kb),
        "api.md": api_page(),
        "explorer.md": explorer.explorer_page(kb),
        "downloads.md": explorer.downloads_page(kb, DOWNLOAD_FORMATS),
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
    return m is not None and not re.search(r"rel=[\"'](stylesheet|preload|modulepreload|icon|"
                                           r"shortcut icon|preconnect|dns-prefetch|manifest)[\"']",
                                           m.group(0))


def _is_answer(cell: Any) -> bool:
    return any("**Answer.**" in str(o.get("data", {}).get("text/markdown", ""))
               for o in cell.get("outputs", []))


def answer_first(text: str) -> str:
    """A notebook (JSON text) as the site shows it: the question, the answer, then the
    tables and charts, with no code.

    Every code cell gets the ``remove-cell`` tag (``remove-input`` when it prints
    something), so a page opens with the question and the answer and reads as a report
    below it. The committed notebook keeps every cell; the page's download button gives it.
    """
    nb = nbformat.reads(text, as_version=4)  # type: ignore[no-untyped-call]
    answer = next((i for i, c in enumerate(nb.cells)
                   if c.cell_type == "code" and _is_answer(c)), None)
    if answer is None:
        return text
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        tags = set(c.metadata.get("tags", []))
        tags.add("remove-input" if c.get("outputs") else "remove-cell")
        c.metadata["tags"] = sorted(tags)
    return str(nbformat.writes(nb))  # type: ignore[no-untyped-call]


def stage(src: Path, kb: KnowledgeBase, docs: Path, notebooks: Path | None,
          progress: bool = False) -> None:
    """Write the Sphinx source tree into ``src``: docs, notebooks, generated pages."""
    shutil.copytree(docs, src, ignore=shutil.ignore_patterns("_build", "__pycache__"),
                    dirs_exist_ok=True)
    nbdir = src / "notebooks"
    nbdir.mkdir(exist_ok=True)
    for nb in sorted(notebooks.glob("*.ipynb")) if notebooks else []:
        (nbdir / nb.name).write_text(answer_first(nb.read_text(encoding="utf-8")), encoding="utf-8")
    for name, text in pages(kb).items():
        (src / name).write_text(text, encoding="utf-8")
    grid = serving_grid.cached_grid(kb, progress=progress)  # the planner's and head-to-heads'

    (src / "planner.md").write_text(planner.planner_page(grid), encoding="utf-8")
    (src / "compare").mkdir(exist_ok=True)
    for name, (page, csv) in headtohead.pair_pages(kb, grid, export.build_info()).items():
        (src / ("compare.md" if name == "compare" else f"compare/{name}.md")).write_text(
            page, encoding="utf-8")
        if csv:
            (src / "compare" / f"{name}.csv").write_text(csv, encoding="utf-8")
    index = src / "index.md"
    text = index.read_text(encoding="utf-8")
    if landing.MARKER in text:
        nbs = sorted(nbdir.glob("*.ipynb"))
        index.write_text(text.replace(landing.MARKER, landing.landing(kb, nbs, src)),
                         encoding="utf-8")


def build(out: str | Path = "build/site", docs: str | Path = DOCS,
          notebooks: str | Path | None = NOTEBOOKS, specs: str | Path | None = None,
          strict: bool = True, progress: bool = False) -> Path:
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
    progress : bool
        Print each step on stderr as it starts (the command line does).
    """
    kb = load(specs)  # a bad spec directory is refused before any directory is touched
    # built beside OUT in a scratch directory, then swapped in whole (trnkb.site.outdir)
    with outdir.rebuild(out, kb.path) as scratch:
        _build_into(scratch, kb, Path(docs), Path(notebooks) if notebooks else None, strict,
                    progress)
        scratch.commit()
        return scratch.out / "index.html"


def _build_into(scratch: outdir.Rebuild, kb: KnowledgeBase, docs: Path, notebooks: Path | None,
                strict: bool, progress: bool) -> None:
    from sphinx.cmd.build import build_main

    src, out = scratch.src, scratch.site

    def step(n: int, what: str) -> None:
        if progress:
            print(f"site: [{n}/4] {what}", file=sys.stderr, flush=True)
    step(1, "staging pages, notebooks and the explorer")
    src.mkdir()
    stage(src, kb, docs, notebooks, progress)
    log = src / "warnings.txt"
    args = ["-b", "html", "-q", "-E", "-w", str(log), "-d", str(src / ".doctrees"),
            str(src), str(out)]
    step(2, "rendering with Sphinx (about a minute)")
    console = io.StringIO()  # Sphinx echoes every warning; the log file keeps them all
    with warnings.catch_warnings(), contextlib.redirect_stderr(console):
        warnings.simplefilter("ignore", DeprecationWarning)  # extensions' notices about Sphinx 11
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        status = build_main(args)
    if status != 0:
        raise RuntimeError(f"sphinx-build failed for {src}:\n{console.getvalue()[-4000:]}")
    lines = [w for w in log.read_text(encoding="utf-8").splitlines() if "WARNING" in w]
    serious = [w for w in lines if not any(x in w for x in TOLERATED_WARNINGS)]
    if strict and serious:
        raise RuntimeError("sphinx warnings in the site's own pages:\n" + "\n".join(serious))
    if len(lines) > len(serious):
        print(f"site: {len(lines) - len(serious)} docstring markup notes in the API reference",
              file=sys.stderr)
    for w in serious:
        print(w, file=sys.stderr)
    # pydata-sphinx-theme copies one of its Jinja templates into _static; it is not a page.
    (out / "_static" / "webpack-macros.html").unlink(missing_ok=True)
    step(3, "writing the downloads (" + ", ".join(DOWNLOAD_FORMATS) + ", claims, a zip)")
    for csv in sorted((src / "compare").glob("*.csv")):  # each head-to-head's download
        (out / "compare").mkdir(exist_ok=True)
        shutil.copyfile(csv, out / "compare" / csv.name)
    # the downloads page links these files: data/<format>/ and data/zip/
    export.export_all(kb, out / "data", seed_urls=SEED_URLS)
    sources = all_sources(kb)
    ids = {sid: sid for sid in sources["id"]}
    ids.update({url: sid for sid, url in zip(sources["id"], sources["url"], strict=True)
                if url in SEEDS})
    step(4, "linking sources and checking the pages")
    fixed = post.finish(out, ids)
    post.stamp(out, export.build_info())
    raw = {k.split(":", 1)[1]: v for k, v in fixed.items() if k.startswith("pages:")}
    if raw:
        print("site: missing cells shown as raw NaN/None, fixed at build "
              "(use trnkb.views.display): "
              + ", ".join(f"{p} ({n})" for p, n in raw.items()), file=sys.stderr)
    bad = external_resources(out)
    if bad:
        raise RuntimeError("the site would load resources from the network:\n" + "\n".join(bad))


@app.command()
def main(
    out: Annotated[Path, typer.Argument(help="Output directory.")] = Path("build/site"),
    specs: Annotated[Path | None, typer.Option(help="Spec directory (default: shipped).")] = None,
    notebooks: Annotated[Path, typer.Option(help="Executed notebooks.")] = NOTEBOOKS,
    strict: Annotated[bool, typer.Option(help="Fail on Sphinx warnings.")] = True,
) -> None:
    """Build the static site into OUT (only ever clearing directories it created)."""
    try:
        index = build(out, specs=specs, notebooks=notebooks, strict=strict, progress=True)
    except (outdir.UnsafeOutput, SpecError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise typer.Exit(1) from None
    print(f"site: {index}")


if __name__ == "__main__":
    app()
