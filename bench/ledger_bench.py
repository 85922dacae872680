"""CPU time of the measured ledger's evaluation (issue 19 item 6): load, predict every run,
write the report. Prints seconds; run with ``.venv/bin/python bench/ledger_bench.py``."""

from __future__ import annotations

import time

import trnkb
from trnkb.audit import ledger, ledger_report


def main() -> None:
    kb = trnkb.load()
    t = time.process_time()
    runs = ledger.load_runs()
    t_load = time.process_time() - t
    t = time.process_time()
    rows = ledger.evaluate(kb, runs)
    t_eval = time.process_time() - t
    predicted = sum(r["prediction"] is not None for r in rows)
    t = time.process_time()
    ledger_report.markdown(kb, rows)
    t_page = time.process_time() - t
    print(f"ledger: {len(runs)} runs, {predicted} predicted")
    print(f"load {t_load:.2f} s CPU, evaluate {t_eval:.2f} s CPU "
          f"({t_eval / max(predicted, 1) * 1000:.0f} ms per predicted run), report {t_page:.2f} s")


if __name__ == "__main__":
    main()
