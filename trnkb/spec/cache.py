"""trnkb's user cache: parsed unit definitions and parsed spec files, never results.

Two things are cached, both keyed by the *content* of what was parsed (and by the code
that parsed it), so a cache entry can never be stale:

- pint's own cache of parsed unit definitions (:mod:`trnkb.units`);
- the parse tree of each spec YAML file (:func:`read_yaml_cached`): mappings with the line
  of every key, exactly what :func:`trnkb.spec.specfile.read_yaml` returns. Every value is still
  checked on every load; only the YAML parsing is skipped. Files that fail to parse are
  never cached.

Entries are read with an unpickler that accepts only the few classes a parse tree holds.
The folder is bounded (:data:`MAX_CACHE_BYTES`): after each new entry, the least
recently used ones (a hit refreshes an entry's time) are evicted down to three quarters
of the bound.
Set ``TRNKB_NO_CACHE=1`` to bypass the cache; an unwritable cache directory or an
unreadable entry simply means parsing again.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

from trnkb.userdirs import cache_dir

MAX_CACHE_BYTES = 32_000_000  # parse trees kept (the shipped specs take about 2 MB)


class _TreeUnpickler(pickle.Unpickler):
    """Only the classes of a YAML parse tree; anything else is refused."""

    ALLOWED = {("datetime", "date"), ("datetime", "datetime"), ("datetime", "timezone"),
               ("datetime", "timedelta"), ("builtins", "set")}

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        if module == "trnkb.spec.specfile":  # the loader's containers (LineDict, LineList...)
            obj = super().find_class(module, name)
            if isinstance(obj, type) and issubclass(obj, (dict, list)):
                return obj
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a spec parse tree")


def _code_key() -> bytes:
    import yaml

    from trnkb.spec import specfile

    src = Path(specfile.__file__).read_bytes()
    return hashlib.sha256(src + f"|{yaml.__version__}|{sys.version}".encode()).digest()


_KEY: list[bytes] = []


def read_yaml_cached(path: Path) -> Any:
    """:func:`trnkb.spec.specfile.read_yaml`, from the cache when this exact content was parsed
    before by this exact parser."""
    from trnkb.spec.specfile import display_path, parse_yaml, read_bytes

    folder = cache_dir("specs")
    name = display_path(Path(path))
    raw = read_bytes(Path(path), name)  # refuses directories, pipes, huge files: never blocks
    if folder is None:
        return parse_yaml(raw, name)
    if not _KEY:
        _KEY.append(_code_key())
    entry = folder / (hashlib.sha256(_KEY[0] + raw).hexdigest() + ".pickle")
    try:
        tree = _TreeUnpickler(io.BytesIO(entry.read_bytes())).load()
    except Exception:  # absent, truncated or foreign: parse
        pass
    else:
        with contextlib.suppress(OSError):
            os.utime(entry)  # recently used: evicted last
        return tree
    tree = parse_yaml(raw, name)  # raises SpecError: never cached
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(tree, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
        _evict(folder)
    except Exception:
        pass
    return tree


def _evict(folder: Path, limit: int | None = None) -> None:
    """Remove the least recently used entries while the folder holds more than ``limit``
    bytes (default :data:`MAX_CACHE_BYTES`), down to three quarters of it."""
    limit = MAX_CACHE_BYTES if limit is None else limit
    entries = []
    for e in os.scandir(folder):
        if e.name.endswith((".pickle", ".tmp")) and e.is_file(follow_symlinks=False):
            st = e.stat(follow_symlinks=False)
            entries.append((st.st_mtime, st.st_size, e.path))
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return
    for _, size, path in sorted(entries):
        if total <= limit * 3 // 4:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size
