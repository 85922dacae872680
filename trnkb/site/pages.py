"""Pages generated from the knowledge base: data dictionary, sources, conflicts, claims, API.

Tables are drawn with :func:`trnkb.views.display.table` (the site's one table style) and
embedded as raw HTML blocks in MyST pages; spec text is HTML-escaped there. Every source
id links to its anchor ``sources.html#src-<id>``.
"""

from __future__ import annotations

import html
import importlib
import inspect
import pkgutil
import re
from typing import Any

import pandas as pd
import pint

import trnkb
from trnkb.audit import claims
from trnkb.kb import KnowledgeBase
from trnkb.site.seeds import SEEDS
from trnkb.spec.fields import Table
from trnkb.spec.schema import TABLES
from trnkb.units import Q_, format_number, format_quantity
from trnkb.views import display
from trnkb.views import markdown as md

HERE = "sources.html"  # the sources page, relative to a top-level page


def all_sources(kb: KnowledgeBase) -> pd.DataFrame:
    """``sources.yaml`` plus the sources claim files define for themselves (other tools)."""
    extra = claims.claim_sources(kb) if hasattr(claims, "claim_sources") else None
    if extra is None or extra.empty:
        return kb.sources
    extra = extra[~extra["id"].isin(set(kb.sources["id"]))]
    return pd.concat([kb.sources, extra[[c for c in kb.sources.columns if c in extra]]],
                     ignore_index=True)


def source_anchor(source_id: str) -> str:
    """The HTML id of a source's entry on the sources page (``src-<id>``)."""
    return f"src-{source_id}"


def _block(fragment: str) -> str:
    """A raw HTML block for MyST: one line, so no blank line can end it early."""
    return fragment.replace("\n", " ") + "\n"


def _field_rows(table: Table) -> pd.DataFrame:
    rows = []
    for f, pattern in ([(f, f.name) for f in table.fields]
                       + [(f, f"{f.name}*") for f in table.prefix_fields]):
        if f.kind == "quantity":
            rng = f"{format_number(f.lo)} to {format_number(f.hi)} {f.unit}"
        elif f.kind == "count" and f.lo is not None and f.name.endswith("year"):
            rng = f"{f.lo:g} to {f.hi:g}"  # years stay years (2010, not 2,010)
        elif f.kind == "count" and f.lo is not None:
            rng = f"{format_number(f.lo)} to {format_number(f.hi)}"
        elif f.choices:
            rng = ", ".join(f.choices)
        else:
            rng = ""
        kind = f"ref → {f.ref}" if f.kind == "ref" else f.kind
        rows.append({"field": pattern, "kind": kind, "unit": f.unit or "", "range": rng,
                     "required": "yes" if f.required else "no", "meaning": f.description})
    return pd.DataFrame(rows)


def data_dictionary() -> str:
    """MyST page: every table and field of :data:`trnkb.spec.schema.TABLES`."""
    out = ["# Data dictionary\n",
           "Generated from `trnkb/spec/schema.py`. Quantities are stored with their unit as the "
           "source writes it and shown in the unit below; `range` is the plausible range "
           "outside which a value is refused. `kind` is `quantity` (with a unit), `count`, "
           "`text` (sourced text), `ref` (the id of a row in another table) or `label` "
           "(plain, unsourced name or class). Download the tables from the "
           "[data downloads](downloads.md) page.\n"]
    for t in TABLES.values():
        rows = _field_rows(t).rename(columns={"field": "field "})  # field names stay as ids
        out += [f"## {md.escape(t.name)}\n", md.escape(t.description) + "\n",
                _block(display.table(rows, max_rows=200, sources_page=HERE,
                                     max_columns=6).html)]
    return "\n".join(out)


def _url_cell(url: str, seed: dict[str, str | None] | None) -> str:
    if seed is not None:
        public = seed.get("public_url")
        doc = f"seed document <code>{html.escape(url)}</code>"
        return (f'<a href="{html.escape(public)}">{html.escape(public)}</a><br>({doc})'
                if public else f"not public; {doc}")
    if url.startswith(("http://", "https://")):
        return f'<a href="{html.escape(url)}">{html.escape(url)}</a>'
    return html.escape(url)


def bibliography(kb: KnowledgeBase) -> str:
    """MyST page: every source with an anchor, its full clickable URL and how many values cite it.

    Seed documents (a file name instead of a URL) are described from
    :data:`trnkb.site.seeds.SEEDS`: what the document is, who wrote it, when, and its
    public URL where there is one.
    """
    counts = kb.facts["source"].value_counts()
    cited = claims.claims_table(claims.validate_claims(kb))["source"].value_counts()
    rows = []
    for s in all_sources(kb).sort_values("id").itertuples(index=False):
        seed = SEEDS.get(str(s.url))
        title = seed["title"] if seed else s.title
        publisher = seed["publisher"] if seed else s.publisher
        what = (f'<br><span class="trnkb-caption">{html.escape(seed["what"] or "")}</span>'
                if seed else "")
        sid = str(s.id)
        rows.append(
            f'<tr id="{html.escape(source_anchor(sid))}"><td><a class="trnkb-source" '
            f'href="#{html.escape(source_anchor(sid))}">{html.escape(sid)}</a></td>'
            f"<td>{html.escape(str(title))}{what}</td><td>{html.escape(str(publisher))}</td>"
            f"<td>{html.escape(str(s.date))}</td><td>{html.escape(str(s.kind))}</td>"
            f"<td>{_url_cell(str(s.url), seed)}</td>"
            f'<td class="num">{int(counts.get(s.id, 0)):,}</td>'
            f'<td class="num">{int(cited.get(s.id, 0)):,}</td></tr>')
    head = "".join(f'<th scope="col">{h}</th>' for h in
                   ("source id", "title", "publisher", "date", "kind", "URL", "values", "claims"))
    widths = (15, 25, 13, 9, 7, 23, 4, 4)  # percent of the page; URLs wrap inside theirs
    cols = "".join(f'<col style="width:{w}%">' for w in widths)
    table = (f'<div class="trnkb-tables"><div class="trnkb-table-wrap"><table class="trnkb-table '
             f'trnkb-sources"><colgroup>{cols}</colgroup><thead><tr>{head}</tr></thead>'
             f'<tbody>{"".join(rows)}</tbody></table></div></div>')
    return ("# Sources\n\nEvery source the knowledge base cites (`specs/sources.yaml`), "
            f"{len(rows)} in all. Every source id on this site links to its row here. "
            "`values` counts the spec values that cite the source and `claims` the published "
            "claims taken from it (other tools' constants included). The five seed documents "
            "the project started from are described by what they are, with the public URL "
            "where the document is public.\n\n" + _block(table))


def conflicts_page(kb: KnowledgeBase) -> str:
    """MyST page: values of one field that disagree between sources, largest gap first."""
    c = kb.conflicts
    head = ("# Conflicts between sources\n\nWhere sources disagree beyond a field's tolerance "
            "the knowledge base keeps every value; the preferred one is used in tables. "
            "`type` is `value` (different figures), `unit-ambiguity` (the same number with "
            "decimal and binary prefixes, e.g. GB vs GiB), `qualifier` or `text`.\n\n")
    if c.empty:
        return head + "No conflicts in the current knowledge base.\n"
    c = c.sort_values("relative_difference", ascending=False, na_position="last", kind="stable")
    c = c.assign(**{col: c[col].map(readable) for col in ("preferred", "other") if col in c})
    out = [head]
    for kind, sub in c.groupby("type", sort=False):
        sub = sub.drop(columns=["type", "table"]).reset_index(drop=True)
        out += [f"## {md.escape(str(kind))} ({len(sub)})\n",
                _block(display.table(sub, kb=kb, sources_page=HERE, max_rows=40,
                                     summary=f"{len(sub)} {kind} conflicts").html)]
    return "\n".join(out)


# What each comparison of a claim asks, in words (``specs/claims.yaml`` ``compare``).
_COMPARE_WORDS = {
    "==": "must be equal",
    "~": "must agree within {tolerance}",
    "<": "must be below",
    ">": "must be above",
    "<=": "must be at most",
    ">=": "must be at least",
    "between": "must lie between the bounds",
    "in range": "must lie in the range",
    "is": "must read the same",
    "contains": "must contain the text",
    "lacks": "must not contain the text",
}
_NUMBER = re.compile(r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?: (\S+))?")


def readable(value: object) -> str:
    """A conflict's value (round-trip text from :mod:`trnkb.kb.conflicts`) as people write
    it: thousands separators, and a base unit in exponent form given its prefix
    (``8.58993e+11 B/s`` -> ``858.993 GB/s``); up to 6 significant digits, so no digit the
    comparison turns on is lost. Text is kept."""
    text = str(value)
    out = []
    for part in text.split(" to "):
        m = _NUMBER.fullmatch(part.strip())
        if m is None:
            return text
        number, unit = float(m.group(1)), m.group(2)
        if unit and "e" in m.group(1).lower():
            try:
                out.append(format_quantity(Q_(number, unit).to_compact(), sig=6))
                continue
            except (pint.errors.PintError, ValueError, TypeError):
                pass
        out.append(format_number(number, sig=6) + (f" {unit}" if unit else ""))
    return " to ".join(out)


def _compare_words(row: Any) -> str:
    words = _COMPARE_WORDS.get(str(row.compare), str(row.compare))
    tol = getattr(row, "tolerance", None)
    tolerance = (f"{format_number(100 * float(tol), sig=3)}%"
                 if isinstance(tol, (int, float)) and tol == tol else "its tolerance")
    return words.format(tolerance=tolerance)


def _why(row: Any) -> str:
    if isinstance(row.reason, str) and row.reason.strip():
        return row.reason
    if row.verdict == "supported":
        return (f"the knowledge base gives {row.computed}, as the claim "
                f"{row.claimed} ({_compare_words(row)})")
    if row.verdict == "contradicted":
        return (f"the knowledge base gives {row.computed}, not "
                f"{row.claimed} ({_compare_words(row)})")
    return "no computed value to compare"


def claims_page(kb: KnowledgeBase) -> str:
    """MyST page: every claim of ``specs/claims.yaml``, contradicted first, then unverifiable,
    then supported, each with its statement in full and the reason for its verdict."""
    claim_list = claims.validate_claims(kb)
    df = claims.claims_table(claim_list)
    df = df.assign(why=[_why(r) for r in df.itertuples(index=False)])
    counts = df["verdict"].value_counts()
    order = ("contradicted", "unverifiable", "supported")
    out = ["# Claims audit\n",
           "Every published statement in `specs/claims.yaml` (paraphrased), recomputed from "
           "the knowledge base with the calculators, and the verdict that follows: "
           + ", ".join(f"{int(counts.get(v, 0))} {v}" for v in order) + ". "
           "`claimed` is what the source says, `computed` what the knowledge base gives, "
           "`why` the reason for the verdict. The notebook "
           "[09 claims audit](notebooks/09-claims-audit.ipynb) shows them by source.\n"]
    cols = ["statement", "source", "claimed", "computed", "relative_difference", "why", "id"]
    for verdict in order:
        sub = df[df["verdict"] == verdict][cols].reset_index(drop=True)
        if len(sub):
            out += [f"## {verdict.capitalize()} ({len(sub)})\n",
                    # contradicted claims are what a checker came for: never collapsed
                    _block(display.table(sub, sources_page=HERE, max_columns=7,
                                         max_rows=10**6 if verdict == "contradicted" else 25,
                                         summary=f"{len(sub)} {verdict} claims").html)]
    # what was and was not checked: seed coverage, verdicts over time, other tools
    from trnkb.audit.claims.views import page_sections

    out.append(page_sections(kb, claim_list))
    out += ["## Every claim, explained\n",
            "One section per claim (its address is `claims.html#claim-<id>`; the `id` in the "
            "tables above links to it): the statement, where the source says it, the formula "
            "the knowledge base computes, each input with its value and source, the "
            "comparison and its tolerance, the note and the verdict at each recorded "
            "release. `trnkb claims --id ID` prints the same.\n",
            _block(claim_sections(kb, claim_list))]
    text = "\n".join(out)
    ids = {c.id for c in claim_list}
    return re.sub(r"<td>([a-z0-9][a-z0-9.-]*)</td>",
                  lambda m: (f'<td><a href="#claim-{m.group(1)}">{m.group(1)}</a></td>'
                             if m.group(1) in ids else m.group(0)), text)


def _src(sid: str, known: set[str]) -> str:
    """Source ids linked to the sources page; anything else (a library version) as text."""
    return "".join(f'<a class="trnkb-source" href="{HERE}#{source_anchor(p)}">{html.escape(p)}</a>'
                   if p in known else html.escape(p) for p in _SEP.split(sid))


_SEP = re.compile(r"(\s*[+;,]\s*)")


def claim_sections(kb: KnowledgeBase, claim_list: list[Any]) -> str:
    """HTML: one ``<section id="claim-<id>">`` per claim with everything
    :func:`trnkb.audit.claims.explain.explain` gives."""
    from trnkb.audit.claims.explain import _history, explain, raw_entries

    raw, hist = raw_entries(kb), _history(kb)
    known = set(all_sources(kb)["id"].astype(str))
    e = html.escape
    out = []
    for c in claim_list:
        x = explain(c, kb, raw, hist)
        rows = [("statement", e(x["statement"])), ("quantity", e(x["quantity"])),
                ("source", f"{_src(x['source'], known)} ({e(x['locator'])})")]
        if x["formula"]:
            rows.append(("formula", f"<code>{e(x['formula'])}</code>"))
        if x["inputs"]:
            def where(i: dict[str, str]) -> str:
                if not i["source"]:
                    return ""
                loc = f"; {e(i['locator'])}" if i["locator"] else ""
                return f" ({_src(i['source'], known)}{loc})"
            rows.append(("inputs", "<ul>" + "".join(
                f"<li><code>{e(i['input'])}</code> = {e(i['value'])}{where(i)}</li>"
                for i in x["inputs"]) + "</ul>"))
        if x["claimed"] or x["computed"]:
            rows.append(("compared", f"claimed {e(x['compare'])} {e(x['claimed'])}; "
                                     f"computed {e(x['computed'] or '—')}"))
        if x["tolerance"] is not None:
            rows.append(("tolerance", f"{format_number(100 * float(x['tolerance']), sig=3)}%"
                                      f" ({e(x['why'])})"))
        for key in ("reason", "note"):
            if x[key]:
                rows.append((key, e(x[key])))
        rows.append(("verdicts", ", ".join(f"{e(h['release'])}: {e(h['verdict'])}"
                                           for h in x["history"])))
        body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
        out.append(f'<section class="trnkb-claim" id="claim-{e(c.id)}"><p><a href="#claim-'
                   f'{e(c.id)}"><code>{e(c.id)}</code></a> <span class="trnkb-verdict '
                   f'trnkb-{e(c.verdict)}">{e(c.verdict)}</span> '
                   f'<span class="trnkb-caption">{e(c.kind)}, {e(x["file"])}</span></p>'
                   f'<dl class="trnkb-claim-facts">{body}</dl></section>')
    return '<div class="trnkb-claims">' + "".join(out) + "</div>"


def _public_modules() -> list[tuple[str, list[str]]]:
    """``(package, its public names)`` for ``trnkb`` and every package whose face
    (``__init__``) declares ``__all__``, sorted. These are the public API (issue 23):
    no other module has an ``__all__``."""
    faces = [("trnkb", list(trnkb.__all__))]
    for m in pkgutil.walk_packages(trnkb.__path__, "trnkb."):
        if m.ispkg:
            names = getattr(importlib.import_module(m.name), "__all__", None)
            if names:
                faces.append((m.name, list(names)))
    return sorted(faces)


def _api_entry(package: str, name: str, first: dict[int, str]) -> str:
    """The autodoc directive for one public name. A module is named, not expanded; an
    object a package above re-exports (``trnkb.load`` is ``trnkb.kb.load``) is documented
    once, under the deepest package, and the other names point to it."""
    obj = getattr(importlib.import_module(package), name)
    full = f"{package}.{name}"
    if inspect.ismodule(obj):
        summary = (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")
        return f".. py:data:: {name}\n\n   Module :mod:`{obj.__name__}`: {summary}\n"
    home = first[id(obj)]
    if home != full:
        kind = ("class" if inspect.isclass(obj) else "function" if inspect.isfunction(obj)
                else "data")
        return f".. py:{kind}:: {name}\n\n   The same object as :py:obj:`{home}`.\n"
    if inspect.isclass(obj) and obj.__module__.startswith("trnkb"):
        return f".. autoclass:: {full}\n   :members:\n"
    if inspect.isfunction(obj):
        return f".. autofunction:: {full}\n"
    return f".. autodata:: {full}\n   :no-value:\n"


def api_page() -> str:
    """MyST page with one section per package face and one entry per public name.

    Only the names in the faces' ``__all__`` appear (each under the package that exports
    it); modules below the faces are private and have no entries.
    """
    faces = _public_modules()
    count = sum(len(names) for _, names in faces)
    out = ["# API reference\n",
           f"The {count} public names of `trnkb`: what `trnkb` and each package's face export "
           "(numpydoc docstrings state units and formulas). `import trnkb; kb = trnkb.load()` "
           "is the entry point; every other module is private and may change.\n"]
    first: dict[int, str] = {}  # an object two faces export is documented under the deeper
    for package, names in sorted(faces, key=lambda f: -f[0].count(".")):
        module = importlib.import_module(package)
        for n in names:
            first.setdefault(id(getattr(module, n)), f"{package}.{n}")
    for package, names in faces:
        body = "".join(_api_entry(package, n, first) + "\n" for n in names)
        out.append(f"## `{package}`\n\n```{{eval-rst}}\n.. automodule:: {package}\n"
                   f"   :no-members:\n\n{body}```\n")
    return "\n".join(out)
