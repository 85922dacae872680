"""Head-to-head pages: ``compare/<a>-vs-<b>.html`` for every pair of the nine headline systems.

Each page puts two systems side by side: their chips' headline figures with the source of
each and the ratio (HBM on the physical basis, :mod:`trnkb.site.memory`), the conflicts
the KB records for either chip, and serving one reference workload on both (from the
build-time grid of :mod:`trnkb.site.serving_grid`: tokens/s per chip and per MW, cost per
million tokens, TTFT and TPOT with their ranges, and both throughput-interactivity
curves). A ranking is stated only where the ranges do not overlap. The page carries
JSON-LD (schema.org ``Dataset``) for search engines and language models, and links a CSV
of the same comparison (``<a>-vs-<b>.csv``, written beside the page).
"""

from __future__ import annotations

import html
import io
import json
from itertools import combinations
from typing import Any

import pandas as pd

from trnkb.kb import KnowledgeBase
from trnkb.site.memory import EXPLANATION, physical_hbm
from trnkb.site.serving_grid import HEADLINE_SYSTEMS, METRICS, key
from trnkb.spec.schema import TABLES
from trnkb.units import format_number
from trnkb.views.display import short_name

# The reference workload of every page: (model, precision, chips, input, output).
REFERENCE = ("llama-3-1-70b", "fp8", 8, 2048, 512)
_FIELDS = ("dense_bf16", "dense_fp8", "dense_fp4", "hbm_capacity", "hbm_bandwidth",
           "scaleup_bandwidth", "tdp")


def slug(a: str, b: str) -> str:
    """``<a>-vs-<b>``: the page's and the CSV's file name, without extension."""
    return f"{a}-vs-{b}"


def _spec_rows(kb: KnowledgeBase, a: str, b: str) -> list[dict[str, Any]]:
    ca, cb = str(kb.get(a, "chip")), str(kb.get(b, "chip"))
    phys = physical_hbm(kb)
    rows: list[dict[str, Any]] = []
    for f in _FIELDS:
        spec = TABLES["chips"].field(f)
        unit = spec.unit if spec else ""
        vals, srcs, quals = [], [], []
        for c in (ca, cb):
            v = kb.get(c, f)
            p = kb.provenance(c, f) if v is not None else {}
            vals.append(float(v.to(unit).magnitude) if v is not None else None)
            srcs.append(str(p.get("source", "")))
            quals.append(str(p.get("qualifier", "") or ""))
        rows.append({"figure": f, "unit": unit.replace("TFLOPS", "TFLOP/s"), "a": vals[0],
                     "b": vals[1], "source_a": srcs[0], "source_b": srcs[1],
                     "qualifier": "; ".join(q for q in quals if q)})
        if f == "hbm_capacity":
            pa, pb = phys.get(ca), phys.get(cb)
            ga = pa.gib if pa else None
            gb = pb.gib if pb else None
            rows.append({"figure": "hbm_physical (stacks x dies x die density)", "unit": "GiB",
                         "a": ga, "b": gb,
                         "source_a": " + ".join(pa.build_sources) if pa and ga else "",
                         "source_b": " + ".join(pb.build_sources) if pb and gb else "",
                         "qualifier": f"vendor labels: {pa.label if pa else '?'} / "
                                      f"{pb.label if pb else '?'}"})
    for f in ("domain_size", "rack_power"):
        vals, srcs = [], []
        for s in (a, b):
            v = kb.get(s, f)
            vals.append(float(v.magnitude) if v is not None and hasattr(v, "magnitude") else None)
            srcs.append(str(kb.provenance(s, f)["source"]) if v is not None else "")
        spec = TABLES["racks"].field(f)
        rows.append({"figure": f, "unit": (spec.unit if spec else "") or "", "a": vals[0],
                     "b": vals[1], "source_a": srcs[0], "source_b": srcs[1], "qualifier": ""})
    for r in rows:
        r["ratio"] = (r["a"] / r["b"]) if r["a"] and r["b"] else None
        if r["figure"] == "hbm_capacity":  # vendor labels on two bases: compare physically
            r["ratio"] = None
            r["qualifier"] = "; ".join(str(x) for x in (r["qualifier"], "vendor-label basis, "
                                                        "not compared: see the physical row")
                                       if x)
    return rows


def _serving(grid: dict[str, Any], a: str, b: str) -> tuple[list[dict[str, Any]], Any, Any]:
    m, prec, chips, i, o = REFERENCE
    pa = grid["points"].get(key(m, a, prec, chips, i, o), {})
    pb = grid["points"].get(key(m, b, prec, chips, i, o), {})
    rows = []
    for name, label, unit, _ in METRICS:
        va, vb = pa.get(name), pb.get(name)
        if not va or not vb:
            continue
        lower_better = name in ("usd_per_million_tokens", "ttft", "tpot")
        overlap = va[1] <= vb[2] and vb[1] <= va[2]
        if overlap:
            verdict = "indistinguishable within the ranges"
        else:
            first_wins = (va[0] < vb[0]) == lower_better
            verdict = f"{'A' if first_wins else 'B'} {'lower' if lower_better else 'higher'}"
        rows.append({"metric": label, "unit": unit, "a": va[0],
                     "a_range": f"{va[1]:g} to {va[2]:g}", "b": vb[0],
                     "b_range": f"{vb[1]:g} to {vb[2]:g}", "verdict": verdict})
    return rows, pa, pb


def _curves_svg(pa: dict[str, Any], pb: dict[str, Any], na: str, nb: str) -> str:
    ca, cb = pa.get("curve") or [], pb.get("curve") or []
    if not ca or not cb:
        return ""
    W, H, L, R, T, B = 640, 340, 70, 20, 20, 50
    xmax = max(c[1] for c in ca + cb) * 1.05
    ymax = max(c[2] for c in ca + cb) * 1.05

    def path(cs: list[list[float]]) -> str:
        return "".join(f"{'L' if k else 'M'}{L + c[1] / xmax * (W - L - R):.1f},"
                       f"{H - B - c[2] / ymax * (H - T - B):.1f}" for k, c in enumerate(cs))
    e = html.escape
    return (f'<svg role="img" width="{W}" height="{H}" aria-label="throughput against '
            f'interactivity for {e(na)} and {e(nb)}" class="trnkb-h2h-curve">'
            f'<line x1="{L}" x2="{W - R}" y1="{H - B}" y2="{H - B}" stroke="#888"/>'
            f'<line x1="{L}" x2="{L}" y1="{T}" y2="{H - B}" stroke="#888"/>'
            f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle" font-size="11">'
            f"tokens/s per user (0 to {format_number(xmax, sig=3)})</text>"
            f'<text transform="translate(16,{(T + H - B) / 2}) rotate(-90)" text-anchor="middle" '
            f'font-size="11">tokens/s per chip (0 to {format_number(ymax, sig=3)})</text>'
            f'<path d="{path(ca)}" fill="none" stroke="#ea580c" stroke-width="2"/>'
            f'<path d="{path(cb)}" fill="none" stroke="#2563eb" stroke-width="2"/>'
            f'<text x="{W - R}" y="{T + 12}" text-anchor="end" font-size="11" fill="#ea580c">'
            f"A: {e(na)}</text>"
            f'<text x="{W - R}" y="{T + 28}" text-anchor="end" font-size="11" fill="#2563eb">'
            f"B: {e(nb)}</text></svg>")


def _cell(x: Any) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "—"
    return format_number(x, sig=4) if isinstance(x, (int, float)) else html.escape(str(x))


def _table(rows: list[dict[str, Any]], cols: list[tuple[str, str]]) -> str:
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for _, h in cols)
    body = "".join("<tr>" + "".join(
        f'<td class="num">{_cell(r[k])}</td>' if isinstance(r[k], (int, float))
        and r[k] is not None else f"<td>{_cell(r[k])}</td>" for k, _ in cols) + "</tr>"
        for r in rows)
    return (f'<div class="trnkb-table-wrap"><table class="trnkb-table"><thead><tr>{head}</tr>'
            f"</thead><tbody>{body}</tbody></table></div>")


def _page(kb: KnowledgeBase, grid: dict[str, Any], a: str, b: str,
          info: dict[str, str]) -> tuple[str, str]:
    """(MyST page, CSV text) of one pair."""
    chip_names = dict(zip(kb.table("chips")["id"], kb.table("chips")["name"], strict=True))
    names = {s: short_name(str(chip_names.get(str(kb.get(s, "chip")), s))) for s in (a, b)}
    na, nb = f"{a} ({names[a]})", f"{b} ({names[b]})"
    specs = _spec_rows(kb, a, b)
    serving, pa, pb = _serving(grid, a, b)
    chips = {str(kb.get(a, "chip")), str(kb.get(b, "chip"))}
    c = kb.conflicts
    conf = c[c["id"].isin(chips)][["id", "field", "preferred", "preferred_source", "other",
                                   "other_source", "type"]]
    model, prec, nchips, i, o = REFERENCE
    title = f"{names[a]} vs {names[b]}: {a} against {b}"
    ld = {
        "@context": "https://schema.org", "@type": "Dataset", "name": title,
        "description": (f"Head-to-head comparison of the {a} and {b} systems: chip "
                        "specifications with sources and ratios, conflicts between sources, "
                        f"and serving {model} ({prec}, {nchips} chips, {i}/{o} tokens) with "
                        "ranges, from the trnkb knowledge base and workload model."),
        "version": info["version"], "dateModified": info["date"],
        "license": "https://creativecommons.org/licenses/by/4.0/",
        "creator": {"@type": "Organization", "name": "The trnkb developers"},
        "isAccessibleForFree": True,
        "keywords": ["AI accelerator", names[a], names[b], "specifications", "serving"],
        "distribution": [{"@type": "DataDownload", "encodingFormat": "text/csv",
                          "contentUrl": f"{slug(a, b)}.csv"}],
        "variableMeasured": [
            {"@type": "PropertyValue", "name": f"{r['figure']} ({side})", "unitText": r["unit"],
             "value": r[k]}
            for r in specs for side, k in ((a, "a"), (b, "b")) if r[k] is not None],
    }
    ld_text = json.dumps(ld, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")
    csv_rows = ([{"section": "spec", "item": r["figure"], "unit": r["unit"], a: r["a"], b: r["b"],
                  "ratio_a_over_b": r["ratio"], "source_" + a: r["source_a"],
                  "source_" + b: r["source_b"], "note": r["qualifier"]} for r in specs]
                + [{"section": f"serving {model} {prec} {nchips} chips {i}/{o}",
                    "item": r["metric"], "unit": r["unit"], a: r["a"], b: r["b"],
                    "ratio_a_over_b": r["a"] / r["b"] if r["b"] else None,
                    "source_" + a: "", "source_" + b: "",
                    "note": f"A {r['a_range']}; B {r['b_range']}; {r['verdict']}"}
                   for r in serving])
    buf = io.StringIO()
    pd.DataFrame(csv_rows).to_csv(buf, index=False, float_format="%.6g")
    spec_table = _table(specs, [("figure", "figure"), ("unit", "unit"), ("a", f"A: {a}"),
                                ("source_a", "A source"), ("b", f"B: {b}"),
                                ("source_b", "B source"), ("ratio", "A / B"),
                                ("qualifier", "qualifier")])
    serve_table = _table(serving, [("metric", "metric"), ("unit", "unit"), ("a", "A central"),
                                   ("a_range", "A range"), ("b", "B central"),
                                   ("b_range", "B range"), ("verdict", "verdict")])
    conf_rows: list[dict[str, Any]] = [{str(k): v for k, v in r.items()}
                                       for r in conf.to_dict("records")]
    conf_html = (_table(conf_rows, [(k, k) for k in conf.columns]) if conf_rows
                 else "<p>No conflicts recorded for either chip.</p>")
    page = (f"---\norphan: true\n---\n\n# {title}\n\n"
            f"A is **{html.escape(na)}**, B is **{html.escape(nb)}**. Every figure links to its "
            "source; the ratio is A over B. HBM is compared on the physical basis. "
            f"{html.escape(EXPLANATION)} "
            f'[Download this comparison (CSV)]({slug(a, b)}.csv) · '
            "[all head-to-heads](../compare.md) · [planner](../planner.md)\n\n"
            "## Specifications\n\n" + spec_table.replace("\n", " ") + "\n\n"
            f"## Serving {model} ({prec}, {nchips} chips, {i} prompt / {o} output tokens)\n\n"
            "From the workload model at build time (batch 64, TCO pricing). A ranking is "
            "stated only where the ranges do not overlap.\n\n"
            + serve_table.replace("\n", " ") + "\n\n"
            + _curves_svg(pa, pb, na, nb) + "\n\n"
            "## Conflicts between sources\n\n" + conf_html.replace("\n", " ") + "\n\n"
            f'<script type="application/ld+json">{ld_text}</script>\n')
    return page, buf.getvalue()


def pair_pages(kb: KnowledgeBase, grid: dict[str, Any],
               info: dict[str, str]) -> dict[str, tuple[str, str]]:
    """``<a>-vs-<b>`` -> (MyST page, CSV) for every pair of :data:`HEADLINE_SYSTEMS`, and
    ``"compare"`` -> (the index page, "")."""
    out = {slug(a, b): _page(kb, grid, a, b, info) for a, b in combinations(HEADLINE_SYSTEMS, 2)}
    links = "\n".join(f"- [{a} vs {b}](compare/{slug(a, b)}.md)"
                      for a, b in combinations(HEADLINE_SYSTEMS, 2))
    out["compare"] = ("# Head-to-head\n\nEvery pair of the nine headline systems, side by side: "
                      "specifications with sources and ratios, conflicts, and serving "
                      f"{REFERENCE[0]} on both with ranges. Each page links a CSV of its "
                      "comparison and carries JSON-LD (schema.org Dataset).\n\n" + links + "\n",
                      "")
    return out
