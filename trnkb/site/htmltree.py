"""A built HTML page as a tree of elements with their positions, for in-place edits.

:class:`Page` parses with the standard library's :class:`html.parser.HTMLParser` and
records where each element's start tag, content and end tag sit in the source. An edit
replaces a range of the source (a whole element, or its content); :meth:`Page.result` applies
the edits and leaves every other byte unchanged, so a page keeps the markup Sphinx wrote.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "source", "track", "wbr"})


@dataclass(eq=False)
class Element:
    """One element: ``source[start:inner_start]`` is its start tag, ``[inner_start:inner_end]``
    its content, ``[inner_end:end]`` its end tag (empty for a void or unclosed element)."""

    tag: str
    attrs: list[tuple[str, str | None]]
    start: int
    inner_start: int
    parent: Element | None = None
    inner_end: int = -1
    end: int = -1
    children: list[Element] = field(default_factory=list)
    pos: int = 0  # index among its parent's children


class _Builder(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__(convert_charrefs=False)
        self.page = page
        self.stack = [page.root]
        self.lines = [0]
        self.lines += [i + 1 for i, c in enumerate(page.source) if c == "\n"]

    def _at(self) -> int:
        line, col = self.getpos()
        return self.lines[line - 1] + col

    def _open(self, tag: str, attrs: list[tuple[str, str | None]], void: bool) -> None:
        start = self._at()
        parent = self.stack[-1]
        e = Element(tag, attrs, start, start + len(self.get_starttag_text() or ""), parent,
                    pos=len(parent.children))
        parent.children.append(e)
        self.page.index.setdefault(tag, []).append(e)
        if void:
            e.inner_end = e.end = e.inner_start
        else:
            self.stack.append(e)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, tag in _VOID)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs, True)

    def handle_endtag(self, tag: str) -> None:
        if not any(e.tag == tag for e in self.stack[1:]):
            return  # a stray end tag
        at = self._at()
        end = self.page.source.index(">", at) + 1
        while True:
            e = self.stack.pop()
            e.inner_end, e.end = (at, end) if e.tag == tag else (at, at)
            if e.tag == tag:
                return

    def handle_comment(self, data: str) -> None:
        self._skip(len("<!--" + data + "-->"))

    def handle_decl(self, decl: str) -> None:
        self._skip(len("<!" + decl + ">"))

    def handle_pi(self, data: str) -> None:
        self._skip(len("<?" + data + ">"))

    def _skip(self, length: int) -> None:
        at = self._at()
        self.page.markup.append((at, at + length))


class Page:
    """The elements of one HTML page and the edits made to it."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.root = Element("#document", [], 0, 0, None, len(source), len(source))
        self.index: dict[str, list[Element]] = {}
        self.markup: list[tuple[int, int]] = []  # comments and declarations
        self._edits: list[tuple[int, int, str]] = []
        builder = _Builder(self)
        builder.feed(source)
        builder.close()
        for e in builder.stack[1:]:  # never closed: ends with the page
            e.inner_end = e.end = len(source)

    def find(self, tag: str) -> Iterator[Element]:
        """Every ``tag`` element, in document order."""
        yield from self.index.get(tag, [])

    def inner(self, e: Element) -> str:
        return self.source[e.inner_start:e.inner_end]

    def outer(self, e: Element) -> str:
        return self.source[e.start:e.end]

    def previous(self, e: Element) -> Element | None:
        """The element before ``e`` under the same parent (text between is not checked)."""
        return e.parent.children[e.pos - 1] if e.parent and e.pos else None

    def texts(self, e: Element, skip: tuple[str, ...]) -> Iterator[tuple[int, int]]:
        """``(start, end)`` of each run of text inside ``e``, outside elements named in
        ``skip`` and outside what was edited already."""
        cuts = sorted([(c.start, c.inner_start) if c.tag not in skip else (c.start, c.end)
                       for c in self._descendants(e)]
                      + [(c.inner_end, c.end) for c in self._descendants(e)
                         if c.tag not in skip]
                      + [m for m in self.markup if e.inner_start <= m[0] < e.inner_end]
                      + [(s, t) for s, t, _ in self._edits])
        at = e.inner_start
        for s, t in cuts:
            if s > at and at < e.inner_end:
                yield at, min(s, e.inner_end)
            at = max(at, t)
        if at < e.inner_end:
            yield at, e.inner_end

    def _descendants(self, e: Element) -> Iterator[Element]:
        for c in e.children:
            yield c
            yield from self._descendants(c)

    def edited(self, e: Element) -> bool:
        return any(s < e.end and e.start < t for s, t, _ in self._edits)

    def replace(self, start: int, end: int, text: str) -> bool:
        """Replace ``source[start:end]``; refused (False) where an earlier edit overlaps."""
        at = bisect.bisect_left(self._edits, (start, end, text))
        if any(s < end and start < t for s, t, _ in self._edits[max(0, at - 1):at + 1]):
            return False
        self._edits.insert(at, (start, end, text))
        return True

    def replace_inner(self, e: Element, text: str) -> bool:
        return self.replace(e.inner_start, e.inner_end, text)

    def result(self) -> str:
        out, at = [], 0
        for s, t, text in self._edits:
            out += [self.source[at:s], text]
            at = t
        return "".join(out) + self.source[at:]
