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


def test_static_batch_encodes_together_and_decodes_to_its_end() -> None:
    """Static batching, closed loop of 4 clients, 8 requests of 300 prompt and 20 output tokens
    (max_tokens 512 would chunk a continuous batch): batch 1 is one step encoding all 1200
    prompt tokens (TTFT of each = A + 1200 B), then 19 decode steps of 4; batch 2 is admitted
    only after batch 1's last token, so it repeats the same 20 steps."""
    tr = run_scheduler(SchedulerConfig(max_seqs=8, max_tokens=512, static=True), [300] * 8,
                       [20] * 8, cost, concurrency=4)
    ends = tr.ends(tr.dt)
    one = (A + 1200 * B) + 19 * (A + 4 * C)
    assert list(tr.n_pre[[0, 20]]) == [1200, 1200]
    assert ends[tr.first_step[:4]] == pytest.approx([A + 1200 * B] * 4)
    assert ends[tr.first_step[4:]] - one == pytest.approx([A + 1200 * B] * 4)
    assert ends[-1] == pytest.approx(2 * one)
    assert tr.steps == 40


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
    # RCCL 8 x MI300X: flat 13-25 us over 8 B-512 KiB, intercept inside that span
    r = latency_inputs("AMD", "mi355x")["collective_latency"]
    assert r.kind == "fitted" and 13e-6 < r.mid < 25e-6
    assert latency_inputs("Google", "tpu-v7")["collective_latency"].kind == "assumption"


def _v(system_inputs: dict[str, float]) -> dict[str, float]:
    return {**system_inputs, "hbm_efficiency": 0.8, "gemm_efficiency": 0.5, "gemm_m_half": 100.0,
            "moe_imbalance": 1.5, "attention_efficiency": 0.5, "elementwise_fraction": 0.0,
            "collective_efficiency": 1.0, "scaleout_latency": 0.0, "collective_latency": 0.0,
            "collective_latency_per_rank": 0.0, "serve_overlap": 0.0, "step_overhead": 0.0,
            "layer_overhead": 0.0}


def test_step_cost_gemm_rows_by_hand() -> None:
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    kb = trnkb.load()
    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "gb300-nvl72")
    v = _v({k: i.mid for k, i in s.inputs("fp8").items()})
    sm = StepModel(m, s, Layout(1, 1, 1), 1.0, 1.0)
    p = m.params()
    n_dense = p["total"] - p["embedding"]  # every matmul parameter, one chip
    peak, bw = v["peak_flops"], v["hbm_bandwidth"] * 0.8
    for tokens in (1.0, 64.0, 4096.0):
        # FLOPs at gemm_efficiency x M / (M + m_half), or the weights streamed once
        by_hand = max(2 * tokens * n_dense / (peak * 0.5 * tokens / (tokens + 100.0)),
                      n_dense * 1.0 / bw)
        _, parts = step_time(sm, v, 0.0, 0.0, tokens, 0.0, parts=True)
        assert parts["dense"] == pytest.approx(by_hand)
    # below gemm_m_min rows the waste ramps to 0: with m_min 4096, at M = 2048 it is
    # 100 x 2048 / 4096 = 50 rows (compute-bound here); at M = 8192 the whole 100
    v2 = {**v, "gemm_m_min": 4096.0}
    for tokens, waste in ((2048.0, 50.0), (8192.0, 100.0)):
        _, parts = step_time(sm, v2, 0.0, 0.0, tokens, 0.0, parts=True)
        flops_t = 2 * n_dense * (tokens + waste) / (peak * 0.5)
        assert flops_t > n_dense / bw
        assert parts["dense"] == pytest.approx(flops_t)


def test_step_cost_routed_experts_by_hand() -> None:
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    kb = trnkb.load()
    m, s = W.model(kb, "mixtral-8x7b"), W.system(kb, "gb300-nvl72")
    v = _v({k: i.mid for k, i in s.inputs("fp8").items()})
    sm = StepModel(m, s, Layout(2, 2, 1), 1.0, 1.0)  # 4 chips: 2 experts each
    tokens = 32.0  # per attention group; 64 over the stage
    per_expert_params = 3 * 4096 * 14336
    # busiest chip: 64 tokens x 2/8 x 2 local experts x 1.5 imbalance = 48 rows of work
    rows = 64 * 2 / 8 * 2 * 1.5
    touched = 2 * (1 - (1 - 2 / 8) ** 64)
    flops_t = 2 * per_expert_params * 32 / (v["peak_flops"] * 0.5) * (rows + touched * 100.0)
    mem_t = touched * per_expert_params * 32 / (v["hbm_bandwidth"] * 0.8)
    _, parts = step_time(sm, v, tokens, 0.0, 0.0, 0.0, parts=True)
    assert parts["experts"] == pytest.approx(max(flops_t, mem_t))


def test_trainium_hbm_efficiency_from_engine_streaming() -> None:
    from trnkb.workload.gemmfit import hbm_efficiency_input

    # trn2: 8 NeuronCores x (344.6 + 353.8 + 345.2) / 3 GB/s over 2,900 GB/s of HBM
    e = hbm_efficiency_input("trainium2", 2.9e12)
    assert e is not None and e.mid == pytest.approx(8 * (344.6 + 353.8 + 345.2) / 3 / 2900)
    assert e.lo == 0.5 and e.hi == e.mid
    assert hbm_efficiency_input("h100", 3.35e12) is None


def test_cuda_gemm_fit_reproduces_its_sweep() -> None:
    """The H800 FP8 sweep's rows by hand: 4096 x 7168 x 16384 at DeepGEMM's 1,426 TFLOP/s is
    0.72 of 1,979; its best streaming rate is the 64 x 7168 x 16384 row's bytes at 336 TFLOP/s
    (2.67 TB/s, 0.80 of 3.35). The fitted roofline's rms is recomputed here and no
    neighbouring grid point (m_half +-4 rows, efficiency +-0.01, HBM fraction +-0.005) does
    better; the small-M rows stream at 0.45-0.80 of 3.35 TB/s, so DeepGEMM's fitted fraction
    lies inside that span and below its best."""
    from trnkb.workload.gemmfit import CUDA_POINTS, cuda_fit, cuda_inputs

    row = next(r for r in CUDA_POINTS if r[:3] == (4096, 7168, 16384))
    assert row[3] / 1979 == pytest.approx(0.7206, abs=1e-3)
    best_bw = (64 * 16384 + 7168 * 16384 + 2 * 64 * 7168) / (2 * 64 * 7168 * 16384 / 336e12)
    for kernel in ("cutlass", "deepgemm"):
        f = cuda_fit(kernel)
        assert f["hbm_best"] == pytest.approx(best_bw / 3.35e12)

        def rms(e: float, h: float, he: float, kernel: str = kernel) -> float:
            errs = []
            for m, n, k, tf, sp in CUDA_POINTS:
                t = 2 * m * n * k / (tf * 1e12) * (sp if kernel == "cutlass" else 1)
                model = max(2 * m * n * k * (m + h) / (m * 1979e12 * e),
                            (m * k + n * k + 2 * m * n) / (3.35e12 * he))
                errs.append(model / t - 1)
            return math.sqrt(sum(x * x for x in errs) / len(errs))

        e, h, he = f["gemm_efficiency"], f["gemm_m_half"], f["hbm_efficiency"]
        assert rms(e, h, he) == pytest.approx(f["rms_residual"], rel=1e-9)
        for de, dh, dhe in ((0.01, 0, 0), (-0.01, 0, 0), (0, 4, 0), (0, -4, 0), (0, 0, 0.005),
                            (0, 0, -0.005)):
            if h + dh >= 0:
                assert rms(e + de, h + dh, he + dhe) >= rms(e, h, he) - 1e-12
    assert 0.45 < cuda_fit("deepgemm")["hbm_efficiency"] < best_bw / 3.35e12
    # CUTLASS is the compute central (what the serving stacks run), DeepGEMM the fast end;
    # streaming: DeepGEMM's fitted rate central, CUTLASS's the slow end, the best row fast
    ins = cuda_inputs()
    assert ins["gemm_efficiency"].mid == cuda_fit("cutlass")["gemm_efficiency"]
    assert ins["gemm_efficiency"].hi == cuda_fit("deepgemm")["gemm_efficiency"]
    hbm = ins["hbm_efficiency"]
    assert (hbm.lo, hbm.mid, hbm.hi) == (cuda_fit("cutlass")["hbm_efficiency"],
                                         cuda_fit("deepgemm")["hbm_efficiency"],
                                         pytest.approx(best_bw / 3.35e12))


def test_rocm_gemm_efficiency_from_amd_maf_and_taf() -> None:
    """MI300X fp8: MAF 1,273 of 2,614.9 TFLOP/s (rocm-blogs MAF part 2) is the fast end; times
    MI325X's TAF/MAF 1,143 / 1,408.06 the central. MI355X has no MAF row: MI325X's own
    fractions (1,408.06 / 2,610 and 1,143 / 2,610)."""
    from trnkb.workload.gemmfit import rocm_inputs

    e = rocm_inputs("mi300x", "fp8")["gemm_efficiency"]
    assert e.hi == pytest.approx(1273 / 2614.9)
    assert e.mid == pytest.approx(1273 / 2614.9 * 1143 / 1408.06)
    assert e.lo == pytest.approx(0.8 * e.mid)
    b = rocm_inputs("mi300x", "bf16")["gemm_efficiency"]
    assert b.mid == pytest.approx(708 / 1307.4 * 616 / 831.40)
    f = rocm_inputs("mi355x", "fp4")["gemm_efficiency"]
    assert f.mid == pytest.approx(1143 / 2610) and "no row for mi355x" in f.basis


def test_mla_prefill_attention_runs_at_the_bf16_peak() -> None:
    """DeepSeek-V3 in fp8 with an fp8 cache: the prefill of one 8,192-token prompt (causal,
    8192 x 8193 / 2 attended positions) runs as MHA in bf16, 2 x 128 heads x (192 + 128) x
    61 layers FLOPs per position over tp 8, at the MI300X's bf16 peak x attention_efficiency;
    decode attention keeps the cache's (fp8) peak."""
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    kb = trnkb.load()
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "mi300x-8")
    r = W.simulate(m, s, 8, input_len=64, output_len=4, precision="fp8", tp=8,
                   concurrency=1, requests=2, ranged=False)
    v = {k: i.mid for k, i in r.inputs.items()}
    bf16 = s.peak_input("bf16").mid
    assert v["prefill_attention_peak_flops"] == bf16
    assert v.get("attention_peak_flops", v["peak_flops"]) == s.peak_input("fp8").mid
    pos = 8192 * 8193 / 2
    by_hand = pos * 2 * 128 * (192 + 128) * 61 / 8 / (bf16 * v["attention_efficiency"])
    sm = StepModel(m, s, Layout(8), 1.0, 1.0)
    _, parts = step_time(sm, v, 0.0, 0.0, 0.0, pos, parts=True)
    assert parts["attention"] == pytest.approx(by_hand, rel=1e-9)


def test_mla_latent_down_projections_are_whole_on_every_tp_rank() -> None:
    """SGLang's DeepSeek attention builds q_a, kv_a and the RoPE key as one ReplicatedLinear
    (7168 -> 1536 + 512 + 64 = 2112 per layer, 61 layers): at tp 8 each chip streams all
    of it, 61 x 7168 x 2112 x (1 - 1/8) parameters more than an even split; under attention
    DP (tp 1) nothing changes."""
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.stepcost import Layout, StepModel, step_time

    kb = trnkb.load()
    m, s = W.model(kb, "deepseek-v3"), W.system(kb, "hgx-b200-8")
    sm8, sm1 = StepModel(m, s, Layout(8), 1.0, 1.0), StepModel(m, s, Layout(1, 8), 1.0, 1.0)
    rep = 61 * 7168 * 2112
    assert m.tp_replicated_params() == rep
    p = m.params()
    even = (p["total"] - p["routed_experts"]) / 8
    assert sm8.dense_params_per_chip() == pytest.approx(even + rep * (1 - 1 / 8))
    assert sm1.dense_params_per_chip() == pytest.approx(p["total"] - p["routed_experts"])
    # a memory-bound decode step of one token streams those weights once
    v = _v({k: i.mid for k, i in s.inputs("fp8").items()})
    _, parts = step_time(sm8, v, 1.0, 0.0, 0.0, 0.0, parts=True)
    dense = (sm8.dense_params_per_chip() - p["embedding"] / 8) / (v["hbm_bandwidth"] * 0.8)
    assert parts["dense"] == pytest.approx(dense)
    gqa = StepModel(W.model(kb, "llama-2-70b"), s, Layout(8), 1.0, 1.0)
    assert gqa.model.tp_replicated_params() == 0
