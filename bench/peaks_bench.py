"""``import trnkb.peaks`` and one resolution, each in fresh subprocesses (cold).

Prints, against a bare ``python -c pass`` measured in the same run:

1. ``import trnkb.peaks`` (target: <= 0.2 s wall, no pandas/pint/altair imported);
2. ``import trnkb.peaks; trnkb.peaks("NVIDIA H100 80GB HBM3")`` with the shipped table
   (``trnkb/data/peaks.json``): reads one JSON file and hashes the spec files;
3. whether the shipped table matches the specs (when it does not, the first call rebuilds
   it from the knowledge base and caches it: run ``python -m trnkb.kb.peaks_table``).

Each command is repeated (``--repeat``, default 7), alternating, so both sides of a ratio
see the same machine load; the minimum and the median are printed.

Run: ``python bench/peaks_bench.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
HEAVY = "import sys; print(sorted({m.split('.')[0] for m in sys.modules} & " \
        "{'pandas', 'pint', 'altair', 'numpy', 'yaml'}))"
CASES = {
    "python": [PY, "-c", "pass"],
    "import trnkb.peaks": [PY, "-c", "import trnkb.peaks"],
    "import + resolve": [PY, "-c", "import trnkb.peaks; trnkb.peaks('NVIDIA H100 80GB HBM3')"],
}


def _time(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(args.repeat):
        for name, cmd in CASES.items():
            times[name].append(_time(cmd))
    base = min(times["python"])
    print(f"{'case':<20} {'min s':>8} {'median s':>9} {'min - python s':>15} {'ratio':>6}")
    for name, ts in times.items():
        print(f"{name:<20} {min(ts):8.3f} {statistics.median(ts):9.3f} "
              f"{min(ts) - base:15.3f} {min(ts) / base:6.2f}")
    for label, code in (("import", "import trnkb.peaks"),
                        ("import + resolve",
                         "import trnkb.peaks; trnkb.peaks('NVIDIA H100 80GB HBM3')")):
        out = subprocess.run([PY, "-c", f"{code}\n{HEAVY}"], check=True, cwd=ROOT,
                             capture_output=True, text=True).stdout.strip()
        print(f"heavy modules after {label}: {out}")
    fresh = subprocess.run(
        [PY, "-c", "from trnkb.spec.peaks_format import FORMAT, read_snapshot, shipped_table,"
                   " specs_digest, specs_dir\n"
                   "t = read_snapshot(shipped_table(), FORMAT)\n"
                   "print(t is not None and t['specs_digest'] == specs_digest(specs_dir()))"],
        check=True, cwd=ROOT, capture_output=True, text=True).stdout.strip()
    print(f"shipped table matches the specs: {fresh}")
    target = 0.2
    verdict = "meets" if min(times["import trnkb.peaks"]) <= target else "misses"
    print(f"import trnkb.peaks {verdict} the {target} s target "
          f"({min(times['import trnkb.peaks']):.3f} s)")


if __name__ == "__main__":
    main()
