"""MX / NVFP4 quantization throughput, and its ratio to torchao measured in the same run.

Prints elements per second for every format and scale mode on float32 standard-normal
values of two sizes (1024 x 4096, which stays in the CPU's L3 cache, and 4096 x 4096, a
weight matrix that does not), and, when torch and torchao are importable, torchao's ``to_mx`` /
``nvfp4_quantize`` on the same values with ``torch.set_num_threads(1)``, the two timed
alternately. Time is this process's CPU time (``time.process_time``), best of several
runs: both sides run on one thread, and CPU time is far steadier than wall time on a
machine shared with other jobs. Not pass/fail: the issue's target is a ratio >= 1 for
every format. MXFP8 runs the compiled numba kernel of ``trnkb.engine.numerics_fp8``
(compiled, or loaded from numba's cache, in the warm-up run, never timed), the other
formats the lookup tables of ``trnkb.engine.numerics_fast``; TRN3 rows have no torchao
counterpart.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable

import numpy as np

from trnkb.engine.numerics import quantize_mx
from trnkb.engine.numerics_formats import MX_FORMATS
from trnkb.engine.numerics_nvfp4 import quantize_nvfp4

SHAPES = ((1024, 4096), (4096, 4096))
REPEATS = 9
FORMATS = {"mxfp8_e4m3": "e4m3", "mxfp8_e5m2": "e5m2", "mxfp6_e2m3": "e2m3",
           "mxfp6_e3m2": "e3m2", "mxfp4": "e2m1"}


def best_seconds(fns: list[Callable[[], object]]) -> list[float]:
    """Best CPU time of each function, run alternately ``REPEATS`` times after a warm-up."""
    for f in fns:
        f()
    best = [float("inf")] * len(fns)
    for _ in range(REPEATS):
        for i, f in enumerate(fns):
            t = time.process_time()
            f()
            best[i] = min(best[i], time.process_time() - t)
    return best


def torchao_quantizers(x: np.ndarray) -> tuple[dict[tuple[str, str], Callable[[], object]], str]:
    """torchao callables keyed by (format, mode), or an empty dict and the reason."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import torch
            from torchao.prototype.mx_formats import constants
            from torchao.prototype.mx_formats.config import ScaleCalculationMode
            from torchao.prototype.mx_formats.mx_tensor import to_mx
            from torchao.prototype.mx_formats.nvfp4_tensor import (
                nvfp4_quantize,
                per_tensor_amax_to_scale,
            )
    except ImportError as e:
        return {}, f"torchao not importable ({e}); install torch and torchao to measure the ratio"
    torch.set_num_threads(1)
    t = torch.from_numpy(x)
    dtypes = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
              "e2m3": constants.DTYPE_FP6_E2M3, "e3m2": constants.DTYPE_FP6_E3M2,
              "e2m1": torch.float4_e2m1fn_x2}
    out: dict[tuple[str, str], Callable[[], object]] = {}
    for fmt, el in FORMATS.items():
        for mode in ("floor", "rceil"):
            m = ScaleCalculationMode(mode)
            out[fmt, mode] = lambda d=dtypes[el], m=m: to_mx(t, d, 32, m)
    out["nvfp4", "two_level"] = lambda: nvfp4_quantize(
        t, 16, per_tensor_amax_to_scale(torch.max(torch.abs(t))))
    out["nvfp4", "single_level"] = lambda: nvfp4_quantize(t, 16, None)
    return out, f"torch {torch.__version__}, torchao (threads: {torch.get_num_threads()})"


def report(shape: tuple[int, int]) -> None:
    """Print the table for one input shape."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ours: dict[tuple[str, str], Callable[[], object]] = {}
    for fmt in FORMATS:
        for mode in ("floor", "rceil"):
            ours[fmt, mode] = lambda f=fmt, m=mode: quantize_mx(x, f, scale_mode=m)
    for fmt in ("mxfp8_e4m3", "mxfp8_e5m2"):  # TRN3: no torchao counterpart
        ours[fmt, "trn3"] = lambda f=fmt: quantize_mx(x, f, scale_mode="trn3")
    ours["nvfp4", "two_level"] = lambda: quantize_nvfp4(x)
    ours["nvfp4", "single_level"] = lambda: quantize_nvfp4(x, scaling="single_level")
    theirs, note = torchao_quantizers(x)
    print(f"quantize {shape[0]}x{shape[1]} float32 N(0,1), best CPU time of {REPEATS}, "
          f"cpu count {os.cpu_count()}; reference: {note}")
    print(f"{'format':12s} {'mode':13s} {'trnkb M elem/s':>15s} {'torchao M elem/s':>17s} "
          f"{'ratio':>6s}")
    for key, f in ours.items():
        fns = [f] + ([theirs[key]] if key in theirs else [])
        rate = [x.size / s / 1e6 for s in best_seconds(fns)]
        ref = (f"{rate[1]:17.1f} {rate[0] / rate[1]:6.2f}" if len(rate) > 1
               else f"{'-':>17s} {'-':>6s}")
        print(f"{key[0]:12s} {key[1]:13s} {rate[0]:15.1f} {ref}")
    print()


def main() -> None:
    assert set(FORMATS.values()) <= set(MX_FORMATS.values())
    for shape in SHAPES:
        report(shape)


if __name__ == "__main__":
    main()
