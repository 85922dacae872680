"""Directories a command may write into or clear: only ones it made itself.

Shared by the site builder (:mod:`trnkb.site.outdir`) and the exporter
(:mod:`trnkb.output.exportfs`), with the two tools both need to replace a directory
safely: :func:`exchange` (swap two directories in one step) and :func:`locked` (one
build or export at a time per output). A directory is refused when it is a symlink or a file, the
filesystem root, the current or home directory, a repository root (holds ``.git``), an
ancestor of a protected path (the current directory, home, the spec directory), or a
non-empty directory without the command's marker file.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
from collections.abc import Iterator
from pathlib import Path


def _is_within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def refusal(path: Path, protected: list[Path], marker: str, who: str) -> str | None:
    """Why ``path`` (absolute, symlinks not resolved) must not be cleared, or None."""
    if path.is_symlink():
        return "is a symbolic link"
    real = path.resolve()
    if path.exists() and not path.is_dir():
        return "is a file, not a directory"
    if real == Path(real.anchor):
        return "is the filesystem root"
    if real == Path.cwd().resolve():
        return "is the current directory"
    if real == Path.home().resolve():
        return "is the home directory"
    if (real / ".git").exists():
        return "is a repository root (it holds .git)"
    for p in protected:
        if _is_within(p, real):
            return f"contains {p}"
    if real.is_dir() and any(real.iterdir()) and not (real / marker).is_file():
        return f"is a non-empty directory that {who} did not create (no {marker} marker)"
    return None


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with ``renameat2(RENAME_EXCHANGE)`` (Linux >= 3.15, glibc
    >= 2.28). False where that is unavailable or impossible here (another kernel or file
    system, a mount point: ``EBUSY``, two file systems: ``EXDEV``); other errors raise."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBUSY, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(a))


@contextlib.contextmanager
def locked(directory: Path, target: Path, error: type[Exception] = ValueError) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` (the parent the output is staged in) while
    writing ``target``; a second build or export raises ``error`` at once with a clear
    message instead of racing the first. Where the file system has no locks, no lock."""
    import fcntl

    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        yield  # cannot open the directory to lock it; the write itself will say why
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise error(f"{target}: another trnkb build or export is writing there (or beside "
                        f"it, in {directory}) right now; run again when it has finished"
                        ) from None
        except OSError:
            pass  # no locks on this file system
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
