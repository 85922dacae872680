"""Writing spec text into Markdown (MyST) safely.

Spec strings are data, not markup: a title containing ``<script>`` or ``*`` must show as
those characters. :func:`escape` backslash-escapes every character that can open a tag,
an entity, a link, code, emphasis, math or a table cell (CommonMark lets any ASCII
punctuation be escaped), and any punctuation at the start, where it could open a list,
quote or heading.
"""

from __future__ import annotations

import re
import string

import pandas as pd

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|&~$#])")
_SAFE_URL = re.compile(r"^https?://[^\s<>()|\\`\"']+$")


def escape(text: object) -> str:
    """Text that Markdown renders literally, on one line (``<``, ``|``, ``*``... escaped)."""
    if text is None or (isinstance(text, float) and text != text):
        return ""
    text = _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    if text and text[0] in string.punctuation and text[0] != "\\":
        return "\\" + text
    return re.sub(r"^(\d+)([.)])", r"\1\\\2", text)  # "1." would open a list


def link(text: object, url: str) -> str:
    """A Markdown link when ``url`` is a plain http(s) URL, otherwise the escaped text."""
    if isinstance(url, str) and _SAFE_URL.match(url):
        return f"[{escape(text)}](<{url}>)"
    return escape(text)


def table(df: pd.DataFrame, raw: tuple[str, ...] = ()) -> str:
    """A pipe table of ``df`` with every cell escaped, except columns named in ``raw``
    (already Markdown, e.g. built with :func:`link`)."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(escape(c) for c in cols) + " |",
             "| " + " | ".join("---" for _ in cols) + " |"]
    for row in df.itertuples(index=False):
        cells = [str(v) if c in raw else escape(_cell(v)) for c, v in zip(cols, row, strict=True)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(v: object) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
