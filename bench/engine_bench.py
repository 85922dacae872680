"""Reference-engine benchmarks: print ratios measured in one run (not pass/fail).

1. cost-only GEMM 8192^3 (BF16, Trainium2) wall time (target: under 1 s);
2. numeric execution time of a GEMM against NumPy matmul of the same shape;
3. MX / NVFP4 quantization throughput in elements per second.
"""

from __future__ import annotations

import time

import numpy as np

import trnkb
from trnkb.engine import NeuronCore, gemm, quantize_mx, quantize_nvfp4


def timed(f, *a, **kw):
    t = time.perf_counter()
    out = f(*a, **kw)
    return out, time.perf_counter() - t


def main() -> None:
    kb = trnkb.load()
    trn2, trn3 = (NeuronCore.from_kb(kb, c) for c in ("trainium2", "trainium3"))

    for core, dtype in ((trn2, "bf16"), (trn3, "mxfp8")):
        r, wall = timed(gemm, core, 8192, 8192, 8192, dtype=dtype, execute=False)
        print(f"cost-only GEMM 8192^3 {dtype} on {core.chip}: {wall:.2f} s wall "
              f"({len(r.records[0]):,} instructions, {len(r.records[0]) / wall:,.0f} instr/s); "
              f"simulated {r.seconds.to('ms').magnitude:.2f} ms at {r.utilization:.1%} of peak"
              f"{'  [target < 1 s]' if dtype == 'bf16' else ''}")

    m = k = n = 1024
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    _, t_np = timed(np.matmul, a.astype(np.float32), b.astype(np.float32))
    for dtype, core in (("bf16", trn2), ("mxfp8", trn3)):
        _, t_eng = timed(gemm, core, m, k, n, dtype=dtype, a=a, b=b)
        print(f"numeric GEMM {m}x{k}x{n} {dtype}: engine {t_eng:.3f} s vs NumPy float32 "
              f"matmul {t_np:.4f} s = {t_eng / t_np:,.0f}x")

    x = rng.standard_normal((1024, 4096)).astype(np.float32)
    for name, f in (("mxfp8", lambda: quantize_mx(x, "mxfp8")),
                    ("mxfp4", lambda: quantize_mx(x, "mxfp4")),
                    ("nvfp4", lambda: quantize_nvfp4(x))):
        _, t = timed(f)
        print(f"quantize {name}: {x.size / t / 1e6:,.1f} M elements/s")


if __name__ == "__main__":
    main()
