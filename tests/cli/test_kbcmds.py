"""CLI contract: --json shapes, exit codes, no tracebacks."""

import json

from typer.testing import CliRunner

from trnkb.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_show_json_gives_value_unit_source_kind(good_specs):
    out = json.loads(run("show", "trainium3", "--specs", str(good_specs), "--json").stdout)
    assert out["hbm_capacity"]["value"] == 144
    assert out["hbm_capacity"]["unit"] == "GB"
    assert out["hbm_capacity"]["source"] == "semianalysis-trn3"
    assert out["hbm_capacity"]["kind"] == "reported"
    assert out["hbm_capacity"]["alternatives"][0]["unit"] == "GiB"


def test_show_json_says_when_no_source_gives_a_field(good_specs):
    out = json.loads(run("show", "trainium3", "--specs", str(good_specs), "--json").stdout)
    assert out["tdp"]["value"] is None
    assert "no source" in out["tdp"]["note"]


def test_compare_json_lists_fields_by_id(good_specs):
    out = json.loads(run("compare", "trainium3", "--specs", str(good_specs), "--json").stdout)
    assert out["fields"]["dense_bf16"]["trainium3"]["value"] == 671


def test_validate_json_counts_rows(good_specs):
    out = json.loads(run("validate", str(good_specs), "--json").stdout)
    assert out["ok"] is True
    assert out["rows"]["chips"] == 1


def test_conflicts_json_lists_both_values(good_specs):
    out = json.loads(run("conflicts", "--specs", str(good_specs), "--json").stdout)
    pairs = {(c["field"], c["type"]) for c in out}
    assert ("hbm_capacity", "unit-ambiguity") in pairs


def test_sources_and_list_json(good_specs):
    srcs = json.loads(run("sources", "--specs", str(good_specs), "--json").stdout)
    assert {s["id"] for s in srcs} == {"semianalysis-trn3", "aws-neuron-trn3"}
    tables = json.loads(run("list", "--specs", str(good_specs), "--json").stdout)
    assert {t["table"] for t in tables} >= {"chips", "racks", "hbm"}
    rows = json.loads(run("list", "chips", "--specs", str(good_specs), "--json").stdout)
    assert rows[0]["id"] == "trainium3"


def test_unknown_id_exits_1_with_message(good_specs):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "trnkb", "show", "trainium9", "--specs",
                           str(good_specs)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: no row with id 'trainium9'")
    assert "Traceback" not in proc.stderr


def _shipped_block(row_id: str, field: str) -> dict:
    """The YAML block of one field as written in the shipped specs (read with PyYAML,
    independently of trnkb's loader)."""
    from pathlib import Path

    import yaml

    rows = yaml.safe_load((Path(__file__).parents[2] / "specs" / "chips.yaml").read_text())
    rows = rows.get("chips", rows) if isinstance(rows, dict) else rows
    row = next(r for r in rows if r.get("id") == row_id)
    block = row[field]
    return block[0] if isinstance(block, list) else block


def test_show_json_carries_qualifier_and_density_of_mi455x_fp8_fp4():
    out = json.loads(run("show", "mi455x", "--json").stdout)
    for field in ("dense_fp8", "dense_fp4"):
        block = _shipped_block("mi455x", field)
        assert block["qualifier"]  # the spec records AMD's ambiguity
        assert out[field]["qualifier"] == block["qualifier"]
        assert out[field]["density"] == block["density"] == "unstated"


def test_show_json_carries_direction_of_link_bandwidths():
    out = json.loads(run("show", "trainium3", "--json").stdout)
    assert out["scaleup_bandwidth_bidir"]["direction"] == "bidirectional"
    assert "density" not in out["hbm_capacity"] and "direction" not in out["hbm_capacity"]


def test_show_table_prints_the_qualifier_and_density():
    proc = runner.invoke(app, ["show", "mi455x"], catch_exceptions=False, env={"COLUMNS": "250"})
    block = _shipped_block("mi455x", "dense_fp8")
    assert block["qualifier"] in proc.stdout
    assert "density unstated" in proc.stdout
