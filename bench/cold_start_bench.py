"""Cold starts of the commands people wait for (issue 23), as ratios to ``trnkb --help``.

Each command runs in a fresh subprocess; CPU time (user + system of the child) is
measured, not wall time, so a busy machine changes the figures less. Commands alternate
within each repeat, so both sides of a ratio see the same load. Targets: ``trnkb
workload serve`` within 3x of ``trnkb --help`` (issue 23), ``trnkb engine gemm
--no-execute`` within 2x (issue 20); ``trnkb claims --summary`` is printed as measured
(its evaluation is remembered across processes by content, so the second run is the
usual one). The last line is the
floor for any command that reads the knowledge base: importing pint, pandas and
pint-pandas alone costs about 8x ``trnkb --help`` on the development machine, so the
targets cannot be met while the workload layer and the engine compute with pint
quantities read from the pandas-backed KB (what would: a light precomputed input
snapshot, as ``trnkb.peaks`` has). The two floor lines after it are an engine run's:
numpy and pint alone, and ``trnkb.units`` (which imports pint-pandas, hence pandas).

Run: ``python bench/cold_start_bench.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent / "trnkb"
CASES = {
    "trnkb --help": ["--help"],
    "workload serve": ["workload", "serve", "--model", "llama-3.1-70b", "--system",
                       "trn3-nl72x2-switched", "--chips", "8", "--batch", "64"],
    "engine gemm --no-execute": ["engine", "gemm", "--m", "1024", "--k", "1024", "--n", "1024",
                                 "--no-execute"],
    "engine --help": ["engine", "--help"],
    "claims --summary": ["claims", "--summary"],
    # the floor of any command that reads the KB: its libraries alone
    "(python: import pint, pandas)": ["-c", "import pint, pandas, pint_pandas"],
    # the floor of an engine run: the engine computes with numpy arrays and pint quantities
    "(python: import numpy, pint)": ["-c", "import numpy, pint"],
    "(python: import trnkb.units)": ["-c", "import trnkb.units"],
}
# issue 23: serve within 3x; issue 20: engine gemm --no-execute within 2x
TARGET = {"workload serve": 3.0, "engine gemm --no-execute": 2.0}


def cpu_seconds(args: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    exe = sys.executable if args[0] == "-c" else str(BIN)
    subprocess.run([exe, *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    n = ap.parse_args().repeat
    times: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(n):
        for name, args in CASES.items():
            times[name].append(cpu_seconds(args))
    base = min(times["trnkb --help"])
    print(f"cold start, CPU seconds (min and median of {n}), ratio of the minima to --help")
    for name, t in times.items():
        ratio = min(t) / base
        target = TARGET.get(name)
        verdict = "" if target is None else (
            f"  target <= {target:g}x: {'met' if ratio <= target else 'MISSED'}")
        print(f"  {name:28s} {min(t):6.2f} s  {statistics.median(t):6.2f} s  "
              f"{ratio:5.1f}x{verdict}")


if __name__ == "__main__":
    main()
