"""docs/workload*.md render as written: no wrapped formula line opens a list by accident.

A line that starts with ``+ ``, ``- `` or ``* `` inside a paragraph starts a Markdown list
item, even in the middle of an inline code span (block structure wins over inline code),
so the span breaks and its backticks show. Such a line must belong to a real list: after
a blank line or another item.
"""

import re
from pathlib import Path

import pytest

DOCS = sorted((Path(__file__).resolve().parents[2] / "docs").glob("workload*.md"))
_ITEM = re.compile(r"^\s*[-+*]\s")


def stray_list_lines(text: str) -> list[str]:
    """Lines that open a list item where the writer meant running text: inside an open inline
    code span, or right after a paragraph line that does not introduce a list (no colon)."""
    bad, prev, fenced, ticks = [], "", False, 0
    for line in text.splitlines():
        if line.startswith("```"):
            fenced, prev, ticks = not fenced, "", 0
            continue
        if fenced:
            continue
        if _ITEM.match(line):
            in_code = ticks % 2 == 1
            after_text = bool(prev.strip()) and not _ITEM.match(prev) \
                and not prev.rstrip().endswith(":")
            if in_code or after_text:
                bad.append(line)
            ticks = 0
        ticks = 0 if not line.strip() else ticks + line.count("`")
        prev = line
    return bad


def test_the_check_catches_a_wrapped_plus():
    """The wrapping the QA pass found (docs/workload.md before the fix), written by hand."""
    assert stray_list_lines("decode = `max(weights / HBM)\n+ KV) / HBM` + comm\n") \
        == ["+ KV) / HBM` + comm"]
    assert stray_list_lines("step = compute\n- the bubble\n\n- a list\n") == ["- the bubble"]
    assert stray_list_lines("text\n\n- item one\n- item `two`\n") == []
    assert stray_list_lines("Screened afterwards:\n- `a`: fitted\n- `b`: fitted\n") == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_no_line_opens_a_list_inside_a_paragraph(doc):
    assert stray_list_lines(doc.read_text(encoding="utf-8")) == []
