"""Serving runs of the measured ledger put to the workload layer (see :mod:`trnkb.audit.ledger`).

Rules, by the run's ``scenario``:

- ``batch`` (a stated batch or concurrency and lengths: Neuron tables, NIM, OCI, serving
  dashboards): a closed loop of that many clients on the simulator
  (:func:`trnkb.workload.simulate`, ``concurrency=batch``, the run's ``tp``/``dp`` layout
  where stated); TPOT and TTFT are the p50s (the tables' own statistic);
  Transformers NeuronX runs (the Neuron tables) use static batching (``batching="static"``:
  its sample scripts encode and decode one compiled batch; continuous batching needs vLLM)
  and compute in BF16 whatever the weights' storage (``compute_precision="bf16"``: every row
  of the Trn1 decoder CSVs says "Compilation Autocast Data Type: Matmult-BF16", the int8 rows
  too, whose weights are stored in int8 and multiplied in BF16);
  DeepSeek-R1 runs on gfx942 (MI300X, MI325X) whose SGLang image builds an aiter without
  gfx942 tuned DeepSeek-V3 FP8 GEMMs (v0.5.9: aiter v0.1.11.post1) add the default kernels'
  time per layer (``layer_extra``, :func:`trnkb.workload.rocmfit.untuned_layer_extra`);
  InferenceX runs (source ``inferencex-dashboard-*``) draw their lengths as the dashboard's
  client does: integers uniform on ``[int(0.8 L), L]`` (``--random-range-ratio 0.8``; the
  run carries the mean, :func:`_inferencex_range` recovers ``L``), so the closed loop's
  clients drift apart as they do on the server; their SGLang launch scripts on B200/B300
  (``benchmarks/single_node/fixed_seq_len/dsr1_*_b200.sh``, ``*_b300.sh``, since 2025-09)
  pass ``--scheduler-recv-interval`` 30 at 16 or more clients, else 10 (FP8 TP 4: 10),
  which the simulator takes as ``recv_interval`` (:func:`_recv_interval`); their
  TensorRT-LLM scripts with attention DP turn on its balance with ``timeout_iters`` 60
  (``recv_interval`` 60, ``recv_after_prefill`` False); no SGLang script passes
  ``--enable-mixed-chunk``, so its prefill steps run without decodes (``mixed=False``); the
  client sends
  ``--num-prompts`` 10 x concurrency after its warm-up, all clients at once
  (``--request-rate inf``), and reports the median over every prompt and the output tokens
  over the whole run (``window="all"``, ``requests`` 10 x concurrency);
- ``offline`` (a maximum-throughput figure at stated lengths: trtllm-bench, vLLM
  ``benchmark_throughput``): the simulator's offline drain on the run's chips as one replica;
  except TensorRT-LLM 0.5's tables (source ``trtllm-performance-0-5``), whose rows state
  their batch (the "Batch Size" column) and were measured with ``gptSessionBenchmark
  --batch_size`` on an engine built without in-flight batching (source
  ``trtllm-performance-md-77d24b5``, "Benchmarking per Model"): one static batch of that many
  sequences encoded together and generated to its end (``concurrency=batch``,
  ``batching="static"``, :data:`_STATIC_BATCH_SOURCES`), ``--num_runs 5`` such batches whose
  output tokens over their whole time are the figure (``requests`` 5 x batch,
  ``window="all"``: batch x output length / one batch's latency); and AMD's ROCm
  performance-results tables (source ``amd-rocm-performance-results-2025-06``), whose rows
  state "Num Prompts" and "Max Num Seqs" (equal: the run's ``batch``), sent at an infinite
  rate: the drain of exactly that many requests with that many sequences a step
  (``requests=batch``, ``max_seqs=batch``, :data:`_STATED_SEQS_SOURCES`); and the
  TensorRT-LLM perf overview at 00f3768 (source ``trtllm-perf-overview-00f3768``), whose
  ``trtllm-bench throughput`` runs queue a stated number of requests per length pair
  (its ``$num_requests`` table: 30,000 at 128/128 down to 1,000 at 20000/2000) and report
  ``Total Output Throughput``, the output tokens over the whole run, ramp and drain
  included (its example output: total output tokens / ``Total Latency``): the drain of that
  many requests over the whole run (``requests`` from :data:`_TRTLLM_BENCH_REQUESTS`,
  ``window="all"``);
- MLPerf ``offline``, ``server``, ``interactive``: need the benchmark's mean input length,
  which no source read publishes (``specs/benchmarks.yaml`` carries only its upper bound,
  ``input.max``, never used as a mean); the run waits, its reason naming the bound. Once a
  mean is there: the output length is the run's own accuracy-run mean (``output_len``, else
  the benchmark's), offline is the simulator's drain on the run's chips and server/interactive
  the highest Poisson rate whose p99 TTFT and TPOT meet the benchmark's targets
  (:func:`trnkb.workload.max_throughput`), both in the simulator's default layout (the
  submissions do not state theirs) at the run's precision.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from trnkb.workload import fromkb

if TYPE_CHECKING:
    from trnkb.audit.ledger import Prediction, Run
    from trnkb.kb import KnowledgeBase

# the ledger's metric -> the simulator's (p50: the published tables report medians)
_SIM_METRIC = {"tokens_per_s_system": "tokens_per_s_system",
               "tokens_per_s_per_chip": "tokens_per_s_per_chip",
               "tpot": "tpot_p50", "ttft": "ttft_p50"}


def _lengths(run: Run) -> tuple[int, int] | str:
    if run.get("input_len") and run.get("output_len"):
        return int(run.get("input_len")), int(round(run.get("output_len")))
    bid = run.get("benchmark")
    from trnkb.workload.benchmarks import benchmark

    scenario = run.get("scenario")
    try:
        b = benchmark(f"{bid}-{scenario}")
    except (KeyError, ValueError):
        return f"no benchmark {bid}-{scenario} in specs/benchmarks.yaml"
    if not b.input_len:
        bound = (f"; inputs at most {b.input_max:.0f} tokens ({b.sources.get('input')}), a "
                 f"bound, not a mean" if b.input_max else "")
        return (f"the mean input length of {bid} is not published{bound} "
                f"(specs/benchmarks.yaml, searched: see the {bid}-offline row)")
    out = run.get("output_len") or b.output_len
    if not out:
        return f"the mean output length of {bid} is not published"
    return int(b.input_len), int(round(float(out)))


def _result(r: Any, run: Run, metric: str) -> tuple[float, float, float]:
    from trnkb.audit.ledger import _in

    return _in(r[metric], run.unit)


def _simulate(kb: KnowledgeBase, run: Run, lengths: tuple[int, int],
              slo: dict[str, float] | None = None) -> Prediction | str:
    """The simulator's answer for ``run``; under ``slo`` (MLPerf server/interactive) the
    highest Poisson rate meeting it (:func:`trnkb.workload.max_throughput`)."""
    import trnkb.workload as W
    from trnkb.audit.ledger import Prediction

    m, s = fromkb.model(kb, run.model or ""), fromkb.system(kb, run.system or "")
    kw: dict[str, Any] = {"input_len": lengths[0], "output_len": lengths[1],
                          "precision": run.get("precision") or "bf16"}
    if run.source.startswith("inferencex-dashboard"):
        from trnkb.audit.inferencex_launch import launch_limits
        from trnkb.workload import Lengths

        nominal = []
        for key, mean in (("input_len", lengths[0]), ("output_len", lengths[1])):
            lo_hi = _inferencex_range(float(run.get(key) or mean))
            if lo_hi:
                kw[key] = Lengths.uniform_range(*lo_hi)
            nominal.append(lo_hi[1] if lo_hi else int(mean))
        kw |= launch_limits(run, *nominal)  # the launch script's scheduler limits
        if run.get("scenario") == "batch":  # the client: 10 prompts per client, all read
            kw["requests"], kw["window"] = 10 * int(run.get("batch")), "all"
        if str(run.get("software") or "").lower().startswith("sglang"):
            kw["mixed"] = False  # no script passes --enable-mixed-chunk
    recv = _recv_interval(run)
    if recv > 1:
        kw["recv_interval"] = recv
    elif _trt_adp_balance(run) or ("-trt-" in run.id and kw.get("dp", 1) > 1):
        kw["recv_interval"], kw["recv_after_prefill"] = _TRT_ADP_TIMEOUT_ITERS, False
    for key in ("tp", "dp"):  # the run's layout where its source states one
        if run.get(key) and key not in kw:  # (an old script's own choice wins: launch_limits)
            kw[key] = int(run.get(key))
    load = ""
    if run.get("scenario") == "batch" or run.source in _STATIC_BATCH_SOURCES:
        kw["concurrency"] = int(run.get("batch"))
        load = f" --concurrency {kw['concurrency']}"
    if run.source in _STATED_SEQS_SOURCES:  # Num Prompts = Max Num Seqs, all at once
        kw["max_seqs"] = kw["requests"] = int(run.get("batch"))
    if run.source in _TRTLLM_BENCH_SOURCES:  # trtllm-bench: $num_requests, whole run
        n = _TRTLLM_BENCH_REQUESTS.get((int(run.get("input_len") or 0),
                                        int(run.get("output_len") or 0)))
        if n:
            kw["requests"], kw["window"] = n, "all"
    if run.source in _STATIC_BATCH_SOURCES:  # gptSessionBenchmark: --num_runs 5 batches
        kw |= {"batching": "static", "requests": _SESSION_RUNS * kw["concurrency"],
               "window": "all"}
    if str(run.get("software") or "").startswith("Transformers NeuronX"):
        kw["batching"] = "static"  # its benchmark scripts run a compiled static batch
        kw["stack"] = str(run.get("software"))  # its prefill rules: trnkb.workload.neuronx
        if run.source.startswith("neuron-trn1"):  # every row: autocast Matmult-BF16
            kw["compute_precision"] = "bf16"
    untuned = _untuned(run, s.chip, m.id)
    if kw.pop("prefill_graph", False):  # the launch script captures the prefill
        from trnkb.workload.prefillhost import captured_prefill_input

        untuned |= captured_prefill_input()
    if untuned:
        kw["assumptions"] = untuned
    try:
        r = (W.max_throughput(m, s, int(run.chips or 0), slo, **kw) if slo
             else W.simulate(m, s, int(run.chips or 0), **kw))
    except ValueError as e:
        return f"no prediction: {e}"
    if slo:
        load = " --slo " + ",".join(f"{k}={v:g}s" for k, v in sorted(slo.items()))
    mid, lo, hi = _result(r, run, _SIM_METRIC[run.metric])
    call = (f"trnkb workload serve --model {run.model} --system {run.system} --chips {run.chips}"
            f" --input-len {lengths[0]} --output-len {lengths[1]} --precision {kw['precision']}"
            + (f" --tp {kw['tp']}" if "tp" in kw else "")
            + (f" --dp {kw['dp']}" if "dp" in kw else "") + load
            + (f" --kv-precision {kw['kv_precision']}" if "kv_precision" in kw else "")
            + (f" --max-seqs {kw['max_seqs']}" if "max_seqs" in kw else "")
            + (" --batching static" if "batching" in kw else "")
            + (f" --stack '{kw['stack']}'" if "stack" in kw else ""))
    extra: dict[str, Any] = {k: kw[k] for k in ("compute_precision", "max_tokens",
                                                 "chunked_prefill",
                                                 "arrival_lag", "recv_interval",
                                                 "recv_after_prefill",
                                                 "mixed", "window", "requests") if k in kw}
    if isinstance(kw["input_len"], W.Lengths):
        extra["lengths"] = "uniform on [int(0.8 L), L]"
    if extra:  # Python-only settings (trnkb.workload.simulate)
        call += " (simulate: " + ", ".join(f"{k}={v}" for k, v in extra.items()) + ")"
    notes = tuple(r.notes) + (("aiter of this image has no gfx942 tuned DeepSeek-V3 FP8 "
                               "GEMMs: layer_extra from rocmfit.untuned_layer_extra",)
                              if "layer_extra" in untuned else ()) + (
        ("the launch script captures the prefill in piecewise CUDA graphs: "
         "eager_prefill_floor at the captured forward's",)
        if "eager_prefill_floor" in untuned else ())
    if str(run.get("benchmark", "")).startswith("mlperf-inf"):
        notes += ("layout: the simulator's default (the submission does not state one)",)
    return Prediction(mid, lo, hi, call, notes)


# sources whose throughput rows are one static batch of the stated size (module docstring)
_STATIC_BATCH_SOURCES = ("trtllm-performance-0-5",)
# offline sources whose rows state the prompts sent and the server's max sequences (module
# docstring)
_STATED_SEQS_SOURCES = ("amd-rocm-performance-results-2025-06",)
_SESSION_RUNS = 5  # gptSessionBenchmark --num_runs 5 (source trtllm-performance-md-77d24b5)
# trtllm-bench throughput runs whose requests per length pair a source states (module
# docstring): (input, output) -> $num_requests, perf-overview.md at 00f3768, "Preparing a
# Dataset" table
_TRTLLM_BENCH_SOURCES = ("trtllm-perf-overview-00f3768",)
_TRTLLM_BENCH_REQUESTS = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500,
                          (1000, 2000): 1500, (2048, 128): 3000, (2048, 2048): 1500,
                          (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000,
                          (20000, 2000): 1000}

# InferenceX's RANDOM_RANGE_RATIO (bench/import_inferencex.py, source
# inferencex-bench-serving-843c625)
_RANGE_RATIO = 0.8


def _inferencex_range(mean: float) -> tuple[int, int] | None:
    """``(int(L x 0.8), L)`` for the nominal ``L`` whose uniform range has this mean
    (tokens), or None."""
    guess = round(mean / ((1 + _RANGE_RATIO) / 2))
    for nominal in range(guess - 2, guess + 3):
        lo = int(nominal * _RANGE_RATIO)
        if nominal > 0 and (lo + nominal) / 2 == mean:
            return lo, nominal
    return None


def _recv_interval(run: Run) -> int:
    """SGLang's ``--scheduler-recv-interval`` in InferenceX's DeepSeek-R1 launch scripts
    on B200/B300 (module docstring), else 1."""
    sw = str(run.get("software") or "").lower()
    if (not run.source.startswith("inferencex-dashboard")
            or not sw.startswith("sglang") or not re.match(r"inferencex-b[23]00-", run.id)):
        return 1
    if run.get("precision") == "fp8" and run.chips == 4:
        return 10
    return 30 if int(run.get("batch") or 0) >= 16 else 10


# attention_dp_config.timeout_iters of InferenceX's TensorRT-LLM DeepSeek-R1 scripts
# (benchmarks/single_node/fixed_seq_len/dsr1_*_trt.sh, enable_balance true, since 2025-09-18)
_TRT_ADP_TIMEOUT_ITERS = 60


def _trt_adp_balance(run: Run) -> bool:
    """An InferenceX TensorRT-LLM run with attention DP (its scripts turn the balance on)."""
    return (run.source.startswith("inferencex-dashboard") and run.id.endswith(
        tuple(f"-{m}" for m in ("ttft", "tpot", "tokens_per_s_per_chip")))
        and "-trt-" in run.id and "-dpa-" in run.id)


def _untuned(run: Run, chip: str, model_id: str) -> dict[str, Any]:
    """``{"layer_extra": Input}`` for a DeepSeek-V3/R1 run on gfx942 whose SGLang image
    builds an aiter without gfx942 tuned DeepSeek-V3 FP8 GEMMs (rocmfit), else ``{}``."""
    from trnkb.workload.rocmfit import ARCH, untuned_gfx942, untuned_layer_extra

    if (model_id != "deepseek-v3" or ARCH.get(chip) != "gfx942"
            or not untuned_gfx942(str(run.get("software") or ""))):
        return {}
    return {"layer_extra": untuned_layer_extra()}


def predict_serving(kb: KnowledgeBase, run: Run) -> Prediction | str:
    """A serving run's prediction, or the reason it cannot be expressed (module docstring)."""
    lengths = _lengths(run)
    if isinstance(lengths, str):
        return lengths
    scenario = run.get("scenario")
    if scenario in ("server", "interactive"):
        from trnkb.workload.benchmarks import benchmark

        slo = benchmark(f"{run.get('benchmark')}-{scenario}").slo
        if not slo:
            return f"no p99 TTFT/TPOT targets for {run.get('benchmark')}-{scenario}"
        return _simulate(kb, run, lengths, slo)
    return _simulate(kb, run, lengths)
