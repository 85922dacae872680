"""The serving simulator against hand-computed cases (step costs chosen by the test)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trnkb.workload.scheduler import SchedulerConfig, run_scheduler

A, B, C = 0.010, 1e-5, 1e-4  # s per step, per prefill token, per decoding sequence


def cost(n_dec: float, ctx: float, n_pre: float, attn: float) -> float:
    return A + B * n_pre + C * n_dec


def test_single_sequence_ttft_and_tpot() -> None:
    # one prompt of 1000 tokens fits one step: TTFT = A + 1000 B; then 99 decode steps
    tr = run_scheduler(SchedulerConfig(max_seqs=8, max_tokens=4096), [1000], [100], cost)
    ends = tr.ends(tr.dt)
    ttft = ends[tr.first_step[0]]
    e2e = ends[tr.last_step[0]]
    assert ttft == pytest.approx(A + 1000 * B)
    assert e2e == pytest.approx(A + 1000 * B + 99 * (A + C))
    assert (e2e - ttft) / 99 == pytest.approx(A + C)
    assert tr.steps == 100


def test_chunked_prefill_splits_a_long_prompt() -> None:
    # 10,000 prompt tokens at 4096 per step: 3 prefill steps (4096, 4096, 1808)
    tr = run_scheduler(SchedulerConfig(max_seqs=8, max_tokens=4096), [10_000], [2], cost)
    assert list(tr.n_pre[:3]) == [4096, 4096, 1808]
    ends = tr.ends(tr.dt)
    assert ends[tr.first_step[0]] == pytest.approx(3 * A + 10_000 * B)
    # attention work of the chunks: c*p + c(c+1)/2 summed is the causal n(n+1)/2
    assert tr.attn_pre.sum() == pytest.approx(10_000 * 10_001 / 2)


def test_offline_batch_drains_in_the_sum_of_its_steps() -> None:
    n, i, o = 64, 100, 50
    tr = run_scheduler(SchedulerConfig(max_seqs=64, max_tokens=64 * 100), [i] * n, [o] * n, cost)
    ends = tr.ends(tr.dt)
    # step 1 prefills all 64 prompts (6400 tokens), then 49 steps decode all 64
    expected = (A + n * i * B) + (o - 1) * (A + n * C)
    assert ends[-1] == pytest.approx(expected)
    assert ends[-1] == pytest.approx(tr.dt.sum())
    assert tr.steps == o


def test_max_seqs_limits_the_batch() -> None:
    tr = run_scheduler(SchedulerConfig(max_seqs=4, max_tokens=10_000), [10] * 10, [5] * 10, cost)
    assert (tr.n_dec + (tr.n_pre > 0)).max() <= 4 + 4
    assert tr.n_dec.max() <= 4


def test_closed_loop_obeys_littles_law() -> None:
    n_clients, n = 16, 2000
    rng = np.random.default_rng(1)
    out = rng.integers(20, 200, n)
    inp = rng.integers(50, 500, n)
    tr = run_scheduler(SchedulerConfig(max_seqs=64, max_tokens=8192), inp, out, cost,
                       concurrency=n_clients)
    ends = tr.ends(tr.dt)
    arr = np.zeros(n)
    has = tr.predecessor >= 0
    arr[has] = ends[tr.last_step[tr.predecessor[has]]]
    done = ends[tr.last_step]
    # steady window: requests issued after the first 10% of the time and done before the
    # last one is issued
    t0, t1 = 0.1 * done.max(), arr.max()
    sel = (arr >= t0) & (done <= t1)
    throughput = np.sum((done >= t0) & (done <= t1)) / (t1 - t0)
    mean_e2e = float(np.mean(done[sel] - arr[sel]))
    # L = X W: the clients in the system are always n_clients
    assert throughput * mean_e2e == pytest.approx(n_clients, rel=0.05)


def test_poisson_idle_server_starts_when_the_request_arrives() -> None:
    tr = run_scheduler(SchedulerConfig(max_seqs=8, max_tokens=4096), [100, 100], [2, 2], cost,
                       arrivals=[0.0, 10.0])
    ends = tr.ends(tr.dt)
    ttft2 = ends[tr.first_step[1]] - 10.0
    assert ttft2 == pytest.approx(A + 100 * B)


def test_kv_pressure_preempts_and_still_finishes() -> None:
    # room for 300 tokens of context: three sequences of 100 + 100 cannot all stay
    tr = run_scheduler(SchedulerConfig(max_seqs=8, max_tokens=4096, kv_capacity=300),
                       [100] * 3, [100] * 3, cost)
    assert tr.preemptions > 0
    assert (tr.last_step >= 0).all()
    # every token was produced once: 3 first tokens, one per recomputed prefill, the rest in
    # decode steps
    assert tr.n_dec.sum() + 3 + tr.preemptions == 3 * 100


def test_deterministic() -> None:
    a = run_scheduler(SchedulerConfig(), [500] * 50, [50] * 50, cost, concurrency=8)
    b = run_scheduler(SchedulerConfig(), [500] * 50, [50] * 50, cost, concurrency=8)
    assert np.array_equal(a.dt, b.dt) and math.isclose(a.dt.sum(), b.dt.sum())


def test_collective_latency_fits_reproduce_their_points() -> None:
    from trnkb.workload.collfit import POINTS, fit, latency_inputs

    # the 2-rank Neuron all-reduce flat at 58 us up to 64 KiB: the intercept is there
    f = fit("neuron", "all-reduce", 2)
    assert f["a"] == pytest.approx(58e-6, rel=0.02) and f["rms_residual"] < 0.02
    g = fit("nccl", "all-reduce", 8, 1 << 19)
    # the NCCL sweep rises from 13 to 20 us over 8 B-512 KiB, not on a line: the intercept
    # lands inside that span and the residual says how far the line is off (10%)
    pts = [t for s, _, _, b, t in POINTS if s == "nccl" and b <= 1 << 19]
    assert min(pts) * 1e-6 < g["a"] < max(pts) * 1e-6
    assert 0.05 < g["rms_residual"] < 0.15
    ins = latency_inputs("AWS", "trainium3")
    # 2 ranks: base + 2 x per_rank is the 2-rank intercept
    two = ins["collective_latency"].mid + 2 * ins["collective_latency_per_rank"].mid
    assert two == pytest.approx(f["a"])
    assert latency_inputs("AMD", "mi355x")["collective_latency"].kind == "assumption"
