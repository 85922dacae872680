"""Google TPU serving runs for the measured ledger: JetStream-PyTorch's benchmark summary
(``benchmarks/summary.md``: Llama 2 7B/13B and Llama 3 8B on one TPU v5e-8 host, bf16 and
int8, throughput at a stated batch), read from the fetched repository at :data:`SUMMARY`.

The summary runs JetStream's ``benchmark_serving.py`` on 2,000 ShareGPT prompts and states
only the caps of the lengths (max input 1,024, max output 1,024 tokens) and the KV-cache
length, not the mean lengths of the sample: the runs are kept with that reason (not
expressible) rather than given guessed lengths. Gemma rows are left out (no model row).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

SUMMARY = ("AI-Hypercomputer+jetstream-pytorch", "2ba0dd8bd3725d8ec6173261ab0016f9f336eeb8",
           "benchmarks/summary.md")
URL = ("https://github.com/AI-Hypercomputer/jetstream-pytorch/blob/"
       "2ba0dd8bd3725d8ec6173261ab0016f9f336eeb8/benchmarks/summary.md")
SOURCE = "jetstream-pytorch-summary-2ba0dd8"
_MODELS = {"Llama 3 - 8B": ("llama-3-1-8b", "Llama 3 8B"),
           "Llama 2 - 7B": ("llama-2-7b", "Llama 2 7B"),
           "Llama 2 - 13B": ("llama-2-13b", "Llama 2 13B")}
_PRECISION = {"bfloat16": "bf16", "int8": "int8"}
_WHY = ("ShareGPT sample (2,000 prompts): the summary states the length caps (1,024 in, "
        "1,024 out) but not the sample's mean input and output lengths")


def runs(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    section = ""
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        m = re.match(r"(\d{4}-\d\d-\d\d) \| TPU (v5e)-(\d+) \| (\w+) \| (\d+) \| (\d+) \| "
                     r"(\d+) \| (\d+) \| ([0-9.]+)", line.strip())
        if not (m and section in _MODELS):
            continue
        date, gen, chips, dtype, batch, cache, max_in, max_out, tput = m.groups()
        model, name = _MODELS[section]
        out.append({
            # "x8", not "-8": an id such as v5e-8 would read as a number with an exponent
            "id": f"jetstream-pytorch-tpu-{gen}-x{chips}-{model}-{dtype}-b{batch}-"
                  f"cache{cache}-{date}",
            "family": "serving throughput", "vendor": "Google", "system": "tpu-v5e-pod",
            "hardware": f"TPU {gen} host, {chips} chips", "chips": int(chips), "model": model,
            "model_name": name, "precision": _PRECISION[dtype], "scenario": "batch",
            "batch": int(batch), "software": "JetStream-PyTorch",
            "metric": "tokens_per_s_system", "value": float(tput), "unit": "1/s",
            "published": f"batch {batch}, cache length {cache}, max input {max_in}, "
                         f"max output {max_out}, ShareGPT, throughput {tput} token/s",
            "not_expressible": _WHY, "source": SOURCE,
            "locator": f"summary.md line {n}, {section}, throughput (token/s)",
            "url": URL, "date": date,
        })
    return out


def jetstream(mirror: Path) -> list[dict[str, Any]]:
    repo, commit, path = SUMMARY
    text = subprocess.run(["git", "--git-dir", str(mirror / repo / "repo"), "show",
                           f"{commit}:{path}"], check=True, capture_output=True,
                          text=True).stdout
    return runs(text)
