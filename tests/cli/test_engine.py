"""CLI contract of `trnkb engine`: JSON keys, critical path, cost-only mode, --cores, --timeline."""

import json

import pytest
from typer.testing import CliRunner

from trnkb.cli import app, main

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_engine_gemm_json_has_the_documented_keys():
    r = run("engine", "gemm", "--chip", "trainium3", "--m", "256", "--k", "512", "--n", "512",
            "--dtype", "mxfp8", "--json")
    out = json.loads(r.stdout)
    for key in ("seconds", "cycles", "busy_seconds", "bound_by", "busiest_engine",
                "critical_path_seconds", "stall_seconds", "flops", "achieved_flops_per_s",
                "peak_flops_per_s", "utilization", "bytes", "error"):
        assert key in out
    assert out["flops"] == 2 * 256 * 512 * 512
    # the critical path and its stalls account for the whole makespan
    total = sum(out["critical_path_seconds"].values()) + sum(out["stall_seconds"].values())
    assert total == pytest.approx(out["seconds"], rel=1e-6)


def test_engine_gemm_takes_any_shape_and_reports_no_error_without_execute():
    r = run("engine", "gemm", "--chip", "trainium2", "--m", "100", "--k", "200", "--n", "300",
            "--no-execute", "--json")
    out = json.loads(r.stdout)
    assert "error" not in out and out["m"] == 100


def test_engine_gemm_on_8_cores_reports_chip_figures(tmp_path):
    trace = tmp_path / "trace.json"
    r = run("engine", "gemm", "--m", "2048", "--k", "1024", "--n", "2048", "--no-execute",
            "--cores", "8", "--timeline", str(trace), "--json")
    out = json.loads(r.stdout)
    f = out["chip_figures"]
    assert f["cores"] == 8
    assert f["derived_chip_peak_flops_per_s"] == pytest.approx(8 * 2 * 128 * 128 * 2.4e9)
    assert 0 < f["hbm_utilization"] <= 1
    events = json.loads(trace.read_text())["traceEvents"]
    assert {e["pid"] for e in events if e["ph"] == "X"} == set(range(8))


def test_engine_attention_json_names_the_bounding_engine():
    r = run("engine", "attention", "--chip", "trainium2", "--seq", "512", "--head-dim", "64",
            "--causal", "--heads", "4", "--heads-kv", "2", "--json")
    out = json.loads(r.stdout)
    assert out["bound_by"] in out["busy_seconds"]
    assert f"bound by {out['bound_by']}" in out["notes"][0]
    assert out["error"]["rel_rms"] < 0.01


def test_mx_on_trainium2_exits_1_with_a_message(capsys):
    with pytest.raises(SystemExit) as e:
        main(["engine", "gemm", "--chip", "trainium2", "--dtype", "mxfp4", "--no-execute"])
    assert e.value.code == 1
    assert "has no MX matmul" in capsys.readouterr().err


def test_more_cores_than_the_chip_has_is_a_usage_error():
    r = runner.invoke(app, ["engine", "gemm", "--cores", "9", "--no-execute"])
    assert r.exit_code != 0


def test_engine_gemm_cost_only_does_not_import_altair():
    # altair builds a grammar at import (seconds of CPU); only --timeline charts need it
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys\nfrom trnkb.cli import main\n"
            "sys.argv = ['trnkb', 'engine', 'gemm', '--m', '64', '--k', '64', '--n', '64', "
            "'--no-execute', '--json']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('altair', 'jsonschema')),"
            " file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parents[2])
    assert json.loads(r.stdout)["flops"] == 2 * 64**3
    assert r.stderr.strip().splitlines()[-1] == "[]"


def test_engine_gemm_lnc2_with_the_nkilib_tiling_reports_requested_and_executed_flops():
    r = run("engine", "gemm", "--m", "16", "--k", "4096", "--n", "4096", "--lnc", "2",
            "--tiling", "nkilib-gemm-trn3-lnc2", "--no-execute", "--json")
    out = json.loads(r.stdout)
    assert out["lnc"] == 2 and out["chip_figures"]["logical_cores_per_chip"] == 4
    assert out["requested_flops"] == 2 * 16 * 4096 * 4096
    assert out["executed_flops"] == 2 * 2048 * 4096 * 4096
    assert set(out["stall_seconds"]) >= {"kernel launch", "kernel start/end", "output blocks"}


@pytest.mark.parametrize("args, hint", [
    (("--lnc", "3"), "--lnc"),
    (("--lnc", "2", "--cores", "2"), "--lnc"),
    (("--tiling", "nope"), "--tiling"),
])
def test_engine_gemm_bad_lnc_or_tiling_exits_1_with_a_message(args, hint):
    r = runner.invoke(app, ["engine", "gemm", "--m", "64", "--k", "64", "--n", "64",
                            "--no-execute", *args])
    assert r.exit_code != 0 and hint in r.output and "Traceback" not in r.output
