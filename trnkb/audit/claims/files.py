"""Where claims live: ``claims.yaml`` and the extra claim files beside it, read as entries
and the sources those files define for themselves."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from trnkb.kb.files import source_rows
from trnkb.kb.values import Ctx
from trnkb.spec import fields
from trnkb.spec.specfile import display_path, read_yaml, show

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

EXTRA_FILES = ("claims/tools.yaml", "claims/measured.yaml")
#: kinds of the sources a claim file defines: those of sources.yaml, and a tool's own
#: repository or documentation (``tool``)
SOURCE_KINDS = (*fields.SOURCE_KINDS, "tool")


def claims_path(kb: KnowledgeBase) -> Path:
    return Path(kb.path) / "claims.yaml"


def claim_files(kb: KnowledgeBase, path: Path | None = None) -> list[Path]:
    """The claim files: ``claims.yaml`` and the extra files beside it that exist."""
    main = Path(path) if path is not None else claims_path(kb)
    files = [main]
    if path is None:
        files += [main.parent / f for f in EXTRA_FILES if (main.parent / f).exists()]
    return files


def read_claim_file(path: Path) -> tuple[list[Any], list[Any], list[str]]:
    """(claims, sources, errors) of one file: a list of claims or ``{sources, claims}``."""
    name = display_path(path)
    data = read_yaml(path)
    if isinstance(data, list):
        return data, [], []
    if isinstance(data, dict) and isinstance(data.get("claims"), list):
        sources = data.get("sources") or []
        if not isinstance(sources, list):
            return [], [], [f"{name}:1: sources: expected a list"]
        errors: list[str] = []
        for key in data:
            if key not in ("sources", "claims"):
                line = getattr(data, "key_lines", {}).get(key, 1)
                errors.append(f"{name}:{line}: {show(key, 40)[1:-1]}: unknown key; a claim "
                              "file has sources and claims")
        # the same rules as sources.yaml: id, url (http(s) or a seed file), kind, date
        rows = source_rows(sources, Ctx(name, errors), kinds=SOURCE_KINDS)
        return data["claims"], rows, errors
    return [], [], [f"{name}:1: (file): expected a list of claims or {{sources, claims}}"]


def claim_sources(kb: KnowledgeBase, path: Path | None = None) -> pd.DataFrame:
    """The sources that claim files define for themselves (other tools, benchmarks)."""
    rows = []
    for p in claim_files(kb, path):
        if p.exists():
            rows += [dict(s) for s in read_claim_file(p)[1] if isinstance(s, dict)]
    return pd.DataFrame(rows)
