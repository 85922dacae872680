"""Head-to-head pages: ``compare/<a>-vs-<b>.html`` for every pair of the nine headline systems.

Each page puts two systems side by side: their chips' headline figures with the source of
each and the ratio (HBM on the physical basis, :mod:`trnkb.site.memory`), the conflicts
the KB records for either chip, serving one reference workload on both (from the
build-time grid of :mod:`trnkb.site.serving_grid`: tokens/s per chip, per user and per MW,
cost per million tokens in the owner and cloud views, TTFT and TPOT with their ranges, and
both throughput-interactivity frontiers with their bands) and training one reference run
(chips, days, cost, energy). A ranking is stated only where the ranges do not overlap.
The page carries JSON-LD (schema.org ``Dataset``) for search engines and language models,
and links a CSV of the same comparison (``<a>-vs-<b>.csv``, written beside the page).
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
from trnkb.site.serving_grid import (
    HEADLINE_SYSTEMS,
    METRICS,
    TRAIN_METRICS,
    key,
    operating,
)
from trnkb.spec.schema import TABLES
from trnkb.units import format_number
from trnkb.views.display import short_name

# The reference workloads of every page: serving (model, precision, input, output tokens)
# at TARGET tokens/s per user, and training (model, precision asked, tokens, days).
REFERENCE = ("llama-3-1-70b", "fp8", 2048, 512)
TARGET = 20.0
TRAIN_REFERENCE = ("llama-3-1-70b", "bf16", 15e12, 30)
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
        if f == "hbm_capacity":  # as each vendor writes it (GiB or GB), never converted
            pa, pb = phys.get(ca), phys.get(cb)
            rows[-1].update(unit="as labelled", a=pa.label if pa and pa.label else None,
                            b=pb.label if pb and pb.label else None)
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
        r["ratio"] = (r["a"] / r["b"]) if r["a"] and r["b"] and r["figure"] != "hbm_capacity" \
            else None
        if r["figure"] == "hbm_capacity":  # vendor labels on two bases: compare physically
            r["qualifier"] = "; ".join(str(x) for x in (r["qualifier"], "vendor-label basis, "
                                                        "not compared: see the physical row")
                                       if x)
    return rows


def _verdict(va: list[Any], vb: list[Any], lower_better: bool) -> str:
    if va[1] <= vb[2] and vb[1] <= va[2]:
        return "indistinguishable within the ranges"
    first_wins = (va[0] < vb[0]) == lower_better
    return f"{'A' if first_wins else 'B'} {'lower' if lower_better else 'higher'}"


def _rng(v: list[Any]) -> str:
    return f"{format_number(v[1], sig=3)} to {format_number(v[2], sig=3)}"


def _row(label: str, unit: str, va: list[Any] | None, vb: list[Any] | None,
         lower_better: bool | None, missing: str = "no result") -> dict[str, Any]:
    verdict = (_verdict(va, vb, lower_better) if va and vb and lower_better is not None
               else "" if va and vb else missing)
    return {"metric": label, "unit": unit, "a": va[0] if va else None,
            "a_range": _rng(va) if va else "", "b": vb[0] if vb else None,
            "b_range": _rng(vb) if vb else "", "verdict": verdict}


def _point(grid: dict[str, Any], sid: str, pricing: str) -> dict[str, Any] | None:
    m, prec, i, o = REFERENCE
    view = grid["serve"].get(key(m, sid, prec, i, o), {}).get(pricing) or {}
    return operating(view["points"], TARGET)[0] if view.get("points") else None


def _serving(grid: dict[str, Any], a: str, b: str) -> tuple[list[dict[str, Any]], Any, Any]:
    pa, pb = _point(grid, a, "owner"), _point(grid, b, "owner")
    rows = [_row(label, unit, pa.get(name) if pa else None, pb.get(name) if pb else None,
                 lower) for name, label, unit, _, lower in METRICS]
    ca, cb = _point(grid, a, "cloud"), _point(grid, b, "cloud")
    no_cloud = " and ".join(s for s, p in ((a, ca), (b, cb)) if p is None)
    rows.append(_row("cost per million output tokens, cloud prices", "USD/Mtok",
                     ca.get("usd_per_million_tokens") if ca else None,
                     cb.get("usd_per_million_tokens") if cb else None, True,
                     f"no published cloud price for {no_cloud}"))
    m, prec, i, o = REFERENCE
    view = {s: grid["serve"].get(key(m, s, prec, i, o), {}).get("owner") or {} for s in (a, b)}
    return rows, view[a].get("points") or [], view[b].get("points") or []


def _training(grid: dict[str, Any], a: str, b: str) -> list[dict[str, Any]]:
    m, prec, tokens, days = TRAIN_REFERENCE
    ta, tb = (grid["train"].get(key(m, s, prec, tokens, days), {}) for s in (a, b))
    ta, tb = (None if "error" in t else t for t in (ta, tb))
    rows = [{"metric": "chips (whole racks)", "unit": "chips", "a": ta["chips"] if ta else None,
             "a_range": f"{ta['racks']} racks, {ta['precision']}" if ta else "",
             "b": tb["chips"] if tb else None,
             "b_range": f"{tb['racks']} racks, {tb['precision']}" if tb else "",
             "verdict": "" if ta and tb else "no plan fits"}]
    rows += [_row(label, unit, ta.get(name) if ta else None, tb.get(name) if tb else None,
                  True, "no plan fits") for name, label, unit in TRAIN_METRICS]
    return rows


def _curves_svg(ca: list[dict[str, Any]], cb: list[dict[str, Any]], na: str, nb: str) -> str:
    if not ca or not cb:
        return ""
    W, H, L, R, T, B = 640, 340, 70, 20, 20, 50
    xmax = max(c["tokens_per_s_per_user"][0] for c in ca + cb) * 1.05
    ymax = max(c["tokens_per_s_per_chip"][2] for c in ca + cb) * 1.05

    def xy(c: dict[str, Any], k: int) -> str:
        return (f"{L + c['tokens_per_s_per_user'][0] / xmax * (W - L - R):.1f},"
                f"{H - B - c['tokens_per_s_per_chip'][k] / ymax * (H - T - B):.1f}")

    def path(cs: list[dict[str, Any]]) -> str:
        return "".join(f"{'L' if k else 'M'}{xy(c, 0)}" for k, c in enumerate(cs))

    def band(cs: list[dict[str, Any]]) -> str:
        return ("M" + "L".join(xy(c, 2) for c in cs) + "L"
                + "L".join(xy(c, 1) for c in reversed(cs)) + "Z")
    e = html.escape
    return (f'<svg role="img" viewBox="0 0 {W} {H}" width="100%" style="max-width:{W}px" '
            f'aria-label="throughput against interactivity for {e(na)} and {e(nb)}, with '
            f'bands" class="trnkb-h2h-curve">'
            f'<path d="{band(ca)}" fill="#ea580c" fill-opacity="0.15" stroke="none"/>'
            f'<path d="{band(cb)}" fill="#2563eb" fill-opacity="0.15" stroke="none"/>'
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
    training = _training(grid, a, b)
    chips = {str(kb.get(a, "chip")), str(kb.get(b, "chip"))}
    c = kb.conflicts
    conf = c[c["id"].isin(chips)][["id", "field", "preferred", "preferred_source", "other",
                                   "other_source", "type"]]
    model, prec, i, o = REFERENCE
    tmodel, _, tokens, days = TRAIN_REFERENCE
    serve_what = (f"serving {model} ({prec}, {i} prompt / {o} output tokens) at "
                  f"{TARGET:g} tokens/s per user")
    train_what = f"training {tmodel} on {tokens / 1e12:g} trillion tokens in {days} days"
    title = f"{names[a]} vs {names[b]}: {a} against {b}"
    ld = {
        "@context": "https://schema.org", "@type": "Dataset", "name": title,
        "description": (f"Head-to-head comparison of the {a} and {b} systems: chip "
                        "specifications with sources and ratios, conflicts between sources, "
                        f"{serve_what} and {train_what}, with "
                        "ranges, from the trnkb knowledge base and workload model."),
        "version": info["version"], "dateModified": info["date"],
        "license": "https://creativecommons.org/licenses/by/4.0/",
        "creator": {"@type": "Organization", "name": "The trnkb developers"},
        "isAccessibleForFree": True,
        "keywords": ["AI accelerator", names[a], names[b], "specifications", "serving",
                     "training", "cost per million tokens", "tokens per megawatt"],
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
                + [{"section": what, "item": r["metric"], "unit": r["unit"], a: r["a"],
                    b: r["b"], "ratio_a_over_b": r["a"] / r["b"] if r["a"] and r["b"] else None,
                    "source_" + a: "", "source_" + b: "",
                    "note": f"A {r['a_range'] or '-'}; B {r['b_range'] or '-'}; {r['verdict']}"}
                   for what, rows in ((serve_what, serving), (train_what, training))
                   for r in rows])
    buf = io.StringIO()
    # numbers at 6 significant figures, written as text: the spec columns mix in labels
    csv_rows = [{k: f"{v:.6g}" if isinstance(v, float) else v for k, v in r.items()}
                for r in csv_rows]
    pd.DataFrame(csv_rows).to_csv(buf, index=False)
    spec_table = _table(specs, [("figure", "figure"), ("unit", "unit"), ("a", f"A: {a}"),
                                ("source_a", "A source"), ("b", f"B: {b}"),
                                ("source_b", "B source"), ("ratio", "A / B"),
                                ("qualifier", "qualifier")])
    cols = [("metric", "metric"), ("unit", "unit"), ("a", "A central"), ("a_range", "A range"),
            ("b", "B central"), ("b_range", "B range"), ("verdict", "verdict")]
    serve_table, train_table = _table(serving, cols), _table(training, cols)
    conf_rows: list[dict[str, Any]] = [{str(k): v for k, v in r.items()}
                                       for r in conf.to_dict("records")]
    conf_html = (_table(conf_rows, [(k, k) for k in conf.columns]) if conf_rows
                 else "<p>No conflicts recorded for either chip.</p>")
    page = (f"---\norphan: true\n---\n\n# {title}\n\n"
            f"A is **{html.escape(na)}**, B is **{html.escape(nb)}**. Every figure links to its "
            "source; the ratio is A over B. "
            f"{html.escape(EXPLANATION)} "
            f'[Download this comparison (CSV)]({slug(a, b)}.csv) · '
            "[all head-to-heads](../compare.md) · [planner](../planner.md)\n\n"
            "## Specifications\n\n" + spec_table.replace("\n", " ") + "\n\n"
            f"## {serve_what[0].upper() + serve_what[1:]}\n\n"
            "From the serving simulator at build time, on one replica of each system (the "
            "smallest that holds the model), at the load with the most tokens/s per chip "
            f"that still gives {TARGET:g} tokens/s per user; owner pricing unless the row says "
            "cloud. A ranking is stated only where the ranges do not overlap. Where no analyst "
            "owner cost per chip-hour is published, the owner cost per million tokens rests on "
            "capex per chip (`capex_per_chip`), a placeholder assumption with no public "
            "source.\n\n"
            + serve_table.replace("\n", " ") + "\n\n"
            + _curves_svg(pa, pb, na, nb) + "\n\n"
            "Throughput against interactivity, one point per load; shaded: from the low to "
            "the high end of tokens/s per chip.\n\n"
            f"## {train_what[0].upper() + train_what[1:]}\n\n"
            "The chips for the run to finish in the target days (whole racks; "
            "`trnkb workload train-plan`), then the run at that size: its days, cost and "
            "energy with ranges (owner pricing).\n\n"
            + train_table.replace("\n", " ") + "\n\n"
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
                      "specifications with sources and ratios, conflicts, serving "
                      f"{REFERENCE[0]} (tokens/s per chip and per MW, $/Mtok, latency) and "
                      f"training {TRAIN_REFERENCE[0]} (chips, days, cost) on both, with ranges. "
                      "Each page links a CSV of its "
                      "comparison and carries JSON-LD (schema.org Dataset).\n\n" + links + "\n",
                      "")
    return out
