"""The public API (issue 23): what `trnkb` and each package's face export, and nothing else.

The names are read from the source with ``ast`` (not through the code under test): the
``__all__`` of ``trnkb/__init__.py`` and of every ``trnkb/**/__init__.py``. No other module
may declare ``__all__``, the total stays within 150, and the API reference page has one
entry per public name and none for anything else.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import trnkb
from trnkb.site.pages import api_page

ROOT = Path(trnkb.__file__).parent
LIMIT = 150


def _declared_all(path: Path) -> list[str] | None:
    for node in ast.parse(path.read_text()).body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert node.value is not None, path
            return list(ast.literal_eval(node.value))
    return None


def _package(path: Path) -> str:
    return ".".join(("trnkb", *path.parent.relative_to(ROOT).parts))


def public_names() -> set[str]:
    names = set()
    for path in ROOT.rglob("__init__.py"):
        for name in _declared_all(path) or []:
            names.add(f"{_package(path)}.{name}")
    return names


def test_at_most_150_public_names_and_each_resolves():
    names = public_names()
    assert 0 < len(names) <= LIMIT, len(names)
    for full in sorted(names):
        package, name = full.rsplit(".", 1)
        assert hasattr(importlib.import_module(package), name), full


def test_only_package_faces_declare_all():
    declaring = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                       if p.name != "__init__.py" and _declared_all(p) is not None)
    assert declaring == [], "private modules: drop __all__ (export from the package face)"


def test_api_page_lists_exactly_the_public_names():
    page = api_page()
    entries, package = [], ""
    for line in page.splitlines():  # py: directives name the object inside its automodule
        if m := re.match(r"\.\. automodule:: (\S+)$", line):
            package = m.group(1)
        elif m := re.match(r"\.\. auto(?:class|function|data):: (\S+)$", line):
            entries.append(m.group(1))
        elif m := re.match(r"\.\. py:(?:class|function|data):: (\w+)$", line):
            entries.append(f"{package}.{m.group(1)}")
    assert len(entries) == len(set(entries))
    assert set(entries) == public_names()
    faces = {_package(p) for p in ROOT.rglob("__init__.py") if _declared_all(p)}
    assert set(re.findall(r"^\.\. automodule:: (\S+)$", page, re.M)) == faces
    assert f"The {len(public_names())} public names" in page
