"""Workload benchmarks: print rates measured in one run (not pass/fail).

1. plan search: candidate plans evaluated per minute (target: at least 10^4) for a dense and
   an MoE model on a graph fabric and an analytic one;
2. a ranged ``train`` and ``serve`` answer: wall time each.
"""

from __future__ import annotations

import time

import trnkb
from trnkb import workload as W
from trnkb.workload.search import candidate_plans


def main() -> None:
    kb = trnkb.load()
    for model_id, system_id, chips in (("llama-3-1-70b", "trn3-nl72x2-switched", 1024),
                                       ("deepseek-v3", "gb300-nvl72", 2048),
                                       ("llama-3-1-405b", "tpu-v7-pod", 8192)):
        m, s = W.model(kb, model_id), W.system(kb, system_id)
        W.plans(m, s, chips, top=1)  # warm the fabric's group-bandwidth cache
        n = len(candidate_plans(m, s, chips, 4 * 2**20 / 8192, all_zero=True))
        t = time.perf_counter()
        rows = W.plans(m, s, chips, top=None, all_zero=True, include_unfit=True)
        wall = time.perf_counter() - t
        fit = sum(r["fits"] for r in rows)
        print(f"plan search {model_id} on {chips} x {system_id}: {n:,} candidates ({fit:,} fit) in "
              f"{wall:.2f} s = {n / wall * 60:,.0f} plans/min  [target >= 10,000/min]")
    m, s = W.model(kb, "llama-3-1-70b"), W.system(kb, "gb300-nvl72")
    t = time.perf_counter()
    W.train(m, s, 1024, "tp=2,zero=3", 15e12)
    t_train = time.perf_counter() - t
    t = time.perf_counter()
    W.serve(m, s, 8, 64, 2048, 512, "fp8")
    print(f"ranged train answer: {t_train:.2f} s; ranged serve answer with its curve: "
          f"{time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
