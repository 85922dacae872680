"""Build ``specs/ledger/runs.yaml`` (the measured ledger) from published results files.

Run once, by hand, after ``fetch`` has brought the results repositories to ``/work/.mirror``
(or give ``--mirror DIR``); the YAML it writes is committed, the repositories are not::

    python bench/import_ledger.py > specs/ledger/runs.yaml

Inputs, each read at the commit named in its source row (``specs/sources.yaml``):

- MLPerf Inference v5.1 ``summary_results.json`` (closed division, datacenter suite, the LLM
  benchmarks, the datacenter accelerators of NVIDIA and AMD; Google and AWS did not submit
  to this round's closed LLM benchmarks);
- MLPerf Training v5.0 and v5.1 result logs (``<submitter>/results/<system>/<benchmark>/
  result_*.txt``, MLLOG lines) and system descriptions (``<submitter>/systems/<system>.json``)
  for the LLM benchmarks (Llama 3.1 405B, Llama 3.1 8B, Llama 2 70B LoRA);
- the AWS Neuron performance tables (``about-neuron/benchmarks/trn1/*.csv``): decoder
  inference latency and throughput, decoder training;
- the MaxText optimized-models tiering table (Google TPU v5p and v6e training) and the NeMo
  24.07 performance summary (DGX-H100 pre-training and fine-tuning), read from the fetched
  repositories at the commits in their source rows (or given as text files);
- the InferenceX serving dashboard's API snapshot (``bench/import_inferencex.py``: closed-loop
  DeepSeek-R1 sweeps on NVIDIA and AMD systems, throughput per GPU, TPOT and TTFT);
- JetStream-PyTorch's TPU v5e serving summary (``bench/import_jetstream.py``; kept as not
  expressible: its ShareGPT sample's mean lengths are not stated);
- the serving runs of ``specs/claims/measured.yaml`` (vendor tables: TensorRT-LLM, NIM, ROCm
  vLLM, OCI; their sources stay in that file's ``sources`` block), each with ``from_claim``.

Every figure is copied or computed from those files; nothing is typed here but the
mapping from a published accelerator or model name to a knowledge-base id
(:data:`_SYSTEMS`, :data:`_MODELS`) and the split rule (:func:`split`).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

_MIRROR = Path("/work/.mirror")
INF51 = ("mlcommons+inference_results_v5.1", "965182b03376a00fcae415c54e560e1c83937932")
TRAIN = {"5.0": ("mlcommons+training_results_v5.0", "0fdc28f013256aea84fa36fdaf1e0fa46094b18c"),
         "5.1": ("mlcommons+training_results_v5.1", "441d65f4445cd59687466533fd9f55399136e7a4")}
NEURON = ("aws-neuron+aws-neuron-sdk", "81ce03ae261e12925e53437a0f690478e6366155")

# published accelerator name -> (vendor, knowledge-base system id). An id the KB lacks is kept:
# the run is then listed as not expressible, with the reason, until the row exists.
_SYSTEMS = [
    ("GB300", "NVIDIA", "gb300-nvl72"), ("B300", "NVIDIA", "hgx-b300-8"),
    ("GB200", "NVIDIA", "gb200-nvl72"),
    ("B200", "NVIDIA", "hgx-b200-8"), ("H200-SXM", "NVIDIA", "hgx-h200-8"),
    ("H200-NVL", "NVIDIA", "h200-nvl-8"), ("H100-SXM", "NVIDIA", "hgx-h100-8"),
    ("H100 80GB HBM3", "NVIDIA", "hgx-h100-8"), ("H200", "NVIDIA", "hgx-h200-8"),
    ("MI355X", "AMD", "mi355x-8"), ("MI350X", "AMD", "mi350x-8"), ("MI325X", "AMD", "mi325x-8"),
    ("MI300X", "AMD", "mi300x-8"), ("trn1.32xlarge", "AWS", "trn1-32xlarge"),
    ("inf2.48xlarge", "AWS", "inf2-48xlarge"), ("v5p", "Google", "tpu-v5p-pod"),
    ("v6e", "Google", "tpu-v6e-pod"),
]
_MODELS = {
    "llama2-70b-99": "llama-2-70b", "llama2-70b-99.9": "llama-2-70b",
    "llama3.1-405b": "llama-3-1-405b", "llama3.1-8b": "llama-3-1-8b",
    "mixtral-8x7b": "mixtral-8x7b",
    # DeepSeek-R1 has the DeepSeek-V3 architecture (671B MoE, MLA)
    "deepseek-r1": "deepseek-v3",
    "llama31_405b": "llama-3-1-405b", "llama31_8b": "llama-3-1-8b",
    "llama2_70b_lora": "llama-2-70b",
    # Llama 3 has the Llama 3.1 architecture (same layers, heads, vocabulary)
    "Llama-3-8B": "llama-3-1-8b", "Llama-3-70B": "llama-3-1-70b", "Llama-2-70b": "llama-2-70b",
    "Llama-2-7b": "llama-2-7b", "Llama-2-13b": "llama-2-13b",
    "Mistral-7B-Instruct-v0.2": "mistral-7b", "CodeLlama-13b-hf": "codellama-13b",
    "Llama-3.1-8B": "llama-3-1-8b", "Llama-3.1-70B": "llama-3-1-70b",
    "Llama 2 70B": "llama-2-70b", "Llama 3.1 8B": "llama-3-1-8b", "Llama 3.1 70B": "llama-3-1-70b",
    "Llama 3.1 405B": "llama-3-1-405b", "Mixtral 8X7B": "mixtral-8x7b",
    "Mixtral 8X22B": "mixtral-8x22b",
}
_PRECISION = {"fp8": "fp8", "fp4": "fp4", "INT8": "int8", "UINT4": "int4", "INT4": "int4",
              "bf16": "bf16", "FP16": "fp16"}
_INF_BENCH = {"llama2-70b-99": "mlperf-inf-llama2-70b", "llama2-70b-99.9": "mlperf-inf-llama2-70b",
              "llama3.1-405b": "mlperf-inf-llama3.1-405b", "llama3.1-8b": "mlperf-inf-llama3.1-8b",
              "mixtral-8x7b": "mlperf-inf-mixtral-8x7b", "deepseek-r1": "mlperf-inf-deepseek-r1"}
_SEQ_LEN = {"llama31_405b": 8192, "llama31_8b": 8192, "llama2_70b_lora": 8192}


def split(run_id: str) -> str:
    """The fixed held-out rule: ``holdout`` when the first 8 hex digits of the SHA-256 of the
    run id are even, else ``fit`` (about half each; independent of any result)."""
    return "holdout" if int(hashlib.sha256(run_id.encode()).hexdigest()[:8], 16) % 2 == 0 \
        else "fit"


def _git(repo: str, commit: str, path: str, mirror: Path) -> str:
    return subprocess.run(["git", "--git-dir", str(mirror / repo / "repo"), "show",
                           f"{commit}:{path}"], check=True, capture_output=True,
                          text=True).stdout


def _ls(repo: str, commit: str, mirror: Path) -> list[str]:
    out = subprocess.run(["git", "--git-dir", str(mirror / repo / "repo"), "ls-tree", "-r",
                          "--name-only", commit], check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def _system(name: str) -> tuple[str, str]:
    for key, vendor, sid in _SYSTEMS:
        if key.lower() in name.lower():
            return vendor, sid
    raise KeyError(name)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def _bridged(details: str, mirror: Path) -> bool:
    """Whether an Inference v5.1 system's description (``closed/<submitter>/systems/
    <system>.json``, named by the result's ``Details`` URL) states NVLink between its
    accelerators: H200 NVL cards run with or without NVLink bridges (``h200-nvl-8`` or
    ``h200-nvl-pcie-8``)."""
    parts = details.split("/closed/", 1)[1].split("/")
    path = f"closed/{parts[0]}/systems/{parts[-1]}.json"
    desc = json.loads(_git(*INF51, path, mirror))
    return "nvlink" in str(desc.get("accelerator_interconnect", "")).lower()


def inference_v51(mirror: Path) -> list[dict[str, Any]]:
    rows = json.loads(_git(*INF51, "summary_results.json", mirror))
    runs = []
    for r in rows:
        if (r["Category"] != "closed" or not r["Suite"].startswith("datacenter")
                or r["Model"] not in _INF_BENCH or not r["Accelerator"]):
            continue
        try:
            vendor, sid = _system(r["Accelerator"])
        except KeyError:
            continue  # outside the ledger's scope: not a datacenter accelerator of the four
        if vendor not in ("NVIDIA", "AMD") or "RTX" in r["Accelerator"]:
            continue
        if sid == "h200-nvl-8" and not _bridged(r["Details"], mirror):
            sid = "h200-nvl-pcie-8"
        mixed = "," in r["Accelerator"]
        chips = int(r["a#"] or 0) * int(r["Nodes"] or 0) if not mixed else None
        tps = re.search(r"TOKENS_PER_SAMPLE:\s*([0-9.]+)", r["Accuracy"])
        scen = r["Scenario"].lower()
        rid = f"mlperf-inf-{r['ID']}-{r['Model']}-{scen}"
        run: dict[str, Any] = {
            "id": rid, "family": "serving throughput", "vendor": vendor,
            "system": None if mixed else sid, "hardware": f"{r['System']} ({r['Accelerator']})",
            "chips": chips, "model": _MODELS[r["Model"]], "model_name": r["Model"],
            "precision": _PRECISION.get(r["weight_data_types"], r["weight_data_types"]),
            "scenario": scen, "benchmark": _INF_BENCH[r["Model"]],
            "output_len": float(tps.group(1)) if tps else None,
            "software": r["Software"],
            "metric": "tokens_per_s_system", "value": float(r["Performance_Result"]),
            "unit": "1/s", "source": "mlperf-inference-v5-1-results",
            "locator": f"summary_results.json, ID {r['ID']}, {r['Model']}, {r['Scenario']}",
            "url": r["Details"], "date": "2025-09-09",
        }
        if mixed:
            run["not_expressible"] = "heterogeneous system (MI300X and MI325X nodes together)"
        runs.append(run)
    return runs


def _mllog(text: str) -> dict[str, Any]:
    """The configuration one MLPerf Training log states: run_start/run_stop times (ms), status,
    global batch, sequence, the samples consumed at run_stop, the samples of one evaluation
    (``eval_samples``) and the evaluations performed (``evals``: the distinct ``samples_count``
    of the ``eval_stop`` events, each rank's duplicate counted once; ``eval_accuracy`` events
    when a log has no ``eval_stop``). Eval durations are not read: they are the answer."""
    out: dict[str, Any] = {}
    stops: set[Any] = set()
    accuracies: set[Any] = set()
    for line in text.splitlines():
        if ":::MLLOG" not in line:
            continue
        e = json.loads(line.split(":::MLLOG", 1)[1])
        k = e["key"]
        if k in ("run_start", "run_stop", "global_batch_size", "max_sequence_length",
                 "submission_platform", "submission_org", "eval_samples"):
            out.setdefault(k, e["value"] if k not in ("run_start", "run_stop") else e["time_ms"])
            if k == "run_stop" and "status" not in out:
                out["status"] = e["metadata"].get("status")
                out["samples"] = e["metadata"].get("samples_count")
        elif k in ("eval_stop", "eval_accuracy") and "run_stop" not in out:
            (stops if k == "eval_stop" else accuracies).add(
                (e.get("metadata") or {}).get("samples_count", e["time_ms"]))
    out["evals"] = len(stops or accuracies)
    return out


def _eval_work(logs: list[dict[str, Any]]) -> dict[str, Any]:
    """``evals`` (mean evaluations per run over ``logs``, 2 decimals) and ``eval_samples``
    (samples per evaluation, as logged) when every log states them, else nothing."""
    sizes = {g.get("eval_samples") for g in logs}
    if not logs or None in sizes or len(sizes) != 1:
        return {}
    return {"evals": round(statistics.mean(g["evals"] for g in logs), 2),
            "eval_samples": int(sizes.pop())}


_TRUE = ("true", "1", "yes")


def _exports(repo: str, commit: str, path: str, mirror: Path, files: set[str],
             seen: frozenset[str] = frozenset()) -> dict[str, str]:
    """The ``export NAME=VALUE`` settings of a launch script, in order, following its
    ``source $(dirname ${BASH_SOURCE[0]})/<file>`` lines (same directory)."""
    out: dict[str, str] = {}
    if path in seen or path not in files:
        return out
    folder = path.rsplit("/", 1)[0]
    for line in _git(repo, commit, path, mirror).splitlines():
        src = re.match(r"\s*(?:source|\.)\s+\$\(dirname \$\{BASH_SOURCE\[0\]\}\)/(\S+)", line)
        if src:
            out.update(_exports(repo, commit, f"{folder}/{src.group(1)}", mirror, files,
                                seen | {path}))
            continue
        m = re.match(r"\s*export\s+(\w+)=[\"']?([^\"'\s#]*)", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _stated_precision(repo: str, commit: str, org: str, sysdir: str, bench: str,
                      files: set[str], mirror: Path) -> dict[str, Any]:
    """The precision a submission states for one system: its README
    ``<org>/benchmarks/<bench>/implementations/<sysdir>/README-<sysdir>.md`` names the launch
    script (``Launch configuration ... are in the `benchmarks/.../config_*.sh` script``),
    whose exports (sourced files included) set the GEMM precision (``FP4=True`` -> fp4, else
    ``FP8=True`` -> fp8, ``FP8=False`` -> bf16) and the attention's (``FP8_DPA`` true -> fp8,
    false -> bf16, unset -> the default its ``conf/*.yaml`` gives ``${oc.env:FP8_DPA,...}``;
    Transformer Engine runs dot-product attention in fp8 only with ``fp8_dpa``);
    ``HEALING_ITER`` (fp4 runs: the step after which the GEMMs switch to fp8, NVIDIA's
    FP4 -> FP8 healing) as ``fp4_steps``. Nothing when no README names a script or
    the script states neither FP4 nor FP8."""
    readme = f"{org}/benchmarks/{bench}/implementations/{sysdir}/README-{sysdir}.md"
    if readme not in files:
        return {}
    m = re.search(r"`(benchmarks/[^`]+\.sh)`", _git(repo, commit, readme, mirror))
    if not m:
        return {}
    script = f"{org}/{m.group(1)}"
    env = _exports(repo, commit, script, mirror, files)
    on = {k: env[k].lower() in _TRUE for k in ("FP4", "FP8", "FP8_DPA") if k in env}
    if on.get("FP4"):
        gemm = "fp4"
    elif "FP8" in on:
        gemm = "fp8" if on["FP8"] else "bf16"
    else:
        return {}
    out: dict[str, Any] = {"precision": gemm,
                           "precision_locator": f"{readme} names {script}: "
                           + ", ".join(f"{k}={env[k]}" for k in
                                       ("FP4", "FP8", "FP4_RECIPE", "FP8_DPA", "HEALING_ITER")
                                       if k in env)}
    dpa = on.get("FP8_DPA")
    if dpa is None:  # unset: the implementation's Hydra default, ${oc.env:FP8_DPA,<default>}
        folder = script.rsplit("/", 1)[0]
        for f in sorted(x for x in files if x.startswith(f"{folder}/conf/")
                        and x.endswith(".yaml")):
            d = re.search(r"oc\.env:FP8_DPA,\s*([^}\s]+)\}", _git(repo, commit, f, mirror))
            if d:
                dpa = d.group(1).lower() in _TRUE
                out["precision_locator"] += f"; FP8_DPA unset, {f} default {d.group(1)}"
                break
    if dpa is not None:
        out["attention_precision"] = "fp8" if dpa else "bf16"
    heal = env.get("HEALING_ITER", "0")
    if gemm == "fp4" and heal.isdigit() and int(heal):
        out["fp4_steps"] = int(heal)
    plan = _stated_plan(env)
    if plan:
        out["plan"] = plan
        out["plan_locator"] = f"{script}: " + ", ".join(
            f"{k}={env[k]}" for k in sorted(env) if k in _PLAN_KEYS)
    return out


# launch-script exports naming the layout: NVIDIA's pre-training configurations
# (TENSOR_MODEL_PARALLEL, ...) and its LoRA configurations (TP, ...)
_PLAN_VARS = {"tp": ("TENSOR_MODEL_PARALLEL", "TP"), "pp": ("PIPELINE_MODEL_PARALLEL", "PP"),
              "cp": ("CONTEXT_PARALLEL", "CP"), "mb": ("MICRO_BATCH_SIZE", "MBS"),
              "vpp": ("INTERLEAVED_PIPELINE",)}
_PLAN_KEYS = {v for names in _PLAN_VARS.values() for v in names}


def _stated_plan(env: dict[str, str]) -> str | None:
    """The layout a launch script sets, as a trnkb plan (``tp=..,pp=..,cp=..,mb=..,zero=1``
    and ``vpp`` when ``INTERLEAVED_PIPELINE`` is a number): None unless it sets tp, pp and
    cp. ZeRO 1: the implementations' Megatron distributed optimizer (``use_distributed_
    optimizer`` true in their configurations), which shards the optimizer state over the
    data-parallel ranks."""
    got: dict[str, int] = {}
    for key, names in _PLAN_VARS.items():
        for n in names:
            if env.get(n, "").isdigit():
                got[key] = int(env[n])
                break
    if not all(k in got for k in ("tp", "pp", "cp")):
        return None
    parts = [f"{k}={got[k]}" for k in ("tp", "pp", "cp")] + [f"mb={got.get('mb', 1)}", "zero=1"]
    if got.get("vpp", 1) > 1:
        parts.append(f"vpp={got['vpp']}")
    return ",".join(parts)


def training(version: str, mirror: Path) -> list[dict[str, Any]]:
    repo, commit = TRAIN[version]
    files = _ls(repo, commit, mirror)
    present = set(files)
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in files:
        m = re.match(r"([^/]+)/results/([^/]+)/(llama31_405b|llama31_8b|llama2_70b_lora)/"
                     r"result_\d+\.txt$", f)
        if m:
            org, sysdir, bench = m.groups()
            groups.setdefault((org, sysdir, bench), []).append(f)
    runs = []
    for (org, sysdir, bench), paths in sorted(groups.items()):
        sysjson = json.loads(_git(repo, commit, f"{org}/systems/{sysdir}.json", mirror))
        try:
            vendor, sid = _system(sysjson["accelerator_model_name"])
        except KeyError:
            print(f"skipped (accelerator outside the ledger): {org}/{sysdir}: "
                  f"{sysjson['accelerator_model_name']}", file=sys.stderr)
            continue
        logs = []
        for p in sorted(paths):
            try:
                logs.append(_mllog(_git(repo, commit, p, mirror)))
            except subprocess.CalledProcessError:  # a large file the snapshot lists but lacks
                print(f"unreadable in the snapshot, left out: {p}", file=sys.stderr)
        ok = [g for g in logs if g.get("status") == "success" and "run_start" in g]
        if not ok:
            continue
        minutes = sorted((g["run_stop"] - g["run_start"]) / 60000 for g in ok)
        kept = minutes[1:-1] if len(minutes) >= 5 else minutes
        samples = statistics.mean(g["samples"] for g in ok if g.get("samples") is not None)
        chips = int(sysjson["number_of_nodes"]) * int(sysjson["accelerators_per_node"])
        seq = int(ok[0].get("max_sequence_length") or _SEQ_LEN[bench])
        rid = f"mlperf-train-{version}-{_slug(org)}-{_slug(sysdir)}-{bench}"
        run: dict[str, Any] = {
            "id": rid, "family": "time-to-train", "vendor": vendor, "system": sid,
            "hardware": f"{sysjson['system_name']} ({sysjson['accelerator_model_name']})",
            "chips": chips, "model": _MODELS[bench], "model_name": bench,
            "precision": None, "benchmark": f"mlperf-train-{bench}",
            **_stated_precision(repo, commit, org, sysdir, bench, present, mirror),
            "seq_len": seq, "global_batch": int(ok[0]["global_batch_size"]),
            "tokens": round(samples * seq), **_eval_work(ok),
            "software": sysjson.get("framework", ""),
            "metric": "time_to_train", "value": round(statistics.mean(kept), 3), "unit": "min",
            "runs": len(ok),
            "source": f"mlperf-training-v{version.replace('.', '-')}-results",
            "locator": f"{org}/results/{sysdir}/{bench}/result_*.txt (run_start to run_stop; "
                       f"mean of {len(kept)} of {len(ok)} successful runs"
                       f"{', fastest and slowest dropped' if len(kept) < len(ok) else ''}; "
                       f"samples at run_stop, eval_stop events and eval_samples: mean of the "
                       f"{len(ok)})",
            "url": f"https://github.com/mlcommons/training_results_v{version}/tree/{commit}/"
                   f"{org}/results/{sysdir}/{bench}",
            "date": "2025-06-04" if version == "5.0" else "2025-11-12",
        }
        if bench == "llama2_70b_lora":
            run["method"] = "lora"
        runs.append(run)
    return runs


def _csv(path: str, mirror: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(_git(*NEURON, path, mirror))))


def neuron(mirror: Path) -> list[dict[str, Any]]:
    runs = []
    base = "about-neuron/benchmarks/trn1/"
    for fname, mode in (("latency_data_decoder.csv", "latency"),
                        ("throughput_data_decoder.csv", "throughput")):
        for i, r in enumerate(_csv(base + fname, mirror), start=2):
            vendor, sid = _system(r["Inst. Type"])
            common = {
                "vendor": vendor, "system": sid, "hardware": r["Inst. Type"],
                # TP degree counts NeuronCores: 2 per Trainium1 chip
                "chips": int(r["TP Degree"]) // 2, "model": _MODELS.get(r["Model"]),
                "model_name": r["Model"],
                "precision": _PRECISION.get(r["Weight Storage Data Type"],
                                            r["Weight Storage Data Type"]),
                "scenario": "batch", "batch": int(r["Batch Size"]),
                "input_len": int(r["Input Length"]), "output_len": int(r["Output Length"]),
                "software": f"{r['Framework']} (Neuron {r['Neuron Version']})",
                "source": f"neuron-trn1-{mode}-decoder-csv-81ce03a",
                "url": f"https://github.com/aws-neuron/aws-neuron-sdk/blob/{NEURON[1]}/{base}{fname}",
                "date": "2025",
            }
            stem = (f"neuron-trn1-{_slug(r['Model'])}-b{r['Batch Size']}-"
                    f"{r['Input Length']}-{r['Output Length']}-{_slug(r['Neuron Version'])}")
            runs.append({"id": f"{stem}-tokens", "family": "serving throughput", **common,
                         "metric": "tokens_per_s_system",
                         "value": float(r["Output Token Throughput (tokens/sec)"]), "unit": "1/s",
                         "locator": f"{fname} line {i}, Output Token Throughput"})
            runs.append({"id": f"{stem}-tpot", "family": "serving latency", **common,
                         "metric": "tpot", "value": float(r["TPOT Latency P50 (ms)"]),
                         "unit": "ms", "locator": f"{fname} line {i}, TPOT Latency P50"})
            runs.append({"id": f"{stem}-ttft", "family": "serving latency", **common,
                         "metric": "ttft", "value": float(r["TTFT Latency P50 (ms)"]),
                         "unit": "ms", "locator": f"{fname} line {i}, TTFT Latency P50"})
    fname = "training_data_decoder.csv"
    for i, r in enumerate(_csv(base + fname, mirror), start=2):
        name = r["Model"].replace(" pre-training", "")
        nodes = int(r["Nodes"])
        seq = int(r[" Sequence Length"])
        plan = ",".join(f"{k.lower()}={v}" for k, v in re.findall(r"(TP|PP)=(\d+)", r["Topology"]))
        runs.append({
            "id": f"neuron-trn1-train-{_slug(name)}-{nodes}n-{_slug(r['Neuron Version'])}",
            "family": "training throughput", "vendor": "AWS", "system": "trn1-32xlarge",
            "hardware": f"{nodes} x {r['Instance-Type']}", "chips": nodes * 16,
            "model": _MODELS.get(name), "model_name": name, "precision": "bf16",
            "plan": plan.replace("tp=32", "tp=16"), "seq_len": seq,
            "global_batch": int(r["Globalbatch"]),
            "software": f"NeuronX Distributed (Neuron {r['Neuron Version']})",
            "metric": "tokens_per_s_per_chip",
            # sequences/s for the cluster -> tokens/s per chip (16 Trainium1 per trn1.32xlarge)
            "value": round(float(r[" Performance [seq/sec]"]) * seq / (nodes * 16), 2),
            "unit": "1/s", "published": f"{r[' Performance [seq/sec]']} seq/s on {nodes} nodes",
            "source": "neuron-trn1-training-decoder-csv-81ce03a",
            "locator": f"{fname} line {i}, Performance [seq/sec] x Sequence Length / "
                       f"(Nodes x 16 chips)",
            "url": f"https://github.com/aws-neuron/aws-neuron-sdk/blob/{NEURON[1]}/{base}{fname}",
            "date": "2025",
        })
    return runs


_TIERING = ("AI-Hypercomputer/maxtext", "20a91e12a17cbaa7b786ac388b192b63392cd855",
            "docs/reference/models/tiering.md")


def maxtext(text: str) -> list[dict[str, Any]]:
    """Rows of the tiering tables: ``| Model | [Link](...) | 256 Chips, BF16, SL=8192 | MFU |
    tokens/s/device |`` under ``## Trillium (v6e)`` / ``## v5p``."""
    runs, chip = [], ""
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            chip = "v6e" if "v6e" in line else "v5p" if "v5p" in line else ""
        m = re.match(r"\| ([^|]+?) \| \[Link\]\([^)]*\) \| (\d+) [^|]*?(BF16|bf16)[^|]*SL=(\d+) "
                     r"\| ([0-9.]+)% \| ([0-9,]+) \|", line)
        if not (m and chip):
            continue
        name, chips, _, seq, mfu, tps = m.groups()
        vendor, sid = _system(chip)
        runs.append({
            "id": f"maxtext-{chip}-{_slug(name)}-{chips}", "family": "training throughput",
            "vendor": vendor, "system": sid, "hardware": f"TPU {chip} x {chips}",
            "chips": int(chips), "model": _MODELS.get(name), "model_name": name,
            "precision": "bf16", "seq_len": int(seq), "software": "MaxText (JAX)",
            "metric": "tokens_per_s_per_chip", "value": float(tps.replace(",", "")),
            "unit": "1/s", "published": f"MFU {mfu}%",
            "source": "maxtext-tiering-v6e-v5p",
            "locator": f"tiering.md line {n}, {chip} {name}, Approx tokens/sec/device",
            "url": f"https://github.com/{_TIERING[0]}/blob/{_TIERING[1]}/{_TIERING[2]}",
            "date": "2025",
        })
    return runs


_NEMO = ("NVIDIA/NeMo", "070a0bb168d405d653b9734c0017cf5078e77c0d",
         "docs/source/performance/performance_summary.md")
_NEMO_MODELS = {"LLAMA2-70B": "llama-2-70b", "LLAMA3-8B": "llama-3-1-8b",
                "LLAMA3-70B": "llama-3-1-70b", "LLAMA2-7B": "llama-2-7b",
                "LLAMA2-13B": "llama-2-13b", "GPT3-5B": "gpt-3-5b", "GPT3-20B": "gpt-3-20b",
                "GPT3-175B": "gpt-3-175b"}


def nemo(text: str) -> list[dict[str, Any]]:
    """The NeMo 24.07 performance summary (DGX-H100, FP8): pre-training rows ``| Model | GPUs |
    GBS | MBS | Seq | TP | PP | CP | VP | tokens/s/GPU | ...`` and fine-tuning rows ``| Model |
    Task | GPUs | GBS | MBS | Seq | TP | PP | tokens/s/GPU | ...``."""
    runs = []
    for n, line in enumerate(text.splitlines(), start=1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 10 or not cells[-3].isdigit() or cells[0].startswith("-"):
            continue
        if cells[1] in ("SFT", "LoRA"):
            name, task, gpus, gbs, mbs, seq, tp, pp, tps = cells[:9]
            cp, vp = "1", "1"
        else:
            name, gpus, gbs, mbs, seq, tp, pp, cp, vp, tps = cells[:10]
            task = "pre-training"
        plan = f"tp={tp},pp={pp},cp={cp},mb={mbs}" + (f",vpp={vp}" if int(vp) > 1 else "")
        run: dict[str, Any] = {
            "id": f"nemo-24.07-h100-{_slug(name)}-{_slug(task)}-{gpus}",
            "family": "training throughput", "vendor": "NVIDIA", "system": "hgx-h100-8",
            "hardware": f"DGX-H100 x {int(gpus) // 8 or 1} ({gpus} GPUs)", "chips": int(gpus),
            "model": _NEMO_MODELS.get(name), "model_name": f"{name} ({task})",
            "precision": "fp8", "seq_len": int(seq), "global_batch": int(gbs), "plan": plan,
            "software": "NeMo 24.07", "metric": "tokens_per_s_per_chip", "value": float(tps),
            "unit": "1/s", "source": "nemo-performance-summary-070a0bb",
            "locator": f"performance_summary.md line {n}, {name} {task}, Tokens / sec / GPU",
            "url": f"https://github.com/{_NEMO[0]}/blob/{_NEMO[1]}/{_NEMO[2]}", "date": "2024",
        }
        if task == "LoRA":  # NeMo's launcher PEFT recipe (specs/benchmarks.yaml)
            run.update(method="lora", benchmark="nemo-24.07-lora-squad")
        runs.append(run)
    return runs


# runs of specs/claims/measured.yaml whose source publishes a maximum-throughput figure
# (trtllm-bench, vLLM benchmark_throughput, MLPerf Offline): offline; the others ran at the
# stated batch or concurrency
_OFFLINE_SOURCES = ("trtllm-perf-overview-0-19", "trtllm-performance-0-5",
                    "trtllm-perf-overview-00f3768", "amd-rocm-performance-results-2025-06",
                    "azure-gb200-mlperf-v41", "igorslab-mi355x-mlperf-6")
# offline sources whose rows publish their batch and ran it as one static batch
# (TensorRT-LLM 0.5: gptSessionBenchmark --batch_size, source trtllm-performance-md-77d24b5)
_STATIC_BATCH_SOURCES = ("trtllm-performance-0-5",)
_STATIC_NOTE = ("batch published (the table's Batch Size column) and run as one static batch "
                "(gptSessionBenchmark --batch_size, source trtllm-performance-md-77d24b5)")
# offline sources whose rows state Num Prompts = Max Num Seqs (the batch), all sent at once
_STATED_SEQS_SOURCES = ("amd-rocm-performance-results-2025-06",)
_SEQS_NOTE = ("batch published (the table's Num Prompts = Max Num Seqs): the drain of that many "
              "requests, that many sequences a step")
_VENDOR_OF = (("hgx-", "NVIDIA"), ("gb", "NVIDIA"), ("mi", "AMD"), ("tpu", "Google"),
              ("trn", "AWS"))


def _claimed(value: Any) -> tuple[float, str]:
    """``'11253.28 / s'`` or ``{ratio: ['27471.49 / s', 8]}`` -> (value, unit)."""
    if isinstance(value, dict):
        (num, den) = value["ratio"]
        x, unit = _claimed(num)
        return x / den, unit
    num, unit = str(value).split(" ", 1)
    return float(num), unit.replace("/ s", "1/s").strip()


def measured_claims(path: Path) -> list[dict[str, Any]]:
    """The serving runs of ``specs/claims/measured.yaml`` (vendor tables, MLPerf press
    figures); training and MFU rows and runs imported above from their primary files
    (Neuron tables, MaxText tiering) are left to the claims registry."""
    import yaml

    doc = yaml.safe_load(path.read_text())
    runs = []
    for c in doc["claims"]:
        w = c.get("workload") or {}
        if w.get("call") != "serve" or c["source"].startswith(("neuron-", "maxtext-")):
            continue
        a = w["args"]
        value, unit = _claimed(c["claimed"])
        offline = c["source"] in _OFFLINE_SOURCES or "throughput" in c["id"]
        latency = w["metric"] in ("tpot", "ttft")
        runs.append({
            "id": c["id"], "family": "serving latency" if latency else "serving throughput",
            "vendor": next(v for p, v in _VENDOR_OF if a["system"].startswith(p)),
            "system": a["system"], "hardware": c["measured"].get("system", a["system"]),
            "chips": a["chips"], "model": a["model"],
            "model_name": c["measured"].get("model", a["model"]), "precision": a["precision"],
            "scenario": "offline" if offline and not latency else "batch",
            "batch": a["batch"], "input_len": a["input_len"], "output_len": a["output_len"],
            "tp": a.get("tp"), "software": c["measured"].get("benchmark", ""),
            "metric": "tpot" if latency else "tokens_per_s_per_chip", "value": value,
            "unit": unit, "source": c["source"], "locator": c["locator"],
            "from_claim": c["id"],
            "note": (_STATIC_NOTE if c["source"] in _STATIC_BATCH_SOURCES and not latency
                     else _SEQS_NOTE if c["source"] in _STATED_SEQS_SOURCES and not latency
                     else "batch is the claim's modelling choice, not published; the simulator "
                     "runs the offline drain instead" if offline and not latency else None),
            "url": next(s["url"] for s in doc["sources"] if s["id"] == c["source"]),
            "date": str(next(s["date"] for s in doc["sources"] if s["id"] == c["source"])),
        })
    return runs


_ORDER = ("id", "family", "vendor", "system", "hardware", "chips", "model", "model_name",
          "method", "precision", "attention_precision", "fp4_steps", "precision_locator",
          "scenario", "benchmark", "batch", "input_len", "output_len",
          "seq_len", "global_batch", "tokens", "evals", "eval_samples", "plan", "plan_locator",
          "tp", "dp",
          "software", "metric", "value", "unit", "published", "runs", "not_expressible",
          "from_claim", "note", "source", "locator", "url", "date", "split")


def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v), ensure_ascii=False)


def to_yaml(runs: list[dict[str, Any]]) -> str:
    head = ("# The measured ledger (issue 19): published runs, each with its configuration, as\n"
            "# `kind: measured` data. Generated by bench/import_ledger.py from the results files\n"
            "# named in each source row (specs/sources.yaml); do not edit by hand, re-run the\n"
            "# importer. `split` is fixed by the rule in bench/import_ledger.py:split (SHA-256\n"
            "# of the id), chosen before anything was compared; docs/workload-validation.md\n"
            "# describes the fields and the report.\n"
            "kind: measured\nruns:\n")
    out = [head]
    for r in runs:
        r = {**r, "split": split(r["id"])}
        lines = []
        for k in _ORDER:
            if k in r and (r[k] is not None or k in ("system", "model", "chips")):
                lines.append(f"{k}: {_scalar(r[k])}")
        out.append("- " + "\n  ".join(lines) + "\n")
    return "".join(out)


def _mirror_text(repo: str, commit: str, path: str, mirror: Path) -> str:
    return _git(repo.replace("/", "+"), commit, path, mirror)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, default=_MIRROR,
                    help="directory holding the fetched repositories (owner+name/repo)")
    ap.add_argument("--maxtext", type=Path, default=None,
                    help="the MaxText tiering.md text at commit 20a91e1 (default: read from "
                         "the fetched AI-Hypercomputer/maxtext)")
    ap.add_argument("--nemo", type=Path, default=None,
                    help="the NeMo performance_summary.md at commit 070a0bb (default: read "
                         "from the fetched NVIDIA/NeMo)")
    a = ap.parse_args(argv)
    tiering = (a.maxtext.read_text() if a.maxtext else _mirror_text(*_TIERING, a.mirror))
    summary = (a.nemo.read_text() if a.nemo else _mirror_text(*_NEMO, a.mirror))
    sys.path.insert(0, str(Path(__file__).parent))
    from import_inferencex import inferencex
    from import_jetstream import jetstream

    runs = (inference_v51(a.mirror) + training("5.0", a.mirror) + training("5.1", a.mirror)
            + neuron(a.mirror) + maxtext(tiering) + nemo(summary)
            + measured_claims(Path(__file__).parents[1] / "specs" / "claims" / "measured.yaml")
            + inferencex(a.mirror) + jetstream(a.mirror))
    ids = [r["id"] for r in runs]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        print(f"duplicate run ids: {sorted(dup)}", file=sys.stderr)
        return 1
    sys.stdout.write(to_yaml(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
