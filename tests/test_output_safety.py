"""Outputs that cannot hurt their reader (issue 25 §7): CSV cells are never live formulas,
``--timeline`` follows the export's rules, an export into a mount point stages inside it,
and one export per output runs at a time."""

from __future__ import annotations

import csv
import json
import os

import pandas as pd
import pytest

import trnkb
from trnkb.cli import main
from trnkb.output import exportfs
from trnkb.output.export import csv_safe, write_export
from trnkb.output.exportfs import ExportError
from trnkb.output.outdir import locked


def test_csv_safe_neutralises_every_formula_prefix_and_leaves_numbers():
    df = pd.DataFrame({"text": ["=1+1", "+2", "-3 dB", "@SUM(A1)", "\tx", "\rx", "plain", ""],
                       "number": [-1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]})
    out = csv_safe(df)
    assert list(out["text"]) == ["'=1+1", "'+2", "'-3 dB", "'@SUM(A1)", "'\tx", "'\rx",
                                 "plain", ""]
    assert list(out["number"]) == list(df["number"])  # numbers are numbers, untouched
    assert list(df["text"])[0] == "=1+1"  # the caller's frame is not changed


def test_a_name_starting_with_equals_is_text_in_the_csv_download(good_specs, tmp_path):
    chips = good_specs / "chips.yaml"
    chips.write_text(chips.read_text().replace(
        "name: AWS Trainium3", 'name: "=HYPERLINK(\\"https://example.com\\",\\"x\\")"'))
    kb = trnkb.load(good_specs)
    write_export(kb, tmp_path / "out", "csv")
    with open(tmp_path / "out" / "chips.csv", newline="", encoding="utf-8") as f:
        names = [row["name"] for row in csv.DictReader(f)]
    assert names == ['\'=HYPERLINK("https://example.com","x")']
    cells = [c for p in (tmp_path / "out").glob("*.csv")
             for row in csv.reader(open(p, newline="", encoding="utf-8")) for c in row]
    assert not [c for c in cells if c[:1] in ("=", "@")]


def test_export_into_a_mount_point_stages_inside_it(good_specs, tmp_path, monkeypatch):
    # a container volume: the target cannot be renamed or swapped (EBUSY) and its parent
    # may be another file system; the export stages inside it and replaces file by file
    target = tmp_path / "volume"
    target.mkdir()  # an empty volume
    real = os.path.ismount
    monkeypatch.setattr(exportfs.os.path, "ismount", lambda p: str(p) == str(target) or real(p))
    kb = trnkb.load(good_specs)
    write_export(kb, target, "csv")
    (target / "notes.txt").write_text("the user's")
    write_export(kb, target, "json")  # and again over its own files
    names = sorted(os.listdir(target))
    assert "datapackage.json" in names and "chips.json" in names and "notes.txt" in names
    assert not [n for n in names if "staging" in n]
    assert sorted(os.listdir(tmp_path)) == ["specs", "volume"]  # nothing staged beside it


def test_a_second_export_to_the_same_output_is_refused_clearly(good_specs, tmp_path):
    kb = trnkb.load(good_specs)
    out = tmp_path / "out"
    with locked(tmp_path, out, ExportError):  # an export in progress holds this
        with pytest.raises(ExportError, match="another trnkb build or export"):
            write_export(kb, out, "csv")
    assert not out.exists()
    write_export(kb, out, "csv")  # once it is done, exports run again
    assert (out / "datapackage.json").is_file()


def _engine(trace, capsys) -> tuple[int, str]:
    code = 0
    try:
        main(["engine", "gemm", "--m", "128", "--k", "128", "--n", "512", "--no-execute",
              "--timeline", str(trace), "--json"])
    except SystemExit as e:
        code = int(e.code or 0)
    return code, capsys.readouterr().err


def test_timeline_writes_a_trace_and_replaces_only_its_own(tmp_path, capsys):
    trace = tmp_path / "trace.json"
    code, err = _engine(trace, capsys)
    assert code == 0, err
    first = json.loads(trace.read_text())
    assert first["otherData"]["generator"] == "trnkb engine --timeline" and first["traceEvents"]
    code, err = _engine(trace, capsys)  # its own earlier trace: replaced
    assert code == 0, err
    assert not [p for p in os.listdir(tmp_path) if p != "trace.json"]  # no temp file left


@pytest.mark.parametrize("what", ["foreign file", "symlink", "directory"])
def test_timeline_never_overwrites_or_writes_through(tmp_path, capsys, what):
    trace = tmp_path / "trace.json"
    victim = tmp_path / "thesis.tex"
    victim.write_text("years of work")
    if what == "foreign file":
        trace.write_text('{"mine": true}')
    elif what == "symlink":
        trace.symlink_to(victim)
    else:
        trace.mkdir()
    code, err = _engine(trace, capsys)
    assert code == 1 and "--timeline" in err and "Traceback" not in err, err
    assert err.count("\n") == 1
    assert victim.read_text() == "years of work"
    if what == "foreign file":
        assert trace.read_text() == '{"mine": true}'
