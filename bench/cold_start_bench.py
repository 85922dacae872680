"""Cold starts of the commands people wait for (issue 23), as ratios to ``trnkb --help``.

Each command runs in a fresh subprocess; CPU time (user + system of the child, all its
threads) is measured, not wall time, so a busy machine changes the figures less. Commands
alternate within each repeat, so both sides of a ratio see the same load. The children
write and use bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped from their environment), as
an installed package does; one untimed round first writes it.

Two columns per command. *warm*: the minimum and median of the repeats, with trnkb's user
cache filled (pint's parsed unit definitions, the parse trees of the spec files, and the
one result memo, remembered claim evaluations, which only ``claims --summary`` uses).
*no cache*: one run with ``TRNKB_NO_CACHE=1``, what the first run after an install or a
spec edit costs. Ratios and targets are read on the warm minima.

Targets: ``trnkb workload serve`` within 3x of ``trnkb --help`` (issue 23), ``trnkb engine
gemm --no-execute`` within 2x (issue 20, 3x in issue 23). Both are below the floor. The two
commands load the knowledge base, which is pandas frames of pint quantities, so their floor
is importing pint, pandas and pint-pandas: 0.56 s of CPU, 8.0x ``--help`` (0.07 s), on
the shared 2-core development machine on 2026-11-27 (numpy and pint alone: 0.25 s, 3.5x,
already above 3x for the engine). Meeting the targets would take commands that read no
pandas-backed KB: a light precomputed input snapshot, as :mod:`trnkb.peaks` has for peaks.

Measured on that machine and day (warm minima of 5): ``import trnkb.units`` 0.56 s ->
0.29 s since it stopped importing pint-pandas (hence pandas; :mod:`trnkb.units.frames`
binds it where a ``pint[...]`` column is made); ``workload serve`` 1.27 s (18x; 1.86 s
with no cache); ``engine gemm --no-execute`` 1.09 s (15.5x; 1.51 s with no cache) --
both unchanged by that, as the KB they load imports pandas anyway. Where a warm
``workload serve`` goes (cProfile and ``-X importtime``): about 0.6 s importing (pandas
0.25, pint 0.16, typer's pydantic adapters 0.06, networkx 0.08), 0.2 s loading and
deriving the KB, 0.25 s building the fabric graph of trn3-nl72x2-switched (512 nodes) and
its hop matrix (the OpenBLAS threads of its small matrix products spin for 0.08 s of CPU;
0.008 s with ``OPENBLAS_NUM_THREADS=1``), 0.1 s of serving model.

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
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",
                                                          "TRNKB_NO_CACHE")}


def cpu_seconds(args: list[str], *, cache: bool = True) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    exe = sys.executable if args[0] == "-c" else str(BIN)
    env = {**ENV, "NO_COLOR": "1", **({} if cache else {"TRNKB_NO_CACHE": "1"})}
    subprocess.run([exe, *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    n = ap.parse_args().repeat
    for args in CASES.values():  # writes bytecode and fills the user cache; not timed
        cpu_seconds(args)
    cold = {name: cpu_seconds(args, cache=False) for name, args in CASES.items()}
    times: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(n):
        for name, args in CASES.items():
            times[name].append(cpu_seconds(args))
    base = min(times["trnkb --help"])
    print(f"cold start, CPU seconds: warm (min and median of {n}, user cache filled), ratio of "
          f"the warm minimum to --help; no cache (one run, TRNKB_NO_CACHE=1)")
    for name, t in times.items():
        ratio = min(t) / base
        target = TARGET.get(name)
        verdict = "" if target is None else (
            f"  target <= {target:g}x: {'met' if ratio <= target else 'MISSED'}")
        print(f"  {name:30s} warm {min(t):5.2f} s {statistics.median(t):5.2f} s {ratio:5.1f}x"
              f"   no cache {cold[name]:5.2f} s {cold[name] / base:5.1f}x{verdict}")


if __name__ == "__main__":
    main()
