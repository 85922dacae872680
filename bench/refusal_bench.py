"""How long a contributor waits for a typo to be refused (issue 25, target: under 2 s of CPU).

Copies the shipped specs to a temporary directory, introduces one typo per case (an
unknown unit, an unknown field, a bad claim reference), and runs ``trnkb validate DIR``
in a fresh process, measuring the child's CPU time (user + system). Data errors are
reported before any claim is evaluated, so the first two cases cost a load, not an audit.

Run: ``python bench/refusal_bench.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SPECS = Path(__file__).resolve().parent.parent / "specs"
BIN = Path(sys.executable).parent / "trnkb"
CASES = {
    "unknown unit in chips.yaml": ("chips.yaml", "value: 671 TFLOPS", "value: 671 TFLOPZ"),
    "unknown field in chips.yaml": ("chips.yaml", "  dense_bf16:", "  dense_bf61:"),
    "dangling claim reference": ("claims.yaml", "trainium3.", "trainium9."),
}
TARGET = 2.0


def cpu_seconds(args: list[str]) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    n = ap.parse_args().repeat
    print(f"trnkb validate on a spec with one typo: CPU seconds (min of {n}); target < {TARGET} s")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (file, old, new) in CASES.items():
            specs = Path(tmp) / name.replace(" ", "-")
            shutil.copytree(SPECS, specs)
            text = (specs / file).read_text()
            assert old in text, f"{file} no longer holds {old!r}: update the bench"
            (specs / file).write_text(text.replace(old, new, 1))
            runs = [cpu_seconds([str(BIN), "validate", str(specs)]) for _ in range(n)]
            best = min(t for t, _ in runs)
            codes = {c for _, c in runs}
            verdict = "met" if best < TARGET else "MISSED"
            print(f"  {name:30s} {best:5.2f} s  exit {sorted(codes)}  {verdict}")


if __name__ == "__main__":
    main()
