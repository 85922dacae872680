"""Putting a directory of files in place safely: wholly old or wholly new, never a mix.

:func:`atomic_directory` gives a staging directory *beside* the target
(``.<name>.trnkb-staging-XXXX`` in the same parent, so on the same file system). The
caller writes its files there, then :meth:`Staging.commit` puts them in place:

- target absent: one ``rename`` of the staging directory;
- target present: files already in the target that this export does not write (the
  user's notes, stale files of an earlier export) are hard-linked into the staging
  directory (symlinks are re-created, never followed), then the two directories are
  swapped in one ``renameat2(RENAME_EXCHANGE)``; the old directory, now at the staging
  path, holds only trnkb's old files and second links to files that live on in the
  target, and is removed. Sub-directories of the target are moved back in after the swap
  (never deleted).

A process killed at any point leaves the target wholly old or wholly new; the next run
tidies what the killed one left beside it. Where the swap or hard links are not
available (another kernel, a target whose parent is read-only, a mount point such as a
container volume, a file system without hard links), files are staged inside the target
and replaced one by one with ``os.replace`` (each atomic, the descriptor last). One
export per output at a time: a second one is refused with a clear message (a lock).
Nothing is ever written through a symlink: files are created only inside the fresh
staging directory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from trnkb.output.outdir import exchange, locked, refusal

_STAGING = ".trnkb-staging-"
MARKER = ".trnkb-export"
"""File an export leaves in its directory: a later export may replace what is there."""


class ExportError(ValueError):
    """The output directory cannot be used; the message is one line."""


def _check_target(out: str | Path) -> Path:
    """The real target path, or :class:`ExportError` when it cannot be a directory."""
    out = Path(os.path.abspath(out))
    if out.is_symlink():
        real = out.resolve()
        if not real.is_dir():
            raise ExportError(f"--out {out} is a symlink to {real}, which is not a directory")
        out = real
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out} is a file, not a directory")
    for anc in out.parents:
        if anc.exists() or anc.is_symlink():
            if not anc.is_dir():
                raise ExportError(f"--out {out} is below {anc}, which is a file")
            break
    # never swap out the current, home or repository directory, nor a user's directory
    why = refusal(out, [Path.cwd().resolve(), Path.home().resolve()], MARKER, "trnkb export")
    if why:
        raise ExportError(f"refusing to export into {out}: it {why}")
    return out


def _tidy_leftovers(out: Path) -> None:
    """Remove what an interrupted export left beside ``out`` (only trnkb's own staging
    directories; sub-directories found in them go back into ``out``, never deleted)."""
    if out.is_dir() and not out.is_symlink():  # staged inside (read-only parent): all ours
        for d in out.glob(f"{_STAGING}*"):
            if d.is_dir() and not d.is_symlink():
                shutil.rmtree(d, ignore_errors=True)
    for d in out.parent.glob(f".{out.name}{_STAGING}*"):
        if not d.is_dir() or d.is_symlink():
            continue
        for e in d.iterdir():
            st = e.lstat()
            if stat.S_ISDIR(st.st_mode):
                if not (out / e.name).exists() and out.is_dir():
                    os.rename(e, out / e.name)
                continue
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and not e.name.startswith(
                    ("datapackage.json",)) and not _is_export_name(e.name) and out.is_dir() \
                    and not (out / e.name).exists():
                os.rename(e, out / e.name)  # a user's file with no other link: put it back
                continue
            e.unlink()
        with contextlib.suppress(OSError):
            d.rmdir()


def _is_export_name(name: str) -> bool:
    stem, _, ext = name.rpartition(".")
    return ext in ("parquet", "csv", "json") and bool(stem)


class Staging:
    """A staging directory for one export; see :func:`atomic_directory`."""

    def __init__(self, final: Path, path: Path, in_place: bool):
        self.final = final
        self.path = path
        self.in_place = in_place
        self.committed = False

    def commit(self, names: list[str]) -> None:
        """Put ``names`` (files in :attr:`path`; the descriptor last) in place."""
        for n in names:
            target = self.final / n
            if target.is_dir() and not target.is_symlink():
                raise ExportError(f"--out {self.final}: {n} exists there as a directory")
        if not self.in_place and not self.final.exists():
            os.rename(self.path, self.final)
        elif self.in_place or not self._swap(set(names)):
            self._replace_one_by_one(names)
        self.committed = True

    def _swap(self, names: set[str]) -> bool:
        subdirs = []
        try:
            for e in self.final.iterdir():
                if e.name in names:
                    continue
                st = e.lstat()
                if stat.S_ISLNK(st.st_mode):
                    os.symlink(os.readlink(e), self.path / e.name)
                elif stat.S_ISDIR(st.st_mode):
                    subdirs.append(e.name)
                else:
                    os.link(e, self.path / e.name, follow_symlinks=False)
        except OSError:
            return False  # no hard links here: fall back to one-by-one
        if not exchange(self.path, self.final):
            return False
        old = self.path  # after the swap the staging path holds the old directory
        for d in subdirs:
            os.rename(old / d, self.final / d)
        for e in old.iterdir():
            if e.is_dir() and not e.is_symlink():
                continue  # never delete a directory trnkb did not create
            e.unlink()
        with contextlib.suppress(OSError):
            old.rmdir()
        return True

    def _replace_one_by_one(self, names: list[str]) -> None:
        for n in names:
            src = self.path / n
            if src.exists():
                os.replace(src, self.final / n)
        shutil.rmtree(self.path, ignore_errors=True)


@contextlib.contextmanager
def atomic_directory(out: str | Path) -> Iterator[Staging]:
    """Stage files for ``out`` and put them in place on :meth:`Staging.commit`.

    Raises :class:`ExportError` (one line) when ``out`` is a file, lies below a file or
    cannot be written. If the block fails or is interrupted before commit, ``out`` is
    untouched and the staging directory is removed.
    """
    final = _check_target(out)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ExportError(f"cannot create {final.parent}: {e.strerror}") from None
    with locked(final.parent, final, ExportError):  # one export per output at a time
        yield from _staged(final)


def _staged(final: Path) -> Iterator[Staging]:
    with contextlib.suppress(OSError):
        _tidy_leftovers(final)
    in_place = False
    try:
        if os.path.ismount(final):  # a mount point cannot be swapped: stage inside it
            raise OSError(errno.EBUSY, "a mount point")
        path = Path(tempfile.mkdtemp(prefix=f".{final.name}{_STAGING}", dir=final.parent))
    except OSError as e:
        if not final.is_dir():
            raise ExportError(f"cannot write to {final}: {e.strerror}") from None
        try:  # parent read-only or a mount point, the target writable: stage inside it
            path = Path(tempfile.mkdtemp(prefix=_STAGING, dir=final))
            in_place = True
        except OSError as e2:
            raise ExportError(f"cannot write to {final}: {e2.strerror}") from None
    if not in_place:  # mkdtemp makes 0700; the target keeps its mode (or gets mkdir's)
        umask = os.umask(0)
        os.umask(umask)
        mode = stat.S_IMODE(final.stat().st_mode) if final.is_dir() else 0o777 & ~umask
        os.chmod(path, mode)
    staging = Staging(final, path, in_place)
    try:
        yield staging
    except OSError as e:
        raise ExportError(f"cannot write to {final}: {e.strerror or e}") from None
    finally:
        if not staging.committed:
            shutil.rmtree(path, ignore_errors=True)
