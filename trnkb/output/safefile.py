"""Writing one output file the way exports write directories: atomically, never through
a symlink, never over a file trnkb did not write.

The file starts with a ``signature`` (e.g. the opening of a JSON document naming trnkb
as its generator). An existing file is replaced only when it is a regular file that
starts with the same signature (an earlier run's output); anything else (a symlink, a
directory, a device, a user's file) is refused with a one-line ``ValueError`` naming
the option. The new text is written to a fresh temporary file beside the target and
renamed over it in one step, so a reader sees the old file or the new one, whole.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def write_file(path: str | Path, text: str, signature: str, option: str) -> Path:
    """Write ``text`` (which must start with ``signature``) to ``path``; see the module."""
    if not text.startswith(signature):
        raise AssertionError("the text must start with its signature")
    path = Path(os.path.abspath(path))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise ValueError(f"{option} {path}: cannot use it ({e.strerror or e})") from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise ValueError(f"{option} {path} is a symbolic link; refusing to write through it")
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{option} {path} exists and is not a regular file")
        if not _starts_with(path, signature):
            raise ValueError(f"{option} {path} exists and trnkb did not write it; refusing to "
                             f"overwrite it (remove it or choose another name)")
    if not path.parent.is_dir():
        raise ValueError(f"{option} {path}: {path.parent} is not a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise ValueError(f"{option} {path}: cannot write there ({e.strerror or e})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _starts_with(path: Path, signature: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        return f.read(len(signature.encode())) == signature.encode()
