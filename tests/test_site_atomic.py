"""Site rebuilds are atomic (issue 25 §6): killed at any point, a rebuild leaves the old
site or the new one, whole, and the next build removes what the killed one left beside
the output. The build step is a tiny stand-in (50 pages); the directory handling is the
real one (:func:`trnkb.site.outdir.rebuild`, the same code :func:`trnkb.site.build`
runs), killed with SIGKILL in a forked child process.
"""

from __future__ import annotations

import os
import resource
import signal
from pathlib import Path

import pytest

from trnkb.site import outdir

PAGES = 50
CPU_BOUND = 60  # seconds of CPU for one rebuild (a hang guard on CPU, not wall time)


def _rebuild(out: Path, point: str, version: str) -> None:
    """In the forked child: one rebuild of ``out``, killed (SIGKILL) at ``point``."""
    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    real = outdir.exchange
    if point == "before-exchange":
        outdir.exchange = lambda a, b: die()
    elif point == "after-exchange":  # swapped, the old site not yet removed
        def exchange(a, b):
            real(a, b)
            die()
        outdir.exchange = exchange
    with outdir.rebuild(out) as b:
        if point == "scratch-made":
            die()
        for i in range(PAGES):
            (b.site / f"page{i}.html").write_text(f"{version} {i}")
            if point == "mid-write" and i == 25:
                die()
        (b.site / "index.html").write_text(version)
        if point == "before-commit":
            die()
        b.commit()


def _run(out: Path, point: str, version: str) -> int:
    """The rebuild in a forked child process (no interpreter start-up); its exit code, or
    minus the signal that killed it."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (CPU_BOUND, CPU_BOUND))
            _rebuild(out, point, version)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _version(out: Path) -> str:
    """The one version every page of ``out`` carries (asserting the site is whole)."""
    version = (out / "index.html").read_text()
    pages = sorted(p.name for p in out.glob("page*.html"))
    assert len(pages) == PAGES, pages
    assert {(out / f"page{i}.html").read_text() for i in range(PAGES)} == {
        f"{version} {i}" for i in range(PAGES)}
    assert (out / outdir.MARKER).is_file()
    return version


@pytest.mark.parametrize("point, expect", [
    ("scratch-made", "old"), ("mid-write", "old"), ("before-commit", "old"),
    ("before-exchange", "old"), ("after-exchange", "new"),
])
def test_a_killed_rebuild_leaves_the_old_or_the_new_site_whole(tmp_path, point, expect):
    out = tmp_path / "site"
    assert _run(out, "none", "old") == 0
    assert _version(out) == "old"
    assert _run(out, point, "new") == -signal.SIGKILL
    assert _version(out) == expect
    assert _run(out, "none", "newer") == 0  # the next build tidies what was left
    assert _version(out) == "newer"
    assert sorted(os.listdir(tmp_path)) == ["site"]


def test_a_first_build_killed_leaves_no_half_site(tmp_path):
    out = tmp_path / "site"
    assert _run(out, "mid-write", "new") == -signal.SIGKILL
    assert not out.exists()


def test_a_second_build_beside_a_running_one_is_refused_clearly(tmp_path):
    out = tmp_path / "site"
    with outdir.rebuild(out) as first:
        with pytest.raises(outdir.UnsafeOutput, match="another trnkb build or export"):
            with outdir.rebuild(out):
                pass
        (first.site / "index.html").write_text("first")
        first.commit()
    assert (out / "index.html").read_text() == "first"
    assert sorted(os.listdir(tmp_path)) == ["site"]  # no scratch left beside it


def test_a_foreign_directory_is_still_refused_before_anything_is_made(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    with pytest.raises(outdir.UnsafeOutput, match="did not create"):
        with outdir.rebuild(out):
            pass
    assert sorted(os.listdir(tmp_path)) == ["site"]
    assert sorted(os.listdir(out)) == ["thesis.tex"]
