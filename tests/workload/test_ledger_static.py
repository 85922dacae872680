"""TensorRT-LLM 0.5's throughput rows are static batches of their stated size (ledger_serving).

Source trtllm-performance-md-77d24b5: the tables list each row's Batch Size; Llama2-70b TP 4
was measured with ``gptSessionBenchmark --batch_size 64 --num_runs 5`` on an engine built
without in-flight batching, whose tokens/s is batch x output length / one batch's latency.
"""

import pytest

from trnkb.audit import ledger
from trnkb.audit.ledger_serving import predict_serving
from trnkb.units import Q_
from trnkb.workload import fromkb

_IDS = ("measured-h100-llama-70b-fp8-tp4", "measured-h100-llama-70b-fp8-tp4-2048-128",
        "measured-h100-llama-70b-fp8-tp4-128-2048")


@pytest.fixture(scope="module")
def runs():
    by_id = {r.id: r for r in ledger.load_runs()}
    return [by_id[i] for i in _IDS]


def test_the_rows_state_batch_64_and_are_run_as_one_static_batch(kb, runs):
    for run in runs:
        assert run.source == "trtllm-performance-0-5" and run.get("batch") == 64
        p = predict_serving(kb, run)
        assert not isinstance(p, str), p
        assert "--concurrency 64" in p.call and "--batching static" in p.call, p.call
        assert "window=all" in p.call and "requests=320" in p.call, p.call


def test_a_static_batch_figure_is_batch_times_output_over_one_batch_latency(kb, runs):
    """By hand: B equal sequences encoded in one step then decoded together finish together,
    so one batch lasts TTFT + (out - 1) x TPOT and yields B x out tokens; back-to-back batches
    repeat it. The row's central is that figure per chip (4 H100)."""
    import trnkb.workload as W

    m, s = fromkb.model(kb, "llama-2-70b"), fromkb.system(kb, "hgx-h100-8")
    for run in runs:
        i, o = int(run.get("input_len")), int(run.get("output_len"))
        r = W.simulate(m, s, 4, input_len=i, output_len=o, precision="fp8", concurrency=64,
                       batching="static", requests=320, window="all", ranged=False)
        ttft, tpot = r["ttft_p50"].mid, r["tpot_p50"].mid  # seconds
        by_hand = 64 * o / (ttft + (o - 1) * tpot) / 4
        assert r["tokens_per_s_per_chip"].mid == pytest.approx(by_hand, rel=1e-6)
        p = predict_serving(kb, run)
        assert not isinstance(p, str)
        got = Q_(p.mid, run.unit).to("1/s").magnitude
        assert got == pytest.approx(by_hand, rel=1e-6)


def test_a_batch_of_64_cannot_beat_the_offline_drain(kb, runs):
    """The drain runs up to 1024 sequences a step (simulate's default), so a static batch of
    64 at the same lengths yields fewer tokens per second."""
    import trnkb.workload as W

    m, s = fromkb.model(kb, "llama-2-70b"), fromkb.system(kb, "hgx-h100-8")
    for run in runs:
        i, o = int(run.get("input_len")), int(run.get("output_len"))
        drain = W.simulate(m, s, 4, input_len=i, output_len=o, precision="fp8",
                           ranged=False)["tokens_per_s_per_chip"].mid
        p = predict_serving(kb, run)
        assert not isinstance(p, str)
        assert p.mid < drain


def test_amd_rocm_rows_drain_their_stated_prompts_at_their_stated_max_seqs(kb):
    """amd-rocm-performance-results-2025-06 states Num Prompts = Max Num Seqs (the run's batch),
    sent at an infinite rate: one wave of N requests. By hand: the wave's output, N x out
    tokens, over the time its last request ends (e2e p99 of N equal requests, within 0.5%)."""
    import trnkb.workload as W

    runs = [r for r in ledger.load_runs() if r.source == "amd-rocm-performance-results-2025-06"
            and r.family == "serving throughput"]
    assert len(runs) == 4
    for run in runs:
        n = int(run.get("batch"))
        assert f"{n} prompts, max num seqs {n}" in run.locator
        p = predict_serving(kb, run)
        assert not isinstance(p, str), p
        assert f"--max-seqs {n}" in p.call and f"requests={n}" in p.call, p.call
    run = next(r for r in runs if r.split == "holdout" and r.model == "llama-3-1-405b")
    m, s = fromkb.model(kb, run.model), fromkb.system(kb, run.system)
    n, i, o = int(run.get("batch")), int(run.get("input_len")), int(run.get("output_len"))
    r = W.simulate(m, s, 8, input_len=i, output_len=o, precision="fp8", max_seqs=n,
                   requests=n, ranged=False)
    by_hand = n * o / r["e2e_p99"].mid
    assert r["tokens_per_s_system"].mid == pytest.approx(by_hand, rel=5e-3)
    assert predict_serving(kb, run).mid == pytest.approx(by_hand / 8, rel=5e-3)


def test_trtllm_bench_rows_drain_the_page_requests_over_the_whole_run(kb):
    """trtllm-perf-overview-00f3768 states $num_requests per length pair (3,000 at 1000/1000)
    and reports Total Output Throughput: every request's output over the whole run. By hand:
    N x out tokens over the time the last request ends (all requests arrive at t = 0, so the
    run's length is the largest end-to-end latency), within the spread of the p99."""
    import trnkb.workload as W

    runs = [r for r in ledger.load_runs() if r.source == "trtllm-perf-overview-00f3768"]
    assert len(runs) >= 10
    for run in runs:
        p = predict_serving(kb, run)
        assert not isinstance(p, str), p
        assert "window=all" in p.call, p.call
    run = next(r for r in runs if r.id == "measured-h100-llama31-8b-fp8-tp1-1000-1000")
    assert "requests=3000" in predict_serving(kb, run).call
    m, s = fromkb.model(kb, run.model), fromkb.system(kb, run.system)
    r = W.simulate(m, s, 1, input_len=1000, output_len=1000, precision="fp8", requests=3000,
                   window="all", ranged=False)
    steady = W.simulate(m, s, 1, input_len=1000, output_len=1000, precision="fp8",
                        ranged=False)["tokens_per_s_per_chip"].mid
    whole = r["tokens_per_s_per_chip"].mid
    assert 3000 * 1000 / r["e2e_p99"].mid / whole == pytest.approx(1.0, abs=0.05)
    assert whole < steady  # the ramp and the tail of a finite run cost throughput
    assert predict_serving(kb, run).mid == pytest.approx(whole, rel=1e-9)
