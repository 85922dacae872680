"""`trnkb compare` over every pair of headline chips; `show` and `sources` never cut an
id or a URL."""

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pint
import pytest
from typer.testing import CliRunner

import trnkb
from trnkb.cli import app, kbcmds

ROOT = Path(__file__).resolve().parents[2]
HEADLINE = [
    "trainium3",
    "trainium2",
    "gb300",
    "gb200",
    "b200",
    "h100",
    "mi355x",
    "mi300x",
    "tpu-v7",
]
runner = CliRunner()


@pytest.fixture
def run(kb, monkeypatch):
    monkeypatch.setattr(kbcmds, "_load", lambda specs: kb)  # load the shipped KB once

    def invoke(*args, width=200):
        r = runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": str(width)})
        assert r.exit_code == 0, r.output
        return r.stdout

    return invoke


def test_headline_chips_exist(kb):
    assert set(HEADLINE) <= set(kb.ids("chips"))


@pytest.mark.parametrize("a, b", list(itertools.combinations(HEADLINE, 2)))
def test_compare_every_pair_of_headline_chips(kb, run, a, b):
    out = json.loads(run("compare", a, b, "--json"))
    assert out["table"] == "chips" and out["ids"] == [a, b]
    have = {
        f for f in set(kb.facts["field"]) if kb.get(a, f) is not None or kb.get(b, f) is not None
    }
    assert set(out["fields"]) == have  # the union of both chips' fields
    for f, by_id in out["fields"].items():
        for i in (a, b):
            v = kb.get(i, f)
            if v is None:
                assert by_id[i]["value"] is None  # missing is missing, never 0
            elif isinstance(v, pint.Quantity):
                assert trnkb.Q_(by_id[i]["value"], by_id[i]["unit"] or "") == v
            else:
                assert by_id[i]["value"] == v
    human = run("compare", a, b)
    assert a in human and b in human
    if any(by_id[i]["value"] is None for by_id in out["fields"].values() for i in (a, b)):
        assert "missing" in human


def test_readme_three_way_compare_prints_bf16_in_one_unit(kb, run):
    human = run("compare", "trainium3", "gb300", "tpu-v7")
    row = next(line for line in human.splitlines() if "dense_bf16 (TFLOP/s)" in line)
    # each chip's preferred dense BF16 converted to TFLOP/s by pint, independently
    for i in ("trainium3", "gb300", "tpu-v7"):
        want = kb.value(i, "dense_bf16").to("TFLOPS").magnitude
        assert f"{want:,.0f}" in row


def test_compare_refuses_mixed_tables_in_one_line():
    r = subprocess.run(
        [sys.executable, "-m", "trnkb", "compare", "trainium3", "trn3-nl72x2-switched"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "one table" in r.stderr and "racks" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("width", [40, 200])
def test_sources_prints_every_id_and_url_whole(kb, run, width):
    out = run("sources", width=width).splitlines()
    lines = {line.strip() for line in out}
    for _, s in kb.sources.iterrows():
        assert s["url"] in lines  # the URL alone on its line, never cut
        assert any(line.startswith(s["id"] + " ") for line in out)


def test_show_never_cuts_values_with_an_ellipsis(kb, run):
    narrow = run("show", "trainium3", width=50)
    assert "…" not in narrow
    wide = run("show", "trainium3", width=400)
    for src in set(kb.facts[kb.facts["id"] == "trainium3"]["source"]):
        assert src in wide


def test_show_json_writes_bit_units_that_read_back_as_bits(kb, run):
    default = pint.UnitRegistry()  # pint's own registry
    seen = set()
    for rid in kb.ids():
        out = json.loads(run("show", rid, "--json"))
        for v in out.values():
            if not isinstance(v, dict):
                continue
            for entry in [v, *v.get("alternatives", [])]:
                if "bit" in (entry.get("unit") or "") and entry["value"] is not None:
                    seen.add(entry["unit"])
                    back = trnkb.Q_(entry["value"], entry["unit"])
                    assert str(back.dimensionality).startswith("[information]")
                    assert "gilbert" not in str(default.Quantity(1, entry["unit"]).units)
    assert {"Gbit/s"} <= seen  # lane and port rates in specs/ are written in Gbit/s
