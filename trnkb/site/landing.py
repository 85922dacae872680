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
from trnkb import compare
from trnkb.kb import KnowledgeBase
from trnkb.site.memory import EXPLANATION, physical_hbm
from trnkb.units import format_number
from trnkb.views import charts, display
from trnkb.views import markdown as md

MARKER = "<!-- trnkb:headline -->"
# The figures analysts quote when they compare accelerators.
HEADLINE_FIELDS = ("dense_bf16", "dense_fp8", "hbm_capacity", "hbm_bandwidth",
                   "scaleup_bandwidth", "tdp")


def headline_table(kb: KnowledgeBase) -> pd.DataFrame:
    """One row per headline chip (:data:`trnkb.compare.HEADLINE`), one column per field
    (``field (unit)``), and the sources of the row's values.

    HBM capacity is shown on the physical basis (:mod:`trnkb.site.memory`) beside the
    vendor's label as written; the label converted to one unit (144 GiB as 154.6 GB) is not
    shown, since it compares two spellings rather than two memories."""
    long = compare.chip_values(kb, compare.HEADLINE, HEADLINE_FIELDS)
    wide = compare.wide(long).T
    src: dict[str, set[str]] = {str(k): set(v) for k, v in long.groupby("id")["source"]}
    out = wide.reset_index(names="chip")
    out.columns = [str(c) for c in out.columns]
    phys = physical_hbm(kb)
    at = next((i for i, c in enumerate(out.columns) if c.startswith("hbm_capacity")),
              len(out.columns) - 1)
    out = out.drop(columns=[c for c in out.columns if c.startswith("hbm_capacity")])
    gib = [phys[c].gib if c in phys else None for c in out["chip"]]
    label = [phys[c].label if c in phys else "" for c in out["chip"]]
    out.insert(at, "HBM physical (GiB)", pd.Series(gib, dtype="Float64", index=out.index))
    out.insert(at + 1, "HBM vendor label", label)
    built = {c: set(p.build_sources) for c, p in phys.items() if p.gib is not None}
    return out.assign(sources=[" + ".join(sorted(src.get(c, set()) | built.get(c, set())))
                               for c in out["chip"]])


def hbm_standing(kb: KnowledgeBase, chip: str = "trainium3") -> str:
    """Where ``chip`` ranks on HBM capacity on the physical basis, among the headline chips
    whose stack build is sourced, with each vendor's label; the chips left out named."""
    phys, names = physical_hbm(kb), display.names(kb)
    built = sorted(((g, c) for c in compare.HEADLINE if c in phys
                    for g in [phys[c].gib] if g is not None), reverse=True)
    mine = phys.get(chip)
    if mine is None or mine.gib is None or not built:
        return ""
    ids = [c for _, c in built]
    top_gib, top = built[0]
    part = (f"HBM capacity {format_number(mine.gib)} GiB physical, labelled {mine.label} "
            f"(rank {ids.index(chip) + 1} of the {len(ids)} chips whose stack build is sourced")
    if top != chip:
        part += (f"; highest {names.get(top, top)} at {format_number(top_gib)} GiB, labelled "
                 f"{phys[top].label}: {format_number(mine.gib / top_gib, sig=3)} of it")
    left = [f"{names.get(c, c)} {phys[c].label}" for c in compare.HEADLINE
            if c in phys and phys[c].gib is None and phys[c].label]
    if left:
        part += "; not ranked, labels only: " + ", ".join(left)
    return part + ")"


def memory_sentence(kb: KnowledgeBase, chip: str = "trainium3") -> str:
    """Like-for-like HBM: ``chip``'s physical capacity over each headline chip's whose stack
    build is sourced, with the explanation (:data:`trnkb.site.memory.EXPLANATION`)."""
    phys, names = physical_hbm(kb), display.names(kb)
    mine = phys.get(chip)
    if mine is None or mine.gib is None:
        return ""
    other = {o: g for o in compare.HEADLINE if o != chip and o in phys
             for g in [phys[o].gib] if g}
    ratios = [f"{names.get(o, o)} {format_number(mine.gib / g, sig=3)} "
              f"({format_number(mine.gib)} / {format_number(g)} GiB; vendor labels "
              f"{mine.label} and {phys[o].label})" for o, g in other.items()]
    if not ratios:
        return ""
    return (f"**Like-for-like memory.** {names.get(chip, chip)}'s HBM on the physical basis "
            f"against " + "; ".join(ratios) + ". " + EXPLANATION)


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


def standings(kb: KnowledgeBase, chip: str = "trainium3") -> str:
    """One sentence: where ``chip`` ranks among the headline chips on each headline field
    (rank 1 = highest, among the chips whose sources give that figure; HBM capacity on the
    physical basis, :func:`hbm_standing`)."""
    long = compare.chip_values(kb, compare.HEADLINE, HEADLINE_FIELDS)
    names = display.names(kb)
    parts, missing = [], []
    for field in HEADLINE_FIELDS:
        label = display.header(field)
        if not (long["field"] == field).any():
            continue
        if field == "hbm_capacity" and hbm_standing(kb, chip):
            parts.append(hbm_standing(kb, chip))
            continue
        s = compare.standing(long, field, chip)
        if s["rank"] is None:
            missing.append(label)
            continue
        part = (f"{label} {format_number(s['value'])} {s['unit']} "
                f"(rank {s['rank']} of {s['count']}")
        sub = long[long["field"] == field]
        top = sub[sub["magnitude"] == s["top_value"]]
        if chip not in set(top["id"]):  # every chip tied at the top is named
            who = [names.get(i, i) + (f" ({q})" if q else "")
                   for i, q in zip(top["id"], top["qualifier"], strict=True)]
            who_text = ", ".join(who[:-1]) + " and " + who[-1] if len(who) > 1 else who[0]
            part += f"; highest {who_text} at {format_number(s['top_value'])}"
        parts.append(part + ")")
    text = f"{names.get(chip, chip)} against the {len(compare.HEADLINE)} headline chips: "
    text += "; ".join(parts) + "."
    if missing:
        text += " No source gives its " + " or ".join(missing) + "."
    return text


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
    names = display.names(kb)
    lines = [f"**Version {trnkb.__version__}.** " + md.escape(standings(kb)) + "\n",
             "![Bar chart: dense FP8 peak per chip in TFLOP/s for "
             + md.escape(", ".join(names.get(i, i) for i in compare.HEADLINE))
             + ", coloured by vendor](headline-fp8.svg)\n",
             display.table(headline_table(kb), kb=kb, sources_page="sources.html",
                           max_columns=10).html.replace("\n", " ") + "\n",
             md.escape(memory_sentence(kb)).replace("\\*\\*", "**") + "\n",
             *_caveats(kb),
             "## Every comparison, answered\n"]
    for stem, title, answer in comparisons(notebooks):
        lines.append(f"- [{md.escape(title)}](notebooks/{stem}.ipynb): {md.escape(answer)}")
    lines += ["- [Explorer](explorer.md): every chip and scale-up domain, sortable and "
              "filterable, with the source of each figure.",
              "- [Planner](planner.md): serving a model at a tokens/s-per-user target, under a "
              "$/Mtok ceiling or a power budget, and training it on N tokens, on each headline "
              "system, with ranges and the inputs that move them.",
              "- [Head-to-head](compare.md): every pair of the nine headline systems side by "
              "side, with a CSV each.", "", _citation()]
    return "\n".join(lines)
