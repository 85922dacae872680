"""Start-up benchmarks: ratios measured in one run, each in fresh subprocesses (cold).

1. ``import trnkb; trnkb.load()`` vs ``import pandas, pint`` (target: <= 1.5x);
2. ``trnkb --help`` wall time (target: <= 0.3 s), and vs a bare ``python -c pass``;
3. 200 look-ups ``kb.get`` / ``kb.value`` / ``kb.provenance`` after load.

Each measurement is repeated (``--repeat``, default 7) alternating the commands, so both
sides of a ratio see the same machine load; the minimum and the median are printed (the
minimum is the least disturbed by other processes on a shared machine).

Run: ``python bench/load_bench.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CASES = {
    "pandas+pint": [PY, "-c", "import pandas, pint"],
    "trnkb.load": [PY, "-c", "import trnkb; trnkb.load()"],
    "python": [PY, "-c", "pass"],
    "trnkb --help": [PY, "-c", "import sys; from trnkb.cli import main; sys.argv = ['trnkb', '--help']; main()"],
}
LOOKUPS = """
import time, trnkb
kb = trnkb.load()
pairs = [(i, f) for i, f in zip(kb.facts["id"], kb.facts["field"])][:200]
t = time.perf_counter()
for i, f in pairs:
    kb.get(i, f); kb.value(i, f); kb.provenance(i, f)
print(time.perf_counter() - t)
"""


def wall(cmd: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=env)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    n = ap.parse_args().repeat
    times: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(n):  # interleaved: every case sees the same load
        for k, cmd in CASES.items():
            times[k].append(wall(cmd))
    lo = {k: min(v) for k, v in times.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    for k in CASES:
        print(f"{k:14s} min {lo[k]:.3f} s  median {med[k]:.3f} s  ({n} runs)")
    r_min = lo["trnkb.load"] / lo["pandas+pint"]
    r_med = med["trnkb.load"] / med["pandas+pint"]
    print(f"import trnkb; trnkb.load() / import pandas, pint = {r_min:.2f}x (min), "
          f"{r_med:.2f}x (median)  [target <= 1.5x]")
    print(f"trnkb --help = {lo['trnkb --help']:.3f} s (min), {med['trnkb --help']:.3f} s (median), "
          f"{lo['trnkb --help'] / lo['python']:.1f}x a bare interpreter  [target <= 0.3 s]")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([PY, "-c", LOOKUPS], check=True, capture_output=True, text=True,
                         cwd=ROOT, env=env).stdout
    print(f"200 x (get, value, provenance) after load: {float(out) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
