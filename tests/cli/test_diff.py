"""`trnkb diff OLD NEW`: what a data user checks before upgrading."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trnkb.cli import app, main

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture changed: {old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


@pytest.fixture
def two_versions(good_specs, tmp_path):
    new = tmp_path / "new"
    shutil.copytree(good_specs, new)
    edit(new / "chips.yaml", "value: 671 TFLOPS", "value: 672 TFLOPS")  # a real change
    edit(new / "chips.yaml", "value: 4.9 TB/s", "value: 4900 GB/s")      # the same value respelled
    return good_specs, new


def test_diff_lists_a_changed_value_and_nothing_for_a_respelled_unit(two_versions):
    old, new = two_versions
    out = json.loads(run("diff", str(old), str(new), "--json").stdout)
    values = [c for c in out if c["what"] == "value"]
    assert [(c["key"], c["status"]) for c in values] == [
        ("chips/trainium3.dense_bf16 [aws-neuron-trn3]", "changed")]
    assert values[0]["old"].startswith("671 ") and values[0]["new"].startswith("672 ")


def test_diff_of_a_version_with_itself_is_empty(good_specs):
    r = run("diff", str(good_specs), str(good_specs))
    assert r.exit_code == 0 and r.stdout.strip().endswith("0 change(s)")


def test_diff_lists_an_added_source(two_versions):
    old, new = two_versions
    with (new / "sources.yaml").open("a") as f:
        f.write("- id: extra-src\n  title: An extra page\n  publisher: Example\n"
                "  url: https://example.com/x\n  date: 2026-01-01\n  kind: press\n")
    out = json.loads(run("diff", str(old), str(new), "--json").stdout)
    assert {"what": "source", "status": "added", "key": "extra-src"}.items() <= next(
        c for c in out if c["what"] == "source").items()


def test_diff_refuses_what_is_neither_a_directory_nor_a_revision(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["diff", str(tmp_path / "missing"), "."])
    err = capsys.readouterr().err
    assert exit_.value.code == 1 and "neither a spec directory nor a git revision" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_reads_a_git_revision_with_its_own_code(good_specs, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "trnkb", repo / "trnkb", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(good_specs, repo / "specs")

    def git(*a):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=repo,
                       check=True, capture_output=True)
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "v1")
    edit(repo / "specs" / "chips.yaml", "value: 671 TFLOPS", "value: 700 TFLOPS")
    out = json.loads(run("diff", "HEAD", str(repo / "specs"), "--repo", str(repo), "--json").stdout)
    assert [(c["key"], c["new"].split()[0]) for c in out if c["what"] == "value"] == [
        ("chips/trainium3.dense_bf16 [aws-neuron-trn3]", "700")]


def test_diff_tells_apart_two_values_of_one_field_from_one_source(two_versions):
    # a second figure from the same page (here qualified) is an addition, not a change of
    # the first: values are keyed by source, kind and qualifier, then by order
    old, new = two_versions
    edit(new / "chips.yaml", "value: 672 TFLOPS", "value: 671 TFLOPS")  # undo the real change
    edit(new / "chips.yaml",
         '  dense_bf16: {value: 671 TFLOPS, source: aws-neuron-trn3, locator: "specs table", '
         'kind: reported}',
         '  dense_bf16:\n'
         '    - {value: 671 TFLOPS, source: aws-neuron-trn3, locator: "specs table", '
         'kind: reported, preferred: true, note: "test override"}\n'
         '    - {value: 640 TFLOPS, source: aws-neuron-trn3, locator: "per core x 8", '
         'kind: reported, qualifier: per core x 8}')
    out = json.loads(run("diff", str(old), str(new), "--json").stdout)
    assert [(c["key"], c["status"]) for c in out if c["what"] == "value"] == [
        ("chips/trainium3.dense_bf16 [aws-neuron-trn3, per core x 8]", "added")]
