"""Exports are atomic, symlink-safe and never delete or count files they did not write."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import trnkb
from trnkb.output.export import write_export
from trnkb.output.exportfs import ExportError

ROOT = Path(__file__).resolve().parent.parent


def snapshot(d: Path) -> dict[str, bytes]:
    """Every visible regular file under ``d`` with its bytes (symlinks as their target)."""
    out = {}
    for p in sorted(d.rglob("*")):
        rel = str(p.relative_to(d))
        if p.is_symlink():
            out[rel] = b"-> " + os.readlink(p).encode()
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


@pytest.fixture
def two_kbs(good_specs, tmp_path):
    """Two different spec directories (every exported file differs between them)."""
    new = tmp_path / "specs-new"
    new.mkdir()
    for p in good_specs.iterdir():
        (new / p.name).write_text(p.read_text().replace("4.9 TB/s", "5.1 TB/s")
                                  .replace("AWS Trainium3", "AWS Trainium3 (new)"))
    return good_specs, new


def test_refuses_a_file_and_a_path_below_a_file(tmp_path, good_specs):
    kb = trnkb.load(good_specs)
    f = tmp_path / "afile"
    f.write_text("keep")
    with pytest.raises(ExportError, match="is a file"):
        write_export(kb, f, "csv")
    with pytest.raises(ExportError, match="below .*afile.*which is a file"):
        write_export(kb, f / "sub" / "out", "csv")
    assert f.read_text() == "keep"


def test_refuses_an_unwritable_place_with_one_line(tmp_path, good_specs, monkeypatch):
    import tempfile

    def readonly(*a, **k):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkdtemp", readonly)
    with pytest.raises(ExportError, match="cannot write to .*Read-only file system"):
        write_export(trnkb.load(good_specs), tmp_path / "out", "csv")
    assert not (tmp_path / "out").exists()


def test_cli_refusal_is_one_line_exit_1(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    r = subprocess.run([sys.executable, "-m", "trnkb", "export", "--out", str(f)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0 and "is a file" in r.stderr
    assert "Traceback" not in r.stderr


def test_symlinks_in_the_output_are_never_followed(tmp_path, good_specs):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "chips.csv").symlink_to(victim)  # an export name pointing outside
    (out / "elsewhere").symlink_to(outside, target_is_directory=True)
    # a directory trnkb did not create is refused whole, before anything is written
    with pytest.raises(ExportError, match="did not create"):
        write_export(trnkb.load(good_specs), out, "csv")
    assert victim.read_text() == "precious" and (out / "chips.csv").is_symlink()
    # an export directory in which someone planted links: replaced, never followed
    (out / "chips.csv").unlink()
    (out / "elsewhere").unlink()
    write_export(trnkb.load(good_specs), out, "csv")
    (out / "chips.csv").unlink()
    (out / "chips.csv").symlink_to(victim)
    (out / "elsewhere").symlink_to(outside, target_is_directory=True)
    write_export(trnkb.load(good_specs), out, "csv")
    assert victim.read_text() == "precious"
    assert not (out / "chips.csv").is_symlink() and "trainium3" in (out / "chips.csv").read_text()
    assert (out / "elsewhere").is_symlink() and list(outside.iterdir()) == []


def test_foreign_and_stale_files_are_kept_and_not_counted(tmp_path, good_specs):
    kb = trnkb.load(good_specs)
    out = tmp_path / "out"
    write_export(kb, out, "csv")
    (out / "notes.txt").write_text("mine")
    (out / "sub").mkdir()
    (out / "sub" / "data.bin").write_bytes(b"\x00\x01")
    inode = (out / "notes.txt").stat().st_ino
    res = write_export(kb, out, "json")
    names = {p.name for p in res.written}
    assert names == {p.name for p in out.glob("*.json")}  # only this export's files
    assert "chips.csv" not in names and (out / "chips.csv").exists()  # stale: kept, not counted
    assert (out / "notes.txt").read_text() == "mine" and (out / "notes.txt").stat().st_ino == inode
    assert (out / "sub" / "data.bin").read_bytes() == b"\x00\x01"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


KILLER = textwrap.dedent("""
    import os, signal, sys
    import trnkb, trnkb.output.export as ex, trnkb.output.exportfs as fs
    kb = trnkb.load(sys.argv[1])
    mode, k = sys.argv[3], int(sys.argv[4])
    if mode == "write":          # killed after the k-th file of the new export is written
        orig, n = ex._write, [0]
        def write(*a, **kw):
            orig(*a, **kw)
            n[0] += 1
            if n[0] == k:
                os.kill(os.getpid(), signal.SIGKILL)
        ex._write = write
    else:                        # killed right after the directories were swapped
        orig = fs.exchange
        def exchange(a, b):
            ok = orig(a, b)
            os.kill(os.getpid(), signal.SIGKILL)
        fs.exchange = exchange
    ex.write_export(kb, sys.argv[2], "csv")
""")


@pytest.mark.parametrize("mode, k", [("write", 1), ("write", 5), ("write", 11), ("swap", 0)])
def test_an_export_killed_midway_leaves_wholly_old_or_wholly_new(tmp_path, two_kbs, mode, k,
                                                                 monkeypatch):
    # one build date for every export here (datapackage.json carries it), the killed one too
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764547200")
    old_specs, new_specs = two_kbs
    out = tmp_path / "out"
    write_export(trnkb.load(old_specs), out, "csv")
    (out / "notes.txt").write_text("user file")
    old = snapshot(out)
    ref = tmp_path / "ref"
    write_export(trnkb.load(new_specs), ref, "csv")
    new = snapshot(ref) | {"notes.txt": b"user file"}
    assert old != new
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    r = subprocess.run([sys.executable, str(script), str(new_specs), str(out), mode, str(k)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == -signal.SIGKILL, r.stderr
    after = snapshot(out)
    assert after == (new if mode == "swap" else old)
    # the next export tidies what the killed one left beside the target
    write_export(trnkb.load(new_specs), out, "csv")
    assert snapshot(out) == new
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
