"""CLI contract of `trnkb engine`: JSON keys, cost-only mode, MX refused on Trainium2."""

import json

from typer.testing import CliRunner

from trnkb.cli import app, main

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_engine_gemm_json_has_the_documented_keys():
    r = run("engine", "gemm", "--chip", "trainium3", "--m", "256", "--k", "512", "--n", "512",
            "--dtype", "mxfp8", "--json")
    out = json.loads(r.stdout)
    for key in ("seconds", "cycles", "flops", "achieved_flops_per_s", "peak_flops_per_s",
                "utilization", "bytes", "error"):
        assert key in out
    assert set(out["cycles"]) == {"tensor", "vector", "scalar", "gpsimd"}
    assert set(out["bytes"]) == {"hbm", "sbuf", "psum"}
    assert out["flops"] == 2 * 256 * 512 * 512
    assert out["achieved_flops_per_s"] <= out["peak_flops_per_s"]


def test_engine_gemm_no_execute_reports_no_error():
    r = run("engine", "gemm", "--chip", "trainium2", "--m", "4096", "--k", "4096", "--n",
            "4096", "--no-execute", "--json")
    out = json.loads(r.stdout)
    assert "error" not in out
    assert out["utilization"] >= 0.9


def test_engine_attention_json_names_the_bounding_engine():
    r = run("engine", "attention", "--chip", "trainium2", "--seq", "512", "--head-dim", "64",
            "--causal", "--json")
    out = json.loads(r.stdout)
    assert out["bound_by"] in out["cycles"] or out["bound_by"] == "dma"
    assert f"bound by {out['bound_by']}" in out["notes"][0]
    assert out["error"]["rel_rms"] < 0.01


def test_mx_on_trainium2_exits_1_with_a_message(capsys):
    try:
        main(["engine", "gemm", "--chip", "trainium2", "--dtype", "mxfp4", "--no-execute"])
    except SystemExit as e:
        assert e.code == 1
    assert "has no MX matmul" in capsys.readouterr().err
