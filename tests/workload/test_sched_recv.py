"""The scheduler's receive interval (SGLang ``--scheduler-recv-interval``, TensorRT-LLM's
attention-DP balance timeout), uniform lengths and the benchmark window, against
hand-computed schedules."""

from __future__ import annotations

import numpy as np
import pytest

import trnkb
from trnkb import workload as W
from trnkb.workload.lengths import Lengths
from trnkb.workload.scheduler import SchedulerConfig, run_scheduler


def unit(n_dec: float, ctx: float, n_pre: float, attn: float) -> float:
    return np.ones_like(np.asarray(n_dec, float)) if np.ndim(n_dec) else 1.0  # 1 s a step


def _ttft_of_late_arrival(interval: int, after_prefill: bool = True) -> float:
    # A arrives at 0 and decodes 40 tokens; B arrives at 1.5 s, during A's first decode step
    cfg = SchedulerConfig(max_tokens=1000, recv_interval=interval,
                          recv_after_prefill=after_prefill)
    tr = run_scheduler(cfg, [100, 100], [40, 2], unit, arrivals=[0.0, 1.5])
    ends = tr.ends(tr.dt)
    return float(ends[tr.first_step[1]] - 1.5)


def test_every_step_receives_by_default() -> None:
    # B is taken in at the top of step 2 (t = 2 s) and prefilled in it: first token at 3 s
    assert _ttft_of_late_arrival(1) == pytest.approx(1.5)


def test_recv_interval_holds_arrivals_until_the_poll() -> None:
    # A's prefill (step 0) makes the next poll immediate (step 1, nothing yet); then 10 decode
    # steps (1..10) before the next poll at the top of step 11: B's first token ends step 11
    assert _ttft_of_late_arrival(10) == pytest.approx(12 - 1.5)


def test_prefill_steps_count_one_without_recv_after_prefill() -> None:
    # the counter starts full, so the poll at step 0 takes A; steps 0..9 (A's prefill counts 1)
    # bring the next poll to the top of step 10: B's first token ends step 10
    assert _ttft_of_late_arrival(10, after_prefill=False) == pytest.approx(11 - 1.5)


def test_start_burst_drains_in_the_sum_of_its_prefill_steps() -> None:
    # 4 clients at t = 0, one prompt per step (max_tokens = the prompt): first tokens at 1..4 s
    cfg = SchedulerConfig(max_tokens=100)
    tr = run_scheduler(cfg, [100] * 4, [1] * 4, unit, concurrency=4)
    ends = tr.ends(tr.dt)
    assert list(ends[tr.first_step]) == [1.0, 2.0, 3.0, 4.0]


def test_uniform_lengths_are_the_benchmark_range() -> None:
    x = Lengths.uniform_range(819, 1024)  # --random-input-len 1024 --random-range-ratio 0.8
    assert x.mean == 921.5
    s = x.sample(20_000, np.random.default_rng(1))
    assert s.min() == 819 and s.max() == 1024
    assert abs(s.mean() - 921.5) < 2
    assert x.std == pytest.approx(np.sqrt((206**2 - 1) / 12))
    with pytest.raises(ValueError):
        Lengths.uniform_range(10, 5)


def test_window_all_reads_every_request_from_the_start_burst() -> None:
    kb = trnkb.load()
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "gb300-nvl72")
    kw = {"input_len": 512, "output_len": 64, "precision": "fp8", "requests": 16, "tp": 8,
          "ranged": False}
    # 16 clients with one request each is the offline load (all at t = 0, no refills): read
    # over every request and the whole run, the two agree; the steady window drops the burst
    whole = W.simulate(m, s, 8, concurrency=16, window="all", **kw)
    offline = W.simulate(m, s, 8, **kw)
    assert whole.settings["window"] == "all"
    for k in ("ttft_p50", "ttft_p99", "tpot_p50", "tokens_per_s_per_chip"):
        assert whole[k].mid == pytest.approx(offline[k].mid, rel=1e-9)
    with pytest.raises(ValueError):
        W.simulate(m, s, 8, window="most", **kw)


def test_unmixed_prefill_steps_pause_the_decodes() -> None:
    # A (100 + 5 tokens) at 0, B (100 + 2) at 1.5 s. Mixed: A decodes in steps 1-4 (B's
    # prefill shares step 2). SGLang's default (mixed=False): step 2 runs only B's prefill,
    # so A's 4 decode tokens take steps 1, 3, 4, 5
    def trace(mixed: bool):  # noqa: ANN202
        cfg = SchedulerConfig(max_tokens=1000, mixed=mixed)
        return run_scheduler(cfg, [100, 100], [5, 2], unit, arrivals=[0.0, 1.5])

    a, b = trace(True), trace(False)
    assert list(a.last_step) == [4, 3] and list(a.first_step) == [0, 2]
    assert list(b.last_step) == [5, 3] and list(b.first_step) == [0, 2]
    assert b.n_dec[2] == 0 and b.n_pre[2] == 100 and a.n_dec[2] == 1


def _closed_pair(lag: int, mixed: bool = True) -> tuple[list[float], list[float]]:
    # 2 clients, 1 s a step, whole prompts of 100 tokens in one step (max_tokens 1000):
    # A (request 0) generates 3 tokens, B (request 1) 20; A's client then sends request 2
    cfg = SchedulerConfig(max_tokens=1000, arrival_lag=lag, mixed=mixed)
    tr = run_scheduler(cfg, [100, 100, 100], [3, 20, 2], unit, concurrency=2)
    ends = tr.ends(tr.dt)
    arr = [0.0, 0.0, float(ends[tr.last_step[0]])]
    return [float(ends[tr.first_step[i]] - arr[i]) for i in range(3)], arr


def test_overlap_lag_a_refill_joins_two_steps_late_while_the_engine_is_busy() -> None:
    # step 0 prefills A and B together (first tokens at 1 s); A's 2 more tokens come in
    # steps 1 and 2, so A completes at 3 s and its client sends request 2 then.
    # Without a lag request 2 is prefilled in step 3 (with B's decode): TTFT 1 s.
    ttft, arr = _closed_pair(0)
    assert arr[2] == 3.0 and ttft == [1.0, 1.0, 1.0]
    # With the overlap scheduler's lag of 2, steps 3 and 4 run without it (B decodes) and it
    # is prefilled in step 5: first token at 6 s, TTFT 3 s; the burst is untouched
    ttft, _ = _closed_pair(2)
    assert ttft == [1.0, 1.0, 3.0]


def test_overlap_lag_does_not_hold_a_refill_when_the_engine_is_idle() -> None:
    # one client: when its request completes nothing runs, so the next one starts at once
    cfg = SchedulerConfig(max_tokens=1000, arrival_lag=2)
    tr = run_scheduler(cfg, [100, 100], [3, 2], unit, concurrency=1)
    ends = tr.ends(tr.dt)
    # request 0: steps 0 (prefill), 1, 2; request 1 prefilled in step 3: TTFT 1 s
    assert float(ends[tr.first_step[1]] - ends[tr.last_step[0]]) == 1.0
