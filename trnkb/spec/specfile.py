"""Reading spec YAML safely, with the line of every key and list item kept for errors.

Only plain YAML is accepted (PyYAML's SafeLoader): a tag such as
``!!python/object/apply`` is refused, never executed. Before anything is built the file
is checked to be a readable regular file of bounded size (a named pipe is never opened
for blocking reads) and its event stream is scanned: anchors and aliases (the spec format
has no use for them; "billion laughs" bombs use them) and nesting deeper than
:data:`MAX_DEPTH` are refused. Keys must be text; impossible calendar dates
(``2025-02-30``) are refused at their line. Every message is one line, with any echoed
value capped.
"""

from __future__ import annotations

import datetime
import os
import re
import stat
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 10_000_000  # one spec file
MAX_DEPTH = 32  # nested mappings / lists (the format needs about 4)
MAX_MESSAGE = 400  # characters of one error message
MAX_ERRORS = 200  # messages listed by one SpecError; the rest are counted

# Characters refused in every text of every input file: C0 controls other than tab and
# line ends (NUL, ESC of ANSI sequences...), DEL, C1 controls, and the bidirectional
# embeddings, overrides and isolates that make text display in another order than it reads.
_UNSAFE_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
                          "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


_CONTROL_NAMES = {0x00: "NUL", 0x1B: "ESC, the start of ANSI escape sequences", 0x7F: "DEL"}


def _codepoint(ch: str) -> str:
    """``U+0663 (ARABIC-INDIC DIGIT THREE)``: a character named for a message."""
    name = unicodedata.name(ch, "") or _CONTROL_NAMES.get(ord(ch), "a C0/C1 control")
    return f"U+{ord(ch):04X} ({name})"


def text_problem(text: str) -> str | None:
    """Why ``text`` may not appear in an input file (a control character, an ANSI escape,
    a bidirectional override), naming the first offending code point; None when fine."""
    m = _UNSAFE_TEXT.search(text)
    if m is None:
        return None
    what = "bidirectional control" if ord(m[0]) > 0x9F else "control character"
    return f"{what} {_codepoint(m[0])} is not allowed in text"


def ascii_text(text: str, what: str = "") -> str:
    """``text`` after NFKC normalisation (fullwidth ``１４４`` -> ``144``), which must then be
    ASCII; raises ``ValueError`` naming the first other code point (``U+0661``...)."""
    norm = unicodedata.normalize("NFKC", text)
    for ch in norm:
        if ord(ch) > 0x7F:
            raise ValueError(f"{what} {show(text)} has the non-ASCII character "
                             f"{_codepoint(ch)}".lstrip())
    return norm


def show(value: object, cap: int = 60) -> str:
    """``repr(value)`` cut to ``cap`` characters: never echo an unbounded value."""
    text = repr(value)
    return text if len(text) <= cap else f"{text[:cap]}... ({len(text):,} chars)"


def suggest(name: object, options: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for a near miss of ``name`` among ``options`` (case
    ignored: ``TRAINIUM3`` finds ``trainium3``), else ``""``."""
    import difflib

    name = str(name)[:200]
    lower: dict[str, str] = {}
    for o in map(str, options):
        lower.setdefault(o.lower(), o)
    if name.lower() in lower and lower[name.lower()] != name:
        return f" (did you mean {lower[name.lower()]!r}?)"
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.6)
    return f" (did you mean {lower[close[0]]!r}?)" if close else ""


def _one_line(message: str) -> str:
    message = message.replace("\r", "\\r").replace("\n", "\\n")
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + "..."


_MORE = re.compile(r"^\.\.\. and ([\d,]+) more$")


class SpecError(Exception):
    """A spec directory that cannot be loaded. ``errors`` holds one
    ``file:line: field: what is wrong`` message per problem (each one line, capped)."""

    def __init__(self, errors: list[str]):
        listed: list[str] = []
        more = 0  # problems counted by the tail of a listing already capped
        for e in map(str, errors):
            m = _MORE.match(e)
            if m:
                more += int(m[1].replace(",", ""))
            else:
                listed.append(e)
        errors = listed
        #: how many problems there are (``errors`` lists at most MAX_ERRORS of them)
        self.total = len(errors) + more
        self.errors = [_one_line(e) for e in errors[:MAX_ERRORS]]
        if self.total > len(self.errors):
            self.errors.append(f"... and {self.total - len(self.errors):,} more")
        super().__init__("\n".join(self.errors))


class LineDict(dict[Any, Any]):
    """A mapping that remembers the line of the mapping and of each key (1-based)."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list[Any]):
    """A list that remembers its own line and the line of each item (1-based)."""

    line: int = 0
    item_lines: list[int]


def item_line(seq: object, index: int, default: int = 1) -> int:
    """Line of item ``index`` of a list read by :func:`read_yaml` (``default`` otherwise)."""
    lines = getattr(seq, "item_lines", None)
    return int(lines[index]) if lines and index < len(lines) else default


def _kind_of(value: object) -> str:
    if isinstance(value, bool):
        return "a true/false value"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, datetime.date):
        return "a date"
    if value is None:
        return "null"
    return type(value).__name__


class _LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader (libyaml's when available: 10x faster) keeping key and item lines."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise yaml.constructor.ConstructorError(
                None, None, "a key must be text, got a list or mapping", key_node.start_mark
            )
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"key {key_node.value!r} is {_kind_of(key)}, not text (quote it if it is a name)",
                key_node.start_mark,
            )
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {show(key)}", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


def _construct_str(loader: _LineLoader, node: yaml.ScalarNode) -> str:
    value = loader.construct_scalar(node)
    problem = text_problem(value)
    if problem:
        raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark)
    return str(value)


def _construct_timestamp(loader: _LineLoader, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except (ValueError, OverflowError) as e:
        raise yaml.constructor.ConstructorError(
            None, None, f"impossible date {show(node.value)} ({e})", node.start_mark
        ) from None


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
_LineLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
_LineLoader.add_constructor("tag:yaml.org,2002:str", _construct_str)


def display_path(path: Path) -> str:
    """The path as a user would type it: relative to the working directory when inside it."""
    path = Path(path)
    try:  # the file itself is not resolved: a symlink shows its own name (and may loop)
        return str((path.parent.resolve() / path.name).relative_to(Path.cwd().resolve()))
    except (ValueError, OSError, RuntimeError):
        return str(path)


def read_bytes(path: Path, name: str | None = None) -> bytes:
    """The bytes of a regular, readable file of at most :data:`MAX_BYTES`.

    A directory, named pipe, device or socket is refused without blocking: the file is
    opened non-blocking and checked with ``fstat`` before anything is read.
    """
    name = name or display_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except IsADirectoryError:
        raise SpecError([f"{name}:1: (file): is a directory, not a YAML file"]) from None
    except FileNotFoundError:
        raise SpecError([f"{name}:1: (file): missing"]) from None
    except OSError as e:
        raise SpecError([f"{name}:1: (file): cannot read ({e.strerror or e})"]) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SpecError([f"{name}:1: (file): is a directory, not a YAML file"])
        if not stat.S_ISREG(st.st_mode):
            raise SpecError(
                [
                    f"{name}:1: (file): not a regular file (a named pipe, device or "
                    f"socket); refusing to read it"
                ]
            )
        if st.st_size > MAX_BYTES:
            raise SpecError(
                [f"{name}:1: (file): {st.st_size:,} bytes, above the limit of {MAX_BYTES:,}"]
            )
        chunks, total = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_BYTES:
                raise SpecError([f"{name}:1: (file): above the limit of {MAX_BYTES:,} bytes"])
        return b"".join(chunks)
    except OSError as e:
        raise SpecError([f"{name}:1: (file): cannot read ({e.strerror or e})"]) from None
    finally:
        os.close(fd)


def _scan(text: str, name: str) -> None:
    """Refuse anchors, aliases and deep nesting from the event stream, before building."""
    depth = 0
    for event in yaml.parse(text, Loader=_LineLoader):
        line = event.start_mark.line + 1 if event.start_mark else 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise SpecError(
                [
                    f"{name}:{line}: (yaml): anchors and aliases (&, *) are not "
                    f"allowed in spec files; write the value out"
                ]
            )
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                raise SpecError(
                    [f"{name}:{line}: (yaml): nested more than {MAX_DEPTH} levels deep"]
                )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def read_yaml(path: Path) -> Any:
    """Parse one YAML file. Raises :class:`SpecError` with ``file:line`` on any problem.

    UTF-8 with or without a byte-order mark; LF or CRLF line ends.
    """
    name = display_path(path)
    return parse_yaml(read_bytes(path, name), name)


def parse_yaml(raw: bytes, name: str) -> Any:
    """Parse the bytes of one YAML file called ``name`` (as :func:`read_yaml`)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        start = e.start + (3 if raw.startswith(b"\xef\xbb\xbf") else 0)
        line = raw[:start].count(b"\n") + 1
        raise SpecError([f"{name}:{line}: (file): not UTF-8 (byte 0x{raw[start]:02x})"]) from None
    if not text.strip() or all(
        not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()
    ):
        raise SpecError([f"{name}:1: (file): file is empty"])
    try:
        _scan(text, name)
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        problem = (e.problem or str(e)).strip()
        if "could not determine a constructor" in problem:
            tag = re.search(r"tag '([^']+)'", problem)
            problem = f"unsafe or unknown YAML tag refused ({tag.group(1) if tag else problem})"
        raise SpecError([f"{name}:{line}: (yaml): {problem}"]) from None
    except yaml.reader.ReaderError as e:  # control characters: a position, not a mark
        line = text[: e.position].count("\n") + 1
        raise SpecError(
            [f"{name}:{line}: (yaml): {e.reason} (character {e.character!r})"]
        ) from None
    except yaml.YAMLError as e:
        raise SpecError([f"{name}:1: (yaml): {str(e).splitlines()[0] if str(e) else e}"]) from None
    except RecursionError:
        raise SpecError([f"{name}:1: (yaml): nested too deep"]) from None
