"""Directories a command may write into or clear: only ones it made itself.

Shared by the site builder (:mod:`trnkb.site.outdir`) and the exporter
(:mod:`trnkb.output.exportfs`). A directory is refused when it is a symlink or a file, the
filesystem root, the current or home directory, a repository root (holds ``.git``), an
ancestor of a protected path (the current directory, home, the spec directory), or a
non-empty directory without the command's marker file.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["refusal"]


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
