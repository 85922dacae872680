"""Output directories the site builder may delete (only the ones it made itself), and
the atomic rebuild.

:func:`rebuild` gives a scratch directory ``.OUT.trnkb-build-XXXX`` beside ``OUT`` (same
parent, so the same file system) holding the Sphinx sources (``src``), the new site
(``site``) and whatever Sphinx extensions write beside their output (``jupyter_execute``);
:meth:`Rebuild.commit` swaps the new site into place in one ``renameat2`` exchange, and
the scratch directory (with the old site) is removed. A build killed at any point
leaves ``OUT`` wholly old or wholly new; the next build removes what it left beside
``OUT``. One build per parent directory at a time (a lock; a second gets a clear
refusal). Before it replaces ``OUT``, :func:`check` makes sure it is safe to clear:

- it does not exist yet, or is empty, or carries the builder's marker file
  (:data:`MARKER`, written when the builder created it);
- it is not a symlink and not a file;
- it is not the current directory, the home directory, the filesystem root, a
  repository root (holds ``.git``), nor an ancestor of the current directory, the home
  directory or the spec directory.

Anything else is refused with :class:`UnsafeOutput` before a single file is touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from trnkb.output.outdir import exchange, locked, refusal

MARKER = ".trnkb-site"
_MARKER_TEXT = "Created by `python -m trnkb.site`; the builder may delete this directory.\n"


class UnsafeOutput(ValueError):
    """An output path the site builder refuses to clear or write (one-line message)."""


def check(path: str | Path, specs: str | Path | None = None) -> None:
    """Raise :class:`UnsafeOutput` when :func:`claim` would refuse ``path``; touch nothing."""
    path = Path(os.path.abspath(path))
    protected = [Path.cwd().resolve(), Path.home().resolve()]
    if specs is not None:
        protected.append(Path(specs).resolve())
    why = refusal(path, protected, MARKER, "the site builder")
    if why:
        raise UnsafeOutput(f"refusing to use {path} as site output: it {why}")


def claim(path: str | Path, specs: str | Path | None = None) -> Path:
    """Make ``path`` an empty directory owned by the site builder and return it (absolute).

    Refuses (:class:`UnsafeOutput`, nothing deleted) any path listed in the module
    docstring. A directory that passes is emptied and gets the :data:`MARKER` file.

    Parameters
    ----------
    path : path-like
        The output (or staging) directory.
    specs : path-like, optional
        The spec directory being built from; neither it nor anything containing it is cleared.
    """
    check(path, specs)
    path = Path(os.path.abspath(path))
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    (path / MARKER).write_text(_MARKER_TEXT, encoding="utf-8")
    return path


_SCRATCH = ".trnkb-build-"


class Rebuild:
    """The scratch directories of one build; see :func:`rebuild`."""

    def __init__(self, out: Path, scratch: Path) -> None:
        self.out = out
        self.scratch = scratch
        self.src = scratch / "src"
        self.site = claim(scratch / "site")
        self.committed = False

    def commit(self) -> None:
        """Put the new site (:attr:`site`) in place of ``out``: one exchange when ``out``
        exists (the old site lands in the scratch directory), a rename when it does not."""
        if not self.out.exists():
            os.rename(self.site, self.out)
        elif not exchange(self.site, self.out):
            if os.path.ismount(self.out):  # cannot be renamed: replace its entries
                for e in list(self.out.iterdir()):
                    shutil.rmtree(e) if e.is_dir() and not e.is_symlink() else e.unlink()
                for e in list(self.site.iterdir()):
                    os.rename(e, self.out / e.name)
            else:  # no exchange here: two renames, the old site out of the way first
                os.rename(self.out, self.scratch / "old")
                os.rename(self.site, self.out)
        self.committed = True


def _tidy(out: Path) -> None:
    """Remove the scratch directories a killed build left beside ``out``."""
    for d in out.parent.glob(f".{out.name}{_SCRATCH}*"):
        if d.is_dir() and not d.is_symlink():
            shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def rebuild(out: str | Path, specs: str | Path | None = None) -> Iterator[Rebuild]:
    """Scratch space for a new site at ``out``; :meth:`Rebuild.commit` swaps it in.

    Refuses (:class:`UnsafeOutput`, nothing touched) an ``out`` that :func:`check`
    refuses, and a second build into the same parent directory while one runs. The
    scratch directory is removed when the block ends, committed or not.
    """
    out = Path(os.path.abspath(out))
    check(out, specs)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UnsafeOutput(f"cannot create {out.parent}: {e.strerror or e}") from None
    with locked(out.parent, out, UnsafeOutput):
        check(out, specs)  # again, now that no other build can change it
        _tidy(out)
        try:
            scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}{_SCRATCH}", dir=out.parent))
        except OSError as e:
            raise UnsafeOutput(f"cannot write beside {out}: {e.strerror or e}") from None
        try:
            yield Rebuild(out, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
