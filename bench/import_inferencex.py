"""Serving runs of the InferenceX dashboard for the measured ledger (used by
``bench/import_ledger.py``).

Input: the dashboard's API snapshot that SemiAnalysis commits as a Cypress fixture
(``packages/app/cypress/fixtures/api/benchmarks.json``), read from the fetched repository at
:data:`FIXTURE` (``/work/.mirror``). Each entry is one closed-loop sweep point: hardware,
framework, model, precision, layout (TP, EP, attention-DP, disaggregation, speculative
decoding), nominal input/output lengths (``isl``/``osl``), concurrency and the measured
throughput per GPU and latency statistics (seconds), with the GitHub Actions run that made it.

Kept: the points served by one aggregated engine without speculative decoding (``disagg``
false, ``spec_method`` none), on a system and model the knowledge base has. Each gives up to
three runs: output tokens/s per GPU (``output_tput_per_gpu``), median TPOT and median TTFT.
Each carries the simulator layout of its engine (:func:`_layout`). Skipped points are counted
on stderr.

Lengths: InferenceX's client (``utils/bench_serving/benchmark_serving.py``,
``sample_uniform``) draws input and output lengths uniformly from the integers
``[int(L x r), L]`` with ``r`` = ``RANDOM_RANGE_RATIO`` (0.8 in the benchmark workflow) and
``--ignore-eos``, so the mean length is ``(int(L x r) + L) / 2`` (921.5 for L = 1024), not L;
the runs carry that mean (computed here, :func:`mean_length`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

# the fixture as committed by SemiAnalysis (commit 528c414 of 2026-06-14, "refresh Cypress
# fixtures"), read in the vngcloud fork, which carries it: the upstream snapshot in the store
# no longer holds the file
FIXTURE = ("vngcloud+InferenceX-app", "528c4146b8f502fcbce8df7870a935a970cbae25",
           "packages/app/cypress/fixtures/api/benchmarks.json")
FIXTURE_URL = ("https://github.com/vngcloud/InferenceX-app/blob/"
               "528c4146b8f502fcbce8df7870a935a970cbae25/"
               "packages/app/cypress/fixtures/api/benchmarks.json")
SOURCE = "inferencex-dashboard-fixture-528c414"
RANGE_RATIO = 0.8  # RANDOM_RANGE_RATIO, source inferencex-bench-serving-843c625

_SYSTEMS = {"b200": ("NVIDIA", "hgx-b200-8"), "b300": ("NVIDIA", "hgx-b300-8"),
            "h100": ("NVIDIA", "hgx-h100-8"), "h200": ("NVIDIA", "hgx-h200-8"),
            "gb200": ("NVIDIA", "gb200-nvl72"), "gb300": ("NVIDIA", "gb300-nvl72"),
            "mi300x": ("AMD", "mi300x-8"), "mi325x": ("AMD", "mi325x-8"),
            "mi355x": ("AMD", "mi355x-8")}
# DeepSeek-R1 has the DeepSeek-V3 architecture (671B MoE, MLA)
_MODELS = {"dsr1": ("deepseek-v3", "DeepSeek-R1")}
_PRECISIONS = {"fp8", "fp4", "bf16"}
# (ledger metric, family, fixture key, unit)
_METRICS = (("tokens_per_s_per_chip", "serving throughput", "output_tput_per_gpu", "1/s"),
            ("tpot", "serving latency", "median_tpot", "s"),
            ("ttft", "serving latency", "median_ttft", "s"))


def mean_length(nominal: int, ratio: float = RANGE_RATIO) -> float:
    """Mean of the integers uniform on ``[int(nominal x ratio), nominal]`` (tokens)."""
    return (int(nominal * ratio) + nominal) / 2


def load(mirror: Path) -> list[dict[str, Any]]:
    repo, commit, path = FIXTURE
    text = subprocess.run(["git", "--git-dir", str(mirror / repo / "repo"), "show",
                           f"{commit}:{path}"], check=True, capture_output=True,
                          text=True).stdout
    rows: list[dict[str, Any]] = json.loads(text)
    return rows


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", str(text).lower()).strip("-")


def _layout(r: dict[str, Any]) -> tuple[dict[str, int], str | None]:
    """The simulator layout of an aggregated engine and a note where it approximates.

    trnkb's layout spreads whole routed experts over the ``tp x dp`` chips of a stage (expert
    parallel, :class:`trnkb.workload.stepcost.Layout`): TP T with EP T is that layout; TP T
    with attention-DP is trnkb's DEP (``tp`` 1, ``dp`` T); TP T with EP 1 slices every expert
    across the T chips instead (same weight bytes per chip, an all-reduce in place of the
    dispatch), which the simulator approximates by the expert-parallel layout."""
    tp, ep = int(r["decode_tp"]), int(r["decode_ep"])
    if r["decode_dp_attention"]:
        return {"tp": 1, "dp": tp}, (f"TP {tp} with attention data parallelism and EP {ep}: "
                                     f"simulated as DEP (tp 1, dp {tp})")
    if ep == 1:
        return {"tp": tp}, (f"TP {tp}, EP 1 (experts sliced over the TP group): simulated "
                            f"with whole experts spread over the {tp} chips (expert parallel)")
    return {"tp": tp}, None


def runs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ledger runs of the fixture's entries (module docstring)."""
    out: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for n, r in enumerate(rows):
        why = ("disaggregated prefill/decode" if r["disagg"] else
               f"speculative decoding ({r['spec_method']})" if r["spec_method"] != "none" else
               f"hardware {r['hardware']}" if r["hardware"] not in _SYSTEMS else
               f"model {r['model']}" if r["model"] not in _MODELS else
               f"precision {r['precision']}" if r["precision"] not in _PRECISIONS else None)
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            continue
        vendor, system = _SYSTEMS[r["hardware"]]
        model, name = _MODELS[r["model"]]
        tp, ep = int(r["decode_tp"]), int(r["decode_ep"])
        layout = f"tp{tp}" + (f"-ep{ep}" if ep > 1 else "") + \
            ("-dpa" if r["decode_dp_attention"] else "")
        stem = (f"inferencex-{r['hardware']}-{_slug(r['framework'])}-{r['model']}-"
                f"{r['precision']}-{layout}-{r['isl']}-{r['osl']}-c{r['conc']}-{r['date']}")
        common: dict[str, Any] = {
            "vendor": vendor, "system": system,
            "hardware": f"{r['hardware'].upper()} x {tp}",
            # one aggregated engine on TP GPUs; the dashboard's per-GPU figures count them
            "chips": tp, "model": model, "model_name": name, "precision": r["precision"],
            "scenario": "batch", "batch": int(r["conc"]),
            "input_len": mean_length(int(r["isl"])),
            "output_len": mean_length(int(r["osl"])),
            "software": r["framework"] + (f" ({r['image']})" if r.get("image") else ""),
            "published": f"isl {r['isl']}, osl {r['osl']} (nominal; lengths uniform on "
                         f"[{RANGE_RATIO} x L, L]), concurrency {r['conc']}",
            "source": SOURCE, "url": FIXTURE_URL, "date": str(r["date"]),
        }
        layout_kw, note = _layout(r)
        common.update(layout_kw)
        if note:
            common["note"] = note
        for metric, family, key, unit in _METRICS:
            value = r["metrics"].get(key)
            if not value:
                continue
            out.append({"id": f"{stem}-{metric}", "family": family, **common,
                        "metric": metric, "value": float(value), "unit": unit,
                        "locator": f"benchmarks.json entry {n}: metrics.{key} "
                                   f"(run {r.get('run_url', 'not stated')})"})
    for why, count in sorted(skipped.items()):
        print(f"InferenceX points left out ({why}): {count}", file=sys.stderr)
    return out


def inferencex(mirror: Path) -> list[dict[str, Any]]:
    return runs(load(mirror))
