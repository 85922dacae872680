"""The site builder never deletes what it did not create (issue 10).

Every refusal is checked twice: the builder raises (or the CLI exits 1 with one line),
and a snapshot of the directory tree taken before is identical after.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trnkb import site
from trnkb.kb import default_specs_dir
from trnkb.site import outdir


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root`` with its bytes (files) or link target (symlinks)."""
    out: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        out[key] = (
            f"-> {os.readlink(p)}" if p.is_symlink() else (p.read_bytes() if p.is_file() else "dir")
        )
    return out


@pytest.fixture
def victim(tmp_path) -> Path:
    d = tmp_path / "victim"
    (d / "sub").mkdir(parents=True)
    (d / "notes.txt").write_text("precious")
    (d / "sub" / "data.csv").write_text("a,b\n1,2\n")
    return d


def refused(path: Path, specs: Path | None = None, match: str = "") -> None:
    before = snapshot(path.parent)
    with pytest.raises(outdir.UnsafeOutput, match=match):
        site.build(path, specs=specs, notebooks=None)
    assert snapshot(path.parent) == before


def test_refuses_a_non_empty_directory_it_did_not_create(victim):
    refused(victim, match="did not create")


def test_refuses_a_repository_root(victim):
    (victim / ".git").mkdir()
    (victim / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (victim / ".trnkb-site").write_text("a forged marker does not make a repository deletable")
    refused(victim, match="repository root")


def test_refuses_the_current_directory(victim, monkeypatch):
    monkeypatch.chdir(victim)
    refused(victim, match="current directory")


def test_refuses_an_ancestor_of_the_current_directory(victim, monkeypatch):
    monkeypatch.chdir(victim / "sub")
    (victim / ".trnkb-site").write_text("")
    refused(victim, match="contains")


def test_refuses_the_home_directory(victim, monkeypatch):
    monkeypatch.setenv("HOME", str(victim))
    monkeypatch.setenv("TRNKB_NO_CACHE", "1")  # the KB loader's cache would live in HOME
    (victim / ".trnkb-site").write_text("")
    refused(victim, match="home directory")


def test_refuses_an_ancestor_of_the_spec_directory(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(default_specs_dir(), project / "specs")
    (project / ".trnkb-site").write_text("")  # even with a marker
    refused(project, specs=project / "specs", match="contains")


def test_refuses_a_symlink_and_a_file(victim, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(victim / "notes.txt")
    refused(link, match="symbolic link")
    refused(victim / "notes.txt", match="file")
    dirlink = tmp_path / "dirlink"
    dirlink.symlink_to(victim, target_is_directory=True)
    refused(dirlink, match="symbolic link")


def test_stages_in_its_own_scratch_directory_never_beside_in_a_named_one(tmp_path):
    # the builder once staged in OUT-src; a user's OUT-src is now simply not its business
    src = tmp_path / "out-src"
    src.mkdir()
    (src / "thesis.tex").write_text("years of work")
    before = snapshot(src)
    with outdir.rebuild(tmp_path / "out") as scratch:
        assert scratch.scratch.parent == tmp_path and scratch.scratch.name.startswith(".out.")
        (scratch.site / "index.html").write_text("new")
        scratch.commit()
    assert snapshot(src) == before
    assert sorted(os.listdir(tmp_path)) == ["out", "out-src"]


def test_clears_and_reuses_a_directory_it_created(tmp_path):
    out = outdir.claim(tmp_path / "site")
    (out / "old.html").write_text("stale")
    assert outdir.claim(out) == out
    assert sorted(p.name for p in out.iterdir()) == [outdir.MARKER]


def test_an_empty_directory_may_be_used(tmp_path):
    (tmp_path / "empty").mkdir()
    assert (outdir.claim(tmp_path / "empty") / outdir.MARKER).is_file()


def test_cli_refuses_dot_with_one_line_and_exit_1(victim):
    before = snapshot(victim)
    env = {**os.environ, "PYTHONPATH": str(Path(site.__file__).resolve().parents[2])}
    r = subprocess.run(
        [sys.executable, "-m", "trnkb.site", "."],
        cwd=victim,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0 and "refusing" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert snapshot(victim) == before


def test_cli_output_below_a_file_is_one_line_not_a_traceback(tmp_path):
    (tmp_path / "file.txt").write_text("x")
    env = {**os.environ, "PYTHONPATH": str(Path(site.__file__).resolve().parents[2])}
    r = subprocess.run(
        [sys.executable, "-m", "trnkb.site", str(tmp_path / "file.txt" / "out")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "file.txt").read_text() == "x"
