"""The landing page's generated parts: headline table and chart, the comparisons with their
one-line answers, the version and how to cite.

``docs/index.md`` holds the hand-written paragraph and a ``<!-- trnkb:headline -->``
marker that :func:`landing` replaces when the site is staged.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

import trnkb
from trnkb import charts, compare, display
from trnkb import markdown as md
from trnkb.kb import KnowledgeBase

__all__ = ["HEADLINE_FIELDS", "MARKER", "comparisons", "headline_table", "landing"]

MARKER = "<!-- trnkb:headline -->"
# The figures analysts quote when they compare accelerators.
HEADLINE_FIELDS = ("dense_bf16", "dense_fp8", "hbm_capacity", "hbm_bandwidth",
                   "scaleup_bandwidth", "tdp")


def headline_table(kb: KnowledgeBase) -> pd.DataFrame:
    """One row per headline chip (:data:`trnkb.compare.HEADLINE`), one column per field
    (``field (unit)``), and the sources of the row's values."""
    long = compare.chip_values(kb, compare.HEADLINE, HEADLINE_FIELDS)
    wide = compare.wide(long).T
    src = long.groupby("id")["source"].agg(lambda s: " + ".join(sorted(set(s))))
    out = wide.reset_index(names="chip")
    out.columns = [str(c) for c in out.columns]
    return out.assign(sources=out["chip"].map(src))


def comparisons(notebooks: list[Path]) -> list[tuple[str, str, str]]:
    """``(file stem, title, first sentence of the answer)`` of each notebook."""
    out = []
    for p in notebooks:
        nb = json.loads(p.read_text(encoding="utf-8"))
        title, answer = p.stem, ""
        for c in nb["cells"]:
            src = "".join(c.get("source", ""))
            if c["cell_type"] == "markdown" and title == p.stem and src.startswith("# "):
                title = src.splitlines()[0][2:].strip()
            for o in c.get("outputs", []):
                text = "".join(o.get("data", {}).get("text/markdown", ""))
                if "**Answer.**" in text and not answer:
                    body = text.split("**Answer.**", 1)[1].strip().replace("\\", "")
                    answer = re.split(r"(?<=[.!?])\s+(?=[A-Z])", body)[0]
        out.append((p.stem, title, answer))
    return out


def _citation() -> str:
    cff = Path(__file__).resolve().parents[2] / "CITATION.cff"
    text = cff.read_text(encoding="utf-8") if cff.is_file() else ""
    title = re.search(r'^title:\s*"?(.*?)"?\s*$', text, re.M)
    repo = re.search(r'^repository-code:\s*"?(.*?)"?\s*$', text, re.M)
    cite = (f"The trnkb developers. *{md.escape(title.group(1) if title else 'trnkb')}*, "
            f"version {trnkb.__version__}" + (f". <{repo.group(1)}>" if repo else "") + ".")
    return (f"## How to cite\n\n{cite} Cite the original sources of any figure you quote too "
            "(each links to the [sources](sources.md) page). The machine-readable citation is "
            "`CITATION.cff` in the repository:\n\n```yaml\n" + text.strip() + "\n```\n")


def _caveats(kb: KnowledgeBase) -> list[str]:
    """What the FP8 chart and table rest on (qualified or disputed figures), as a list."""
    long = compare.chip_values(kb, compare.HEADLINE, ["dense_fp8", "dense_fp4"])
    notes = compare.caveats(kb, long)
    if not notes:
        return []
    return ["What the FP8 figures rest on:\n"] + [f"- {md.escape(n)}" for n in notes] + [""]


def landing(kb: KnowledgeBase, notebooks: list[Path], src: Path) -> str:
    """Markdown for the landing page's marker; writes the headline chart into ``src``."""
    long = compare.chip_values(kb, compare.HEADLINE, ["dense_fp8"])
    # a figure whose source does not say dense or sparse is marked on the chart itself
    marked = long.assign(name=[f"{n} *" if q else n for n, q in zip(long["name"],
                                                                   long["qualifier"], strict=True)])
    title = "Trainium3 against its competitors: dense FP8 peak per chip"
    if (long["qualifier"] != "").any():
        title += " (* the source does not say dense or sparse)"
    chart = charts.metric(marked, "dense_fp8", label="Dense FP8 peak", title=title)
    chart.save(str(src / "headline-fp8.svg"), format="svg")
    trn3 = compare.standing(long, "dense_fp8", "trainium3")
    names = display.names(kb)
    lines = [f"**Version {trnkb.__version__}.** "
             f"Trainium3's dense FP8 peak ranks {trn3['rank']} of {trn3['count']} headline chips "
             f"(highest: {names.get(trn3['top'], trn3['top'])}"
             + (", whose source does not say dense or sparse"
                if (long.loc[long["id"] == trn3["top"], "qualifier"] != "").any() else "")
             + ").\n",
             "![Bar chart: dense FP8 peak per chip in TFLOP/s for Trainium3, Trainium2, NVIDIA "
             "B200, GB200, GB300, AMD MI355X, MI455X and Google TPU7x, coloured by vendor]"
             "(headline-fp8.svg)\n",
             display.table(headline_table(kb), kb=kb, sources_page="sources.html",
                           max_columns=8).html.replace("\n", " ") + "\n",
             *_caveats(kb),
             "## Every comparison, answered\n"]
    for stem, title, answer in comparisons(notebooks):
        lines.append(f"- [{md.escape(title)}](notebooks/{stem}.ipynb): {md.escape(answer)}")
    lines += ["- [Explorer](explorer.md): every chip and scale-up domain, sortable and "
              "filterable, with the source of each figure.", "", _citation()]
    return "\n".join(lines)
