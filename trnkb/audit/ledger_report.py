"""The measured ledger's section of ``docs/workload-validation.md``: scores per family, per
vendor and per split, the issue's targets beside them, every predicted run, and every run
that cannot be expressed with its reason.

Scores of a set of predicted runs (:func:`score`): the median absolute error of the central
(``|central - measured| / measured``), the share of measured values inside the predicted
range, and the share of centrals above the measurement.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from trnkb.audit.ledger import FAMILIES, VENDORS

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

# issue 19, "Done when", on the held-out runs: (median |error| at most, share in range at
# least, share of centrals above the measurement within)
TARGETS: dict[str, tuple[float, float, tuple[float, float] | None]] = {
    "training throughput": (0.15, 0.80, None),
    "time-to-train": (0.15, 0.80, None),
    "serving throughput": (0.20, 0.80, (0.35, 0.65)),
    "serving latency": (0.20, 0.80, (0.35, 0.65)),
}


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``runs`` (all), ``predicted``, ``median_abs_error``, ``in_range`` and ``above`` (shares
    of the predicted runs; None when none is predicted)."""
    done = [r for r in rows if r["prediction"] is not None]
    out: dict[str, Any] = {"runs": len(rows), "predicted": len(done), "median_abs_error": None,
                           "in_range": None, "above": None}
    if done:
        out.update(median_abs_error=statistics.median(abs(r["error"]) for r in done),
                   in_range=sum(r["in_range"] for r in done) / len(done),
                   above=sum(r["above"] for r in done) / len(done))
    return out


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Scores by family (held-out and all), by family and vendor (held-out), and whether each
    family meets its target on the held-out runs (None when no held-out run is predicted)."""
    by: dict[str, Any] = {"family": {}, "family_vendor": {}, "meets": {}}
    for fam in FAMILIES:
        f = [r for r in rows if r["run"].family == fam]
        ho = [r for r in f if r["run"].split == "holdout"]
        by["family"][fam] = {"holdout": score(ho), "all": score(f)}
        for v in VENDORS:
            by["family_vendor"][(fam, v)] = score([r for r in ho if r["run"].vendor == v])
        s, (err, inside, above) = by["family"][fam]["holdout"], TARGETS[fam]
        by["meets"][fam] = None if not s["predicted"] else (
            s["median_abs_error"] <= err and s["in_range"] >= inside
            and (above is None or above[0] <= s["above"] <= above[1]))
    return by


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _row(label: str, s: dict[str, Any]) -> str:
    return (f"| {label} | {s['predicted']} of {s['runs']} | {_pct(s['median_abs_error'])} "
            f"| {_pct(s['in_range'])} | {_pct(s['above'])} |")


_HEAD = "| {0} | predicted | median abs. error | measured in range | central above |"


def markdown(kb: KnowledgeBase, rows: list[dict[str, Any]] | None = None) -> str:
    """The ledger section (``rows`` from :func:`trnkb.audit.ledger.evaluate`)."""
    from trnkb.audit.ledger import evaluate

    rows = evaluate(kb) if rows is None else rows
    s = summary(rows)
    runs = [r["run"] for r in rows]
    count = Counter((r.family, r.vendor) for r in runs)
    split = Counter(r.split for r in runs)
    sources = sorted({r.source for r in runs})
    lines = [
        "\n## The measured ledger (specs/ledger/runs.yaml)\n",
        f"{len(runs)} published runs, each with its configuration (system, chips, model, "
        f"precision, scenario, lengths or sequence and batch, metric, value, unit, source, "
        f"locator, URL, date) as `kind: measured` data, written by `bench/import_ledger.py` from "
        f"the results files of the sources {', '.join(sources)} (specs/sources.yaml). "
        f"Runs by family and vendor: "
        + "; ".join(f"{fam}: " + ", ".join(f"{v} {count[(fam, v)]}" for v in VENDORS
                                          if count[(fam, v)]) for fam in FAMILIES) + ".\n",
        "**Split.** Nothing end-to-end is fitted: every run here is validation (the workload "
        "layer's constants come from operator-level data and documented stack behaviour). "
        "The held-out half the targets are read on was fixed when the ledger was written, "
        "before any run was compared: `split: holdout` when the first 8 hex digits of the "
        "SHA-256 of the run id are even (`bench/import_ledger.py:split`), "
        f"{split['holdout']} runs held out and {split['fit']} marked `fit` (reserved for any "
        "future end-to-end calibration, which may use no held-out run).\n",
        "**Rules.** Time-to-train is the mean of a submission's logged runs from `run_start` "
        "to `run_stop` (the fastest and slowest dropped when there are 5 or more), against "
        "`train` on the tokens the runs consumed (samples x sequence), the global batch and "
        "sequence of the log, the plan search's best plan, and the precision the submission "
        "states: where a README `README-<system>.md` names the launch script, its exports "
        "(`FP4`, `FP8`, `FP8_DPA`, `HEALING_ITER`, sourced files included; `FP8_DPA` unset "
        "takes the implementation's `conf/*.yaml` default) give the layout instead of the "
        "search's (`plan`: tensor, pipeline, context parallelism, microbatch and interleave, "
        "ZeRO 1 for Megatron's distributed optimizer; `plan_locator`), the GEMMs' precision "
        "(`precision`), the attention's (`attention_precision`, at that precision's peak) "
        "and, for NVFP4 LoRA, the steps before the FP4 -> FP8 healing (`fp4_steps`; later "
        "steps in fp8), with the locator in `precision_locator`; 33 NVIDIA-made "
        "submissions state it (8 of them `FP4=True`); the others are predicted in fp8 "
        "(v5.x LLM submissions train in fp8); Llama 2 70B LoRA runs train the "
        "adapters of specs/benchmarks.yaml (rank 16 on qkv and o) on a base held in fp8 at "
        "fp8 and fp4 (recipe `fp8-lora`: NeMo's `fp8_params`, set by `FP8=True`), context "
        "parallelism as an all-to-all (`cp_comm=a2a`, NeMo's LoRA `cp_comm_type`); the "
        "evaluations inside "
        "`run_start`..`run_stop` are the logs' configuration, not their timing: the mean "
        "count of evaluations (`evals`) x `eval_samples` x sequence, forwarded at the "
        "training step's precision and MFU (`eval_time`, docs/workload.md). Training "
        "throughput is tokens/s per chip against `train` at the published plan when there "
        "is one. Serving runs go to the simulator "
        "(`trnkb.workload.simulate`): a stated batch is a closed loop of that many clients "
        "(TPOT and TTFT at p50, the tables' statistic), a maximum-throughput table is the "
        "offline drain on the run's chips, except TensorRT-LLM 0.5's, whose rows state their "
        "batch and ran it with `gptSessionBenchmark --batch_size --num_runs 5` (no in-flight "
        "batching; source trtllm-performance-md-77d24b5): one static batch of that size, "
        "batch x output over one batch's latency, and AMD's ROCm tables', whose rows state "
        "Num Prompts = Max Num Seqs: the drain of that many requests at that many sequences "
        "a step, and the TensorRT-LLM perf overview's at 00f3768, whose `trtllm-bench` runs "
        "queue the `$num_requests` its dataset table states per length pair and report the "
        "output tokens over the whole run: the drain of that many requests, ramp and tail "
        "included; MLPerf scenarios wait for the benchmark's mean "
        "input length, which no source read publishes (`specs/benchmarks.yaml` keeps only "
        "its upper bound, `input.max`, never used as a mean; reasons below); once one is "
        "there, offline is the drain on the run's chips and server/interactive the highest "
        "Poisson rate meeting the benchmark's p99 TTFT and TPOT (`max_throughput`), at the "
        "run's own mean output length, in the simulator's default layout. "
        "Serving-dashboard points (InferenceX) are closed loops at the stated concurrency "
        "on one aggregated engine of TP GPUs, with the mean lengths "
        "of the client's draw (uniform on [0.8 L, L], `specs/benchmarks.yaml` dashboard rows); "
        "the engine's layout is the simulator's (TP with experts spread over the TP chips; "
        "attention data parallelism as DEP, `--tp 1 --dp N`; TP-sliced experts approximated "
        "by that expert-parallel layout, noted per run), with the limits its launch script "
        "passed at the run's date (`trnkb.audit.inferencex_launch`: SGLang's prefill budget "
        "and running requests, TensorRT-LLM's `max_num_tokens` without chunked prefill, the "
        "attention DP the pre-2025-11-03 TensorRT-LLM scripts chose themselves) and the two "
        "steps a closed loop's next request waits under the stacks' overlap schedulers; an MLA "
        "model's prefill step takes at least the host's eager-launch floor "
        "(`trnkb.workload.prefillhost`, SGLang PR 12160); disaggregated and "
        "speculative-decoding points are not imported.\n",
        "### On the held-out runs, against the targets of issue 19\n",
        _HEAD.format("family") + " target | met |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for fam in FAMILIES:
        err, inside, above = TARGETS[fam]
        target = (f"error <= {err:.0%}, in range >= {inside:.0%}"
                  + (f", above {above[0]:.0%} to {above[1]:.0%}" if above else ""))
        met = {None: "no runs", True: "yes", False: "no"}[s["meets"][fam]]
        lines.append(_row(fam, s["family"][fam]["holdout"]) + f" {target} | {met} |")
    lines += ["", "### By family and vendor (held-out runs)\n",
              _HEAD.format("family, vendor"), "| --- | --- | --- | --- | --- |"]
    for fam in FAMILIES:
        for v in VENDORS:
            sc = s["family_vendor"][(fam, v)]
            if sc["runs"]:
                lines.append(_row(f"{fam}, {v}", sc))
    lines += ["", "### All runs (held-out and fit)\n", _HEAD.format("family"),
              "| --- | --- | --- | --- | --- |"]
    lines += [_row(fam, s["family"][fam]["all"]) for fam in FAMILIES]
    lines += ["", "### Predicted runs\n",
              "| run | split | measured | predicted central (range) | error | in range |",
              "| --- | --- | --- | --- | --- | --- |"]
    from trnkb.audit.workload_validation import _ranged, _with_unit

    for r in rows:
        p, run = r["prediction"], r["run"]
        if p is None:
            continue
        lines.append(f"| {run.id} | {run.split} | {_with_unit(run.value, run.unit)} "
                     f"| {_ranged(p.mid, p.lo, p.hi)} | {r['error']:+.0%} "
                     f"| {'yes' if r['in_range'] else 'no'} |")
    reasons: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r["reason"]:
            reasons[r["reason"]].append(r["run"].id)
    lines += ["", "### Runs that cannot be expressed yet, by reason\n",
              "| reason | runs | ids |", "| --- | --- | --- |"]
    for reason, ids in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"| {reason} | {len(ids)} | {', '.join(ids)} |")
    return "\n".join(lines) + "\n"
