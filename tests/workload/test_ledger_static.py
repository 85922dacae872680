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
