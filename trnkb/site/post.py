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

Most of what these passes touch is raw HTML in the document tree (notebook outputs, the
generated tables), so they work on the built pages: each page is parsed into its elements
(:mod:`trnkb.site.htmltree`, the standard library's HTML parser) and the passes replace
whole elements or their contents by position, leaving every other byte as Sphinx wrote it.
:func:`finish` returns counts of what each pass changed, so the build can report pages
that still needed cleaning (their notebooks should use :mod:`trnkb.views.display`).
"""

from __future__ import annotations

import html
import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from trnkb.site.htmltree import Element, Page
from trnkb.views.display import MISSING

_MISSING_TEXT = re.compile(r"\s*(NaN|nan|&lt;NA&gt;|None|NaT)\s*")
_LITERAL_CLASS = "docutils literal notranslate"
_IMG = re.compile(r'<img alt="[^"]*" src="([^"]+\.svg)"\s*/?>')
_SPLIT = re.compile(r"(\s*[+;,]\s*)")
_SKIP = ("a", "code", "pre", "script", "style", "svg", "title", "dt")  # no link inside these
# docutils turns a docstring's ``file:line`` written without backquotes into a link to the
# made-up URL scheme "file:line"; it is text
_FAKE_URL = re.compile(r"(?!https?:|mailto:|ftp:|#)[a-z][a-z0-9+.-]*:[^\"/]*")


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
        root = ET.parse(svg).getroot()
    except (OSError, ET.ParseError):
        return "", []
    title, caption = "", []
    for node in root.iter():
        if not node.tag.endswith("}text") and node.tag != "text":
            continue
        # a wrapped caption is one <text> with a <tspan> per line
        spans = [s for s in node if s.tag.endswith("tspan")] or [node]
        lines = [" ".join("".join(s.itertext()).split()) for s in spans]
        if node.get("font-weight") == "bold" and node.get("font-size") == "13px" and not title:
            title = " ".join(lines)
        elif node.get("fill") == "#555":
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


def _prose(page: Page, ids: dict[str, str], prefix: str, stats: Counter[str]) -> None:
    """Link source ids named in running text of the article ("... from aws-neuron-trainium3
    (Compute table) ..."). Only ids with a hyphen: a one-word id could be an ordinary word."""
    names = sorted((t for t in ids if "-" in t), key=len, reverse=True)
    article = next(page.find("article"), None)
    if not names or article is None:
        return
    word = re.compile(r"(?<![\w./#-])(" + "|".join(map(re.escape, names)) + r")(?![\w/-])")

    def link(m: re.Match[str]) -> str:
        stats["source links"] += 1
        return (f'<a class="trnkb-source" href="{prefix}sources.html#src-'
                f'{html.escape(ids[m.group(1)])}">{m.group(1)}</a>')
    for start, end in page.texts(article, skip=_SKIP):
        text = page.source[start:end]
        if word.search(text):
            page.replace(start, end, word.sub(link, text))


def _cells(page: Page, link: Callable[[str], str | None], stats: Counter[str]) -> None:
    for td in page.find("td"):
        if td.children:
            continue
        text = page.inner(td)
        if _MISSING_TEXT.fullmatch(text):
            stats["missing cells"] += 1
            page.replace_inner(td, MISSING)
        elif text.strip() and (linked := link(text)) is not None:
            stats["source links"] += 1
            page.replace_inner(td, linked)


def _literals(page: Page, link: Callable[[str], str | None], stats: Counter[str]) -> None:
    for code in page.find("code"):
        pre = code.children[0] if len(code.children) == 1 else None
        if (code.attrs != [("class", _LITERAL_CLASS)] or pre is None or pre.children
                or pre.attrs != [("class", "pre")] or page.outer(pre) != page.inner(code)):
            continue
        linked = link(page.inner(pre))
        if linked is not None:
            stats["source links"] += 1
            page.replace_inner(code, linked)


def _code_none(page: Page) -> None:
    """Highlighted code: ``<span class="kc">None</span>`` joins the token before it."""
    for span in page.find("span"):
        prev = page.previous(span)
        if (span.attrs != [("class", "kc")] or page.inner(span) != "None" or prev is None
                or prev.tag != "span" or prev.children or len(prev.attrs) != 1
                or prev.attrs[0][0] != "class"
                or not re.fullmatch(r"[a-z0-9]+", prev.attrs[0][1] or "")):
            continue
        gap = page.source[prev.end:span.start]
        if page.inner(prev) and not gap.strip():
            page.replace(prev.inner_end, span.end, gap + "None</span>")


def _is(e: Element | None, tag: str, cls: str, text: str | None = None, *,
        page: Page) -> bool:
    if e is None or e.tag != tag or e.attrs != [("class", cls)]:
        return False
    return text is None or (not e.children and page.inner(e) == text)


def _api(page: Page) -> None:
    """API signatures and field lists: ``None`` as one token; docstring slips as text."""
    for span in page.find("span"):
        first = span.children[0] if span.children else None
        prev = page.previous(span)
        if (_is(span, "span", "default_value", page=page) and first is not None
                and page.outer(first) == page.inner(span)
                and _is(first, "span", "pre", "None", page=page)
                and prev is not None and _is(prev, "span", "o", page=page)
                and prev.end == span.start and len(prev.children) == 1
                and page.outer(prev.children[0]) == page.inner(prev)
                and _is(prev.children[0], "span", "pre", "=", page=page)):
            page.replace(prev.start, span.end, '<span class="default_value"><span class="pre">'
                         "=None</span></span>")
        elif _is(span, "span", "pre", "None", page=page) and prev is not None:
            gap = page.source[prev.end:span.start]
            if gap == "" and _is(prev, "span", "w", " ", page=page):
                page.replace(prev.start, span.end, '<span class="pre"> None</span>')
            elif gap == " " and _is(prev, "span", "pre", "|", page=page):
                page.replace(prev.start, span.end, '<span class="pre">| None</span>')
    for a in page.find("a"):
        inner = a.children[0] if len(a.children) == 1 else None
        href = dict(a.attrs).get("href") or ""
        if (inner is not None and re.fullmatch(r"#id\d+", href) and len(a.attrs) == 1
                and page.outer(inner) == page.inner(a) and inner.tag == "span"
                and dict(inner.attrs).get("class") == "problematic"):
            page.replace(a.start, a.end, page.outer(inner))
        elif (dict(a.attrs).get("class") == "reference external" and not a.children
              and _FAKE_URL.fullmatch(href)
              and [k for k, _ in a.attrs] == ["class", "href"]):
            page.replace(a.start, a.end, page.inner(a))
    for em in page.find("em"):
        prev = page.previous(em)
        if (page.inner(em) == "None" and not em.children and prev is not None
                and prev.tag == "em" and not prev.children and not prev.attrs and not em.attrs
                and prev.end == em.start):
            page.replace(prev.inner_end, em.end, "None</em>")


def _images(page: Page, path: Path, link: Callable[[str], str | None],
            stats: Counter[str]) -> None:
    for img in page.find("img"):
        tag = _IMG.fullmatch(page.outer(img))  # as Sphinx writes it: alt, then src
        if tag is None:
            continue
        src = tag.group(1)
        title, caption = _svg_caption((path.parent / html.unescape(src)).resolve())
        if not title:
            continue
        stats["chart captions"] += 1
        alt = html.escape(f"Chart: {title}. " + " ".join(caption), quote=True)
        srcs = _chart_sources(caption)
        linked = link("; ".join(srcs)) if srcs else None
        note = f'<p class="trnkb-chart-sources">Sources: {linked}</p>' if linked else ""
        # at its drawn size in a scrolling box: on a phone a shrunk chart's 11 px labels
        # would come out at 6 px (a span, since the image may sit inside a paragraph)
        page.replace(img.start, img.end, f'<span class="trnkb-chart"><img alt="{alt}" '
                     f'src="{src}" /></span>{note}')


def _page(text: str, path: Path, site: Path, ids: dict[str, str], stats: Counter[str]) -> str:
    prefix = os.path.relpath(site, path.parent).replace(os.sep, "/") + "/"
    prefix = "" if prefix == "./" else prefix
    link = _linker(ids, prefix)
    page = Page(text)
    _cells(page, link, stats)
    _code_none(page)
    if path.name != "api.html":
        _literals(page, link, stats)
        if path.name != "sources.html":
            _prose(page, ids, prefix, stats)
    else:
        _api(page)
    _images(page, path, link, stats)
    return page.result()


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
