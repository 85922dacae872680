"""Output directories the site builder may delete: only the ones it made itself.

The builder writes into ``OUT`` and stages its Sphinx sources in ``OUT-src``. Before it
removes either, :func:`claim` checks that the directory is safe to clear:

- it does not exist yet, or is empty, or carries the builder's marker file
  (:data:`MARKER`, written when the builder created it);
- it is not a symlink and not a file;
- it is not the current directory, the home directory, the filesystem root, a
  repository root (holds ``.git``), nor an ancestor of the current directory, the home
  directory or the spec directory.

Anything else is refused with :class:`UnsafeOutput` before a single file is touched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from trnkb.output.outdir import refusal

__all__ = ["MARKER", "UnsafeOutput", "check", "claim"]

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
