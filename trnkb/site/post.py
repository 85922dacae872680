"""Finishing passes over the built HTML, for every page whoever wrote its notebook.

- a table cell that reads a pandas missing-value marker (not-a-number, NA, null) becomes the
  em dash with its tooltip (:data:`trnkb.views.display.MISSING`);
- a table cell or inline literal that holds source ids (alone, or joined by ``+``, ``;``
  or ``,``) and no link yet links each id to its anchor on the sources page; a seed file
  name links to the source that cites it; a source id (one with a hyphen) named in running
  text is linked too;
- a chart image gets alt text from its own title and caption, and a linked
  ``Sources:`` line under it (the caption inside the SVG cannot carry links); it is shown
  at its drawn size in a box that scrolls sideways on a narrow screen;
- in highlighted code and API signatures, Python's null keyword is joined to the token
  before it (an equals sign or a bar), so a lone null in a page always means a data cell to fix.

:func:`finish` returns counts of what each pass changed, so the build can report pages
that still needed cleaning (their notebooks should use :mod:`trnkb.views.display`).
"""

from __future__ import annotations

import html
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from trnkb.views.display import MISSING

_BAD_CELL = re.compile(r"<td([^>]*)>\s*(NaN|nan|&lt;NA&gt;|None|NaT)\s*</td>")
_CELL = re.compile(r"<td([^>]*)>([^<>]+)</td>")
_LITERAL = re.compile(r'<code class="docutils literal notranslate">'
                      r'<span class="pre">([^<>]+)</span></code>')
_IMG = re.compile(r'<img alt="([^"]*)" src="([^"]+\.svg)"\s*/?>')
_SVG_TEXT = re.compile(r"<text([^>]*)>(.*?)</text>", re.DOTALL)
_DEFAULT_NONE = re.compile(r'<span class="o"><span class="pre">=</span></span>'
                           r'<span class="default_value"><span class="pre">None</span></span>')
_CODE_NONE = re.compile(r'(<span class="[a-z0-9]+">)([^<]+)</span>(\s*)'
                        r'<span class="kc">None</span>')
_SIG_NONE = re.compile(r'(?:<span class="w"> </span>|<span class="pre">\|</span> )'
                       r'<span class="pre">None</span>')
# docutils links a markup slip in a docstring to an error note that the theme leaves out
_PROBLEM = re.compile(r'<a href="#id\d+">(<span class="problematic" id="id\d+">.*?</span>)</a>')
_TYPE_NONE = re.compile(r"<em>([^<]*)</em><em>None</em>")
# docutils turns a docstring's ``file:line`` written without backquotes into a link to the
# made-up URL scheme "file:line"; it is text
_FAKE_URL = re.compile(r'<a class="reference external" href="(?!https?:|mailto:|ftp:|#)'
                       r'[a-z][a-z0-9+.-]*:[^"/]*">([^<]*)</a>')
_SPLIT = re.compile(r"(\s*[+;,]\s*)")


def _linker(ids: dict[str, str], page_prefix: str) -> Callable[[str], str | None]:
    """Return f(text) -> linked HTML or None when ``text`` is not all source ids."""
    def link(text: str) -> str | None:
        raw = html.unescape(text).strip()
        if raw.startswith("Sources:"):
            raw = raw.removeprefix("Sources:").strip()
        parts = [p for p in _SPLIT.split(raw) if p]
        tokens = [p.strip() for p in parts if not _SPLIT.fullmatch(p)]
        if not tokens or not all(t in ids for t in tokens):
            return None
        out = []
        for p in parts:
            t = p.strip()
            out.append(f'<a class="trnkb-source" href="{page_prefix}sources.html#src-'
                       f'{html.escape(ids[t])}">{html.escape(t)}</a>'
                       if t in ids else html.escape(p))
        return "".join(out)
    return link


def _svg_caption(svg: Path) -> tuple[str, list[str]]:
    """(title, caption lines) of a chart SVG drawn by :mod:`trnkb.views.charts`."""
    try:
        text = svg.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "", []
    title, caption = "", []
    for attrs, body in _SVG_TEXT.findall(text):
        # a wrapped caption is one <text> with a <tspan> per line
        lines = re.findall(r"<tspan[^>]*>(.*?)</tspan>", body, re.DOTALL) or [body]
        lines = [html.unescape(" ".join(re.sub(r"<[^>]+>", " ", x).split())) for x in lines]
        if 'font-weight="bold"' in attrs and 'font-size="13px"' in attrs and not title:
            title = " ".join(lines)
        elif 'fill="#555"' in attrs:
            caption += [x for x in lines if x]
    return title, caption


def _chart_sources(caption: list[str]) -> list[str]:
    """Source ids of a caption: the ``Sources:`` line and its continuation lines."""
    out, inside = [], False
    for line in caption:
        if line.startswith("Sources:"):
            inside, line = True, line.removeprefix("Sources:")
        elif not inside or not re.fullmatch(r"[\w.+-]+(\s*[;+]\s*[\w.+-]+)*;?", line.strip()):
            inside = False
            continue
        out += [s.strip() for s in re.split(r"[;+]", line) if s.strip()]
    return out


_TAG = re.compile(r"(<[^>]+>)")
_SKIP = ("a", "code", "pre", "script", "style", "svg", "title", "dt")  # no link inside these


def _prose_links(text: str, ids: dict[str, str], prefix: str, stats: Counter[str]) -> str:
    """Link source ids named in running text of the article ("... from aws-neuron-trainium3
    (Compute table) ..."). Only ids with a hyphen: a one-word id could be an ordinary word."""
    names = sorted((t for t in ids if "-" in t), key=len, reverse=True)
    start, end = text.find("<article"), text.rfind("</article>")
    if not names or start < 0 or end < 0:
        return text
    word = re.compile(r"(?<![\w./#-])(" + "|".join(map(re.escape, names)) + r")(?![\w/-])")
    out, depth = [], 0
    for part in _TAG.split(text[start:end]):
        if part.startswith("<"):
            m = re.match(r"<(/?)([a-zA-Z0-9]+)", part)
            if m and m.group(2).lower() in _SKIP and not part.endswith("/>"):
                depth = max(0, depth + (-1 if m.group(1) else 1))
            out.append(part)
        elif depth or not word.search(part):
            out.append(part)
        else:
            def link(m: re.Match[str]) -> str:
                stats["source links"] += 1
                sid = ids[m.group(1)]
                return (f'<a class="trnkb-source" href="{prefix}sources.html#src-'
                        f'{html.escape(sid)}">{m.group(1)}</a>')
            out.append(word.sub(link, part))
    return text[:start] + "".join(out) + text[end:]


def _page(text: str, path: Path, site: Path, ids: dict[str, str], stats: Counter[str]) -> str:
    prefix = os.path.relpath(site, path.parent).replace(os.sep, "/") + "/"
    prefix = "" if prefix == "./" else prefix
    link = _linker(ids, prefix)

    def bad_cell(m: re.Match[str]) -> str:
        stats["missing cells"] += 1
        return f"<td{m.group(1)}>{MISSING}</td>"
    text = _BAD_CELL.sub(bad_cell, text)
    text = _CODE_NONE.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}None</span>", text)

    def cell(m: re.Match[str]) -> str:
        linked = link(m.group(2))
        if linked is None:
            return m.group(0)
        stats["source links"] += 1
        return f"<td{m.group(1)}>{linked}</td>"
    text = _CELL.sub(cell, text)
    if path.name != "api.html":
        def literal(m: re.Match[str]) -> str:
            linked = link(m.group(1))
            if linked is None:
                return m.group(0)
            stats["source links"] += 1
            return f'<code class="docutils literal notranslate">{linked}</code>'
        text = _LITERAL.sub(literal, text)
        if path.name != "sources.html":
            text = _prose_links(text, ids, prefix, stats)
    else:
        text = _DEFAULT_NONE.sub(
            '<span class="default_value"><span class="pre">=None</span></span>', text)
        text = _SIG_NONE.sub(lambda m: '<span class="pre">' + ("| " if "|" in m.group(0) else " ")
                             + "None</span>", text)
        text = _PROBLEM.sub(lambda m: m.group(1), text)
        text = _TYPE_NONE.sub(lambda m: f"<em>{m.group(1)}None</em>", text)
        text = _FAKE_URL.sub(lambda m: m.group(1), text)

    def image(m: re.Match[str]) -> str:
        title, caption = _svg_caption((path.parent / html.unescape(m.group(2))).resolve())
        if not title:
            return m.group(0)
        stats["chart captions"] += 1
        alt = html.escape(f"Chart: {title}. " + " ".join(caption), quote=True)
        srcs = _chart_sources(caption)
        linked = link("; ".join(srcs)) if srcs else None
        note = (f'<p class="trnkb-chart-sources">Sources: {linked}</p>' if linked else "")
        # at its drawn size in a scrolling box: on a phone a shrunk chart's 11 px labels
        # would come out at 6 px (a span, since the image may sit inside a paragraph)
        return (f'<span class="trnkb-chart"><img alt="{alt}" src="{m.group(2)}" /></span>'
                f"{note}")
    return _IMG.sub(image, text)


def finish(site: Path, source_ids: dict[str, str]) -> Counter[str]:
    """Run the passes over every page of ``site``.

    Parameters
    ----------
    source_ids : dict
        Text that names a source (its id, or a seed's file name) -> the source id.

    Returns
    -------
    Counter
        ``missing cells``, ``source links``, ``chart captions`` changed, and
        ``pages:<name>`` for each page whose missing cells had to be fixed here.
    """
    stats: Counter[str] = Counter()
    for path in sorted(site.rglob("*.html")):
        if "_static" in path.parts:
            continue
        before = path.read_text(encoding="utf-8")
        n = stats["missing cells"]
        after = _page(before, path, site, source_ids, stats)
        if stats["missing cells"] > n:
            stats[f"pages:{path.relative_to(site)}"] += stats["missing cells"] - n
        if after != before:
            path.write_text(after, encoding="utf-8")
    return stats


def stamp(site: Path, info: dict[str, str]) -> int:
    """Put ``trnkb <version> · built <date> · commit <hash>`` in every page's footer (before
    ``</footer>``, or at the end of the body); returns the pages stamped."""
    line = (f'<p class="trnkb-stamp">trnkb {html.escape(info["version"])} · built '
            f'{html.escape(info["date"])} · commit <code>{html.escape(info["commit"][:12])}'
            "</code></p>")
    n = 0
    for path in sorted(site.rglob("*.html")):
        if "_static" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        at = text.rfind("</footer>")
        at = at if at >= 0 else text.rfind("</body>")
        if at < 0 or "trnkb-stamp" in text:
            continue
        path.write_text(text[:at] + line + text[at:], encoding="utf-8")
        n += 1
    return n
