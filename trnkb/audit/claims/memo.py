"""Evaluated claims remembered in memory and on disk, keyed by what they are a function of.

A claim's verdict depends on the spec directory (every YAML file in it), the claim files
and trnkb's own code; nothing else. The key is a SHA-256 of all three, so an entry can
never be stale: edit a spec, a claim or a line of code and the claims are evaluated again.
In one process the evaluation is remembered per knowledge-base object; across processes
(``trnkb validate`` then ``trnkb claims``, the site build, the notebooks) it is stored in
trnkb's user cache (``TRNKB_NO_CACHE=1`` turns that off). Entries are read back with an
unpickler that accepts only the classes an evaluation holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import pickle
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from trnkb.spec.specfile import SpecError, display_path, read_bytes
from trnkb.userdirs import cache_dir, code_digest, store

T = TypeVar("T")

_MEMORY: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
MAX_ENTRIES = 32  # on disk; the oldest are removed beyond this


def key(spec_dir: Path, files: list[Path]) -> str | None:
    """The content key of an evaluation, or None when a file cannot be read (evaluate
    afresh, so the refusal is reported)."""
    h = hashlib.sha256(code_digest())
    try:
        for p in [*sorted(Path(spec_dir).rglob("*.yaml")), *files]:
            h.update(str(p).encode() + b"\0" + read_bytes(p, display_path(p)))
    except (SpecError, OSError):
        return None
    return h.hexdigest()


class _EvaluationUnpickler(pickle.Unpickler):
    """Only what an evaluation holds: trnkb's claims, pint quantities, numbers, containers."""

    MODULES = ("trnkb.audit.claims.", "pint.", "numpy", "datetime", "decimal", "fractions")
    BUILTINS = {"set", "frozenset", "tuple", "list", "dict", "complex", "float", "int", "slice"}

    def find_class(self, module: str, name: str) -> Any:
        if (module.startswith(self.MODULES) or module in ("pint", "copyreg")
                or (module == "builtins" and name in self.BUILTINS)):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a claims evaluation")


def remembered(kb: Any, spec_dir: Path, files: list[Path], compute: Callable[[], T]) -> T:
    """``compute()``, or its remembered result for this knowledge base and content."""
    k = key(spec_dir, files)
    if k is None:
        return compute()
    try:
        memo = _MEMORY.setdefault(kb, {})
    except TypeError:  # an object that cannot be weakly referenced: no memory
        memo = {}
    if k in memo:
        return memo[k]  # type: ignore[no-any-return]
    folder = cache_dir("claims")
    entry = folder / f"{k}.pickle" if folder is not None else None
    if entry is None:
        memo[k] = compute()
        return memo[k]  # type: ignore[no-any-return]
    # One evaluation at a time per key across processes (the test workers, a site build
    # beside the notebooks): a second process waits for the first one's entry.
    with _exclusive(entry.with_suffix(".lock")):
        try:
            memo[k] = _EvaluationUnpickler(io.BytesIO(entry.read_bytes())).load()
            return memo[k]  # type: ignore[no-any-return]
        except Exception:  # absent, truncated or foreign: evaluate
            pass
        memo[k] = compute()
        _store(entry, memo[k])
    return memo[k]  # type: ignore[no-any-return]


@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """An advisory lock on ``lock`` (released when the process ends); none where it cannot
    be taken (no ``fcntl``, an unwritable cache)."""
    try:
        import fcntl

        f = open(lock, "a")  # noqa: SIM115  (closed below, which releases the lock)
    except (ImportError, OSError):
        yield
        return
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        f.close()


def _store(entry: Path, value: Any) -> None:
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an unpicklable evaluation is not remembered
        return
    store(entry, data, MAX_ENTRIES)
