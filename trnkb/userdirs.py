"""Where trnkb keeps files of its own on the user's machine (standard library only).

Importable from every layer (it sits outside them, like :mod:`trnkb.peaks`): the unit
registry's cache, the parse cache, remembered claims and the peak table use it, and
``import trnkb.peaks`` must stay free of pint and pandas.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_CODE: list[bytes] = []


def cache_dir(name: str) -> Path | None:
    """``<user cache>/trnkb/<name>``, created; None when caching is off or impossible."""
    if os.environ.get("TRNKB_NO_CACHE"):
        return None
    try:
        import platformdirs

        folder = platformdirs.user_cache_path("trnkb", appauthor=False) / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder if os.access(folder, os.W_OK) else None
    except Exception:  # no home directory, read-only file system...
        return None


def code_digest() -> bytes:
    """sha256 of every trnkb module's path and text (computed once per process): the part
    of a cache key that changes whenever the code does."""
    if not _CODE:
        root = Path(__file__).resolve().parent  # the trnkb package
        h = hashlib.sha256()
        for p in sorted(root.rglob("*.py")):
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
        _CODE.append(h.digest())
    return _CODE[0]


def store(entry: Path, data: bytes, keep: int) -> None:
    """Write ``data`` to the cache file ``entry`` atomically (a reader sees the old file or
    the whole new one), then remove the oldest files of its suffix beyond ``keep``. An
    unwritable cache is no cache: errors are swallowed."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, entry)
        old = sorted(entry.parent.glob(f"*{entry.suffix}"), key=lambda p: p.stat().st_mtime)
        for p in old[:-keep]:
            p.unlink(missing_ok=True)
            p.with_suffix(".lock").unlink(missing_ok=True)
    except Exception:
        pass
