"""Workload benchmarks: print rates measured in one run (not pass/fail).

1. plan search: candidate plans evaluated per minute (target: at least 10^5) for a dense and
   an MoE model on a graph fabric and an analytic one;
2. a ranged ``train`` and ``serve`` answer: wall time each;
3. the serving simulator: one ranged point (target <= 0.5 s), a 10-point ranged
   throughput-interactivity curve (target <= 3 s) and an SLO search, in process.
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
              f"{wall:.2f} s = {n / wall * 60:,.0f} plans/min  [target >= 100,000/min]")
    m, s = W.model(kb, "llama-3-1-70b"), W.system(kb, "gb300-nvl72")
    t = time.perf_counter()
    W.train(m, s, 1024, "tp=2,zero=3", 15e12)
    t_train = time.perf_counter() - t
    t = time.perf_counter()
    W.serve(m, s, 8, 64, 2048, 512, "fp8")
    print(f"ranged train answer: {t_train:.2f} s; ranged serve answer with its curve: "
          f"{time.perf_counter() - t:.2f} s")
    for model_id, system_id, chips, prec in (("llama-2-70b", "gb300-nvl72", 8, "fp8"),
                                              ("deepseek-v3", "gb300-nvl72", 72, "fp4"),
                                              ("llama-3-1-70b", "trn3-nl72x2-switched", 8,
                                               "fp8")):
        m, s = W.model(kb, model_id), W.system(kb, system_id)
        kw = {"input_len": 1024, "output_len": 1024, "precision": prec}
        t = time.perf_counter()
        W.simulate(m, s, chips, concurrency=256, **kw)
        point = time.perf_counter() - t
        t = time.perf_counter()
        W.simulate(m, s, chips, rate=5.0 if chips > 8 else 20.0, **kw)
        poisson = time.perf_counter() - t
        t = time.perf_counter()
        W.frontier(m, s, chips, points=10, **kw)
        curve = time.perf_counter() - t
        t = time.perf_counter()
        W.max_throughput(m, s, chips, "ttft_p99=2s,tpot_p99=80ms", **kw)
        slo = time.perf_counter() - t
        print(f"simulator {model_id} on {chips} x {system_id} 1k/1k: ranged point {point:.2f} s "
              f"[target <= 0.5 s, ratio {point / 0.5:.2f}]; ranged Poisson point (its ends "
              f"simulated again) {poisson:.2f} s [ratio {poisson / 0.5:.2f}]; "
              f"10-point curve {curve:.2f} s "
              f"[target <= 3 s, ratio {curve / 3:.2f}]; SLO search {slo:.2f} s")


if __name__ == "__main__":
    main()
