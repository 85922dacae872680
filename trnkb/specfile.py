"""Reading spec YAML safely, with the line of every key kept for error messages.

Only plain YAML is accepted (PyYAML's SafeLoader): a tag such as
``!!python/object/apply`` is refused, never executed.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml


class SpecError(Exception):
    """A spec directory that cannot be loaded. ``errors`` holds one
    ``file:line: field: what is wrong`` message per problem."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


class LineDict(dict):
    """A mapping that remembers the line of the mapping and of each key (1-based)."""

    line: int = 0
    key_lines: dict


class _LineLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """SafeLoader (libyaml's when available: 10x faster) keeping key lines."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in out:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def display_path(path: Path) -> str:
    """The path as a user would type it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_yaml(path: Path):
    """Parse one YAML file. Raises :class:`SpecError` with ``file:line`` on any problem."""
    name = display_path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise SpecError([f"{name}:{line}: (file): not UTF-8 (byte 0x{raw[e.start]:02x})"]) from None
    if not text.strip() or all(
        not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()
    ):
        raise SpecError([f"{name}:1: (file): file is empty"])
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        problem = (e.problem or str(e)).strip()
        if "could not determine a constructor" in problem:
            tag = re.search(r"tag '([^']+)'", problem)
            problem = f"unsafe or unknown YAML tag refused ({tag.group(1) if tag else problem})"
        raise SpecError([f"{name}:{line}: (yaml): {problem}"]) from None
