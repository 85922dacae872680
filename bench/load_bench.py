"""Start-up benchmarks: ratios measured in one run, each in fresh subprocesses (cold).

1. ``import trnkb; trnkb.load()`` vs ``import pandas, pint`` (target: <= 1.5x);
2. ``trnkb --help`` wall time (target: <= 0.3 s), and vs a bare ``python -c pass``;
3. 200 look-ups ``kb.get`` / ``kb.value`` / ``kb.provenance`` after load.

trnkb caches parsed unit definitions (pint's own cache) and parsed spec YAML in its user
cache directory, keyed by content (:mod:`trnkb.spec.cache`); the first run after an install or
a spec edit fills it, and that case is measured too (``TRNKB_NO_CACHE=1``).

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
    "trnkb.load, no cache": [
        PY,
        "-c",
        "import os; os.environ['TRNKB_NO_CACHE'] = '1'; import trnkb; trnkb.load()",
    ],
    "python": [PY, "-c", "pass"],
    "trnkb --help": [
        PY,
        "-c",
        "import sys; from trnkb.cli import main; sys.argv = ['trnkb', '--help']; main()",
    ],
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


def measure(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+system) of one fresh subprocess."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, cwd=ROOT, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{cmd} failed with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    n = ap.parse_args().repeat
    times: dict[str, list[float]] = {k: [] for k in CASES}
    cpu: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(n):  # interleaved: every case sees the same load
        for k, cmd in CASES.items():
            w, c = measure(cmd)
            times[k].append(w)
            cpu[k].append(c)
    lo = {k: min(v) for k, v in times.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    for k in CASES:
        print(
            f"{k:26s} wall min {lo[k]:.3f} s, median {med[k]:.3f} s; "
            f"CPU median {cmed[k]:.3f} s  ({n} runs)"
        )
    base, ours, nc = "pandas+pint", "trnkb.load", "trnkb.load, no cache"
    print(
        "import trnkb; trnkb.load() / import pandas, pint = "
        f"{lo[ours] / lo[base]:.2f}x (wall min), "
        f"{med[ours] / med[base]:.2f}x (wall median), {cmed[ours] / cmed[base]:.2f}x (CPU median)"
        f"  [target <= 1.5x]"
    )
    print(
        f"  the same with no cache (first run after an install or a spec edit: parses "
        f"units and YAML): {med[nc] / med[base]:.2f}x (wall median), "
        f"{cmed[nc] / cmed[base]:.2f}x (CPU median)"
    )
    h = "trnkb --help"
    print(
        f"trnkb --help = {lo[h]:.3f} s (wall min), {med[h]:.3f} s (wall median), "
        f"{cmed[h]:.3f} s CPU; {lo[h] / lo['python']:.1f}x a bare interpreter  [target <= 0.3 s]"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [PY, "-c", LOOKUPS], check=True, capture_output=True, text=True, cwd=ROOT, env=env
    ).stdout
    print(f"200 x (get, value, provenance) after load: {float(out) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
