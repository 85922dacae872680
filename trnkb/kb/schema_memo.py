"""Table-schema passes remembered on disk, keyed by exactly what the schemas checked.

``trnkb validate`` runs the pandera schemas (:func:`trnkb.kb.loading.check_schemas`), a
second implementation of the loader's per-value rules that costs more than the rest of
loading (importing pandera and checking every column). Its verdict is a function of the
wide tables and of the code that builds and runs the schemas, so a pass is remembered
under a SHA-256 of: trnkb's code, the pandas and pandera versions, the schema builder in
use, and every table's columns, dtypes and values. A spec edit, a table changed in
memory, or a line of code changed means checking again; failures are never remembered.
``TRNKB_NO_CACHE=1`` turns it off (:func:`trnkb.userdirs.cache_dir`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from trnkb.userdirs import cache_dir, code_digest

if TYPE_CHECKING:
    from trnkb.kb.base import KnowledgeBase

MAX_ENTRIES = 64


def key(kb: KnowledgeBase, builder: Callable[..., Any]) -> str | None:
    """The content key of a schema check of ``kb``'s tables with ``builder``; None when
    caching is impossible (check afresh)."""
    try:
        h = hashlib.sha256(code_digest())
        for dist in ("pandas", "pandera", "pint-pandas"):
            h.update(f"{dist}={importlib.metadata.version(dist)}\0".encode())
        h.update(f"{builder.__module__}.{builder.__qualname__}\0".encode())
        for name in sorted(kb.tables):
            wide = kb.table(name)
            h.update(f"{name}\0{list(wide.columns)}\0{[str(t) for t in wide.dtypes]}\0".encode())
            h.update(wide.to_csv(index=False).encode())
    except Exception:  # an unhashable table, a missing distribution: no memory
        return None
    return h.hexdigest()


def passed(k: str | None) -> bool:
    """Whether a check with content key ``k`` passed before."""
    folder = cache_dir("schemas")
    return k is not None and folder is not None and (folder / k).is_file()


def remember(k: str | None) -> None:
    """Record that the check with content key ``k`` passed (the oldest beyond
    :data:`MAX_ENTRIES` are removed)."""
    folder = cache_dir("schemas")
    if k is None or folder is None:
        return
    try:
        (folder / k).touch()
        old = sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime)
        for p in old[:-MAX_ENTRIES]:
            p.unlink(missing_ok=True)
    except OSError:  # an unwritable cache is no cache
        pass
