"""The simulator through the Python API and the CLI: SLO search, curve, benchmarks, layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import trnkb
from trnkb import workload as W
from trnkb.cli import app
from trnkb.workload.benchmarks import benchmark, benchmarks

ARGS = ["workload", "serve", "--model", "llama-2-70b", "--system", "gb300-nvl72", "--chips", "8",
        "--precision", "fp8"]


@pytest.fixture(scope="module")
def objs() -> tuple[W.Model, W.System]:
    kb = trnkb.load()
    return W.model(kb, "llama-2-70b"), W.system(kb, "gb300-nvl72")


def test_mla_decode_flops_are_the_absorbed_count() -> None:
    m = W.model(trnkb.load(), "deepseek-v3")
    # absorbed MLA: 2 h ((kv_rank + rope) + kv_rank) per layer, from the config numbers
    assert m.decode_attention_flops_per_position() == 2 * 128 * (512 + 64 + 512) * 61
    ratio = m.decode_attention_flops_per_position() / (2 * 128 * (192 + 128) * 61)
    assert ratio == pytest.approx(3.4)


def test_load_raises_latency_and_throughput(objs: tuple[W.Model, W.System]) -> None:
    m, s = objs
    lo = W.simulate(m, s, 8, input_len=512, output_len=128, precision="fp8", concurrency=2)
    hi = W.simulate(m, s, 8, input_len=512, output_len=128, precision="fp8", concurrency=128)
    assert hi["tokens_per_s_per_chip"].mid > 5 * lo["tokens_per_s_per_chip"].mid
    assert hi["tpot_p50"].mid > lo["tpot_p50"].mid
    for r in (lo, hi):
        for k in ("ttft", "tpot", "e2e"):
            assert r[f"{k}_p50"].mid <= r[f"{k}_p90"].mid <= r[f"{k}_p99"].mid
            assert r[f"{k}_p99"].lo <= r[f"{k}_p99"].mid <= r[f"{k}_p99"].hi


def test_slo_result_meets_its_targets(objs: tuple[W.Model, W.System]) -> None:
    m, s = objs
    res = W.max_throughput(m, s, 8, "ttft_p99=1s,tpot_p99=50ms", input_len=512, output_len=128,
                           precision="fp8")
    assert res.extra["slo"]["met"]
    assert res["ttft_p99"].mid <= 1.0 and res["tpot_p99"].mid <= 0.05
    assert W.parse_slo("ttft_p99=2s,tpot_p99=80ms") == {"ttft_p99": 2.0, "tpot_p99": 0.08}
    with pytest.raises(ValueError, match="unknown metric"):
        W.parse_slo("latency=2s")


def test_weights_that_do_not_fit_are_refused(objs: tuple[W.Model, W.System]) -> None:
    m = W.model(trnkb.load(), "llama-3-1-405b")
    with pytest.raises(ValueError, match="GB per chip"):
        W.simulate(m, objs[1], 1, precision="bf16")


def test_benchmarks_file_is_sourced_and_complete() -> None:
    rows = benchmarks()
    for name in ("llama2-70b", "llama3.1-405b", "llama3.1-8b", "mixtral-8x7b", "deepseek-r1"):
        assert any(name in k for k in rows), name
    for k in ("dashboard-1k-1k", "dashboard-1k-8k", "dashboard-8k-1k",
              "mlperf-train-llama2-70b-lora"):
        assert k in rows
    # the MLPerf Server targets of loadgen/mlperf.conf (ms there)
    assert benchmark("mlperf-inf-llama2-70b-server").slo == {"ttft_p99": 2.0, "tpot_p99": 0.2}
    assert benchmark("mlperf-inf-deepseek-r1-server").output_len == pytest.approx(3886.2274)


def test_bad_benchmark_row_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "sources.yaml").write_text("- id: s1\n")
    (tmp_path / "benchmarks.yaml").write_text(
        "- id: a\n  title: t\n  kind: inference\n  scenario: server\n"
        "  slo: {ttft_p99: 2, source: nowhere}\n")
    with pytest.raises(ValueError, match=r"benchmarks.yaml:1: slo: unknown source"):
        benchmarks(tmp_path)


def test_a_published_input_bound_is_kept_apart_from_the_mean(tmp_path: Path) -> None:
    """``input: {max: ...}`` alone is a bound: the mean stays unset (the CLI asks for
    --input-len, the ledger waits); an input row with neither mean nor max is refused."""
    (tmp_path / "sources.yaml").write_text("- id: s1\n")
    row = "- id: a\n  title: t\n  kind: inference\n  scenario: offline\n  input: {%s}\n"
    (tmp_path / "benchmarks.yaml").write_text(row % "max: 1023, source: s1")
    b = benchmarks(tmp_path)["a"]
    assert (b.input_len, b.input_max, b.sources["input"]) == (None, 1023.0, "s1")
    (tmp_path / "benchmarks.yaml").write_text(row % "mean: 600, max: 1023, source: s1")
    assert benchmarks(tmp_path)["a"].input_len == 600.0
    (tmp_path / "benchmarks.yaml").write_text(row % "source: s1")
    with pytest.raises(ValueError, match=r"benchmarks.yaml:1: input: a mean .* published max"):
        benchmarks(tmp_path)
    # the real file: the MLPerf rows carry their bound, none a mean
    assert benchmark("mlperf-inf-deepseek-r1-offline").input_max == 3136
    assert benchmark("mlperf-inf-llama2-70b-server").input_len is None


def test_cli_benchmark_slo_json() -> None:
    r = CliRunner().invoke(app, [*ARGS, "--benchmark", "mlperf-inf-llama2-70b-server",
                                 "--input-len", "1024", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["kind"] == "serve-sim" and d["slo"]["targets"] == {"ttft_p99": 2.0, "tpot_p99": 0.2}
    m = d["metrics"]["tokens_per_s_per_chip"]
    assert m["low"] <= m["central"] <= m["high"]
    assert d["settings"]["output_len"]["mean"] == pytest.approx(294.45)


def test_cli_curve_and_errors() -> None:
    r = CliRunner().invoke(app, [*ARGS, "--curve", "--input-len", "512", "--output-len", "128",
                                 "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)["curve"]
    chip = [x["tokens_per_s_per_chip"]["central"] for x in rows]
    user = [x["tokens_per_s_per_user"]["central"] for x in rows]
    assert chip[-1] > chip[0] and user[-1] < user[0]
    r = CliRunner().invoke(app, [*ARGS, "--benchmark", "mlperf-inf-llama2-70b-server"])
    assert r.exit_code == 1 and "pass --input-len" in r.output
    assert "published bound: at most 1023 tokens" in r.output
    r = CliRunner().invoke(app, [*ARGS, "--disagg", "2X1D", "--rate", "1"])
    assert r.exit_code == 1 and "xPyD" in r.output


def test_cli_layouts_run() -> None:
    for extra in (["--rate", "4", "--pp", "2"], ["--concurrency", "16", "--replicas", "2"],
                  ["--disagg", "1P1D", "--prefill-tp", "4", "--rate", "2"]):
        r = CliRunner().invoke(app, [*ARGS, "--input-len", "512", "--output-len", "64", *extra,
                                     "--json"])
        assert r.exit_code == 0, (extra, r.output)
        assert json.loads(r.output)["metrics"]["tpot_p50"]["central"] > 0


def test_cli_train_lora_benchmark() -> None:
    r = CliRunner().invoke(app, ["workload", "train", "--model", "llama-2-70b", "--system",
                                 "hgx-h100-8", "--chips", "8", "--benchmark",
                                 "mlperf-train-llama2-70b-lora", "--tokens", "5e7",
                                 "--batch-tokens", "65536", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["settings"]["lora"] == "lora r=16 on qkv,o" and d["settings"]["seq_len"] == 8192
    r = CliRunner().invoke(app, ["workload", "train", "--model", "llama-2-70b", "--system",
                                 "hgx-h100-8", "--chips", "8", "--lora", "0"])
    assert r.exit_code == 1


def test_poisson_ranges_resimulate_their_ends(objs: tuple[W.Model, W.System]) -> None:
    m, s = objs
    kw = {"input_len": 512, "output_len": 128, "precision": "fp8", "requests": 300}
    cap = W.simulate(m, s, 8, ranged=False, **kw).breakdown["requests_per_s"]
    # at 80% of the central capacity the slow end of the inputs overloads the server: its
    # queue, hence TTFT, grows well beyond the central value
    r = W.simulate(m, s, 8, rate=0.8 * cap, **kw)
    t = r["ttft_p99"]
    assert t.lo <= t.mid <= t.hi and t.hi > 3 * t.mid
    flat = W.simulate(m, s, 8, rate=0.8 * cap, ranged=False, **kw)
    assert flat["ttft_p99"].lo == flat["ttft_p99"].hi == pytest.approx(t.mid)


def test_attention_runs_at_the_cache_format_not_fp4() -> None:
    kb = trnkb.load()
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "gb300-nvl72")
    r = W.simulate(m, s, 72, input_len=512, output_len=64, precision="fp4", concurrency=72,
                   ranged=False)
    assert r.inputs["attention_peak_flops"].mid == s.peak["fp8"].mid < r.inputs["peak_flops"].mid
    r8 = W.simulate(m, s, 72, input_len=512, output_len=64, precision="fp8", concurrency=72,
                    ranged=False)
    assert "attention_peak_flops" not in r8.inputs


def test_closed_loop_conserves_clients_over_engines(objs: tuple[W.Model, W.System]) -> None:
    """3 clients over 2 attention groups: one group runs 2, the other 1, so the deployment's
    throughput is one 2-client engine plus one 1-client engine, each simulated alone (an
    independent run of one group, tp=8 on 8 chips); 1 client leaves one group idle."""
    m, s = objs
    kw = {"input_len": 256, "output_len": 64, "precision": "fp8", "ranged": False}

    def tps(chips: int, c: int) -> float:
        return W.simulate(m, s, chips, tp=8, concurrency=c, **kw)["tokens_per_s_system"].mid

    one, two = tps(8, 1), tps(8, 2)
    assert tps(16, 1) == pytest.approx(one, rel=1e-9)
    assert tps(16, 3) == pytest.approx(one + two, rel=0.02)
    assert tps(16, 4) == pytest.approx(2 * two, rel=0.02)
