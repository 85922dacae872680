"""Views over the reference engine: GEMM sweeps, per-engine busy time and timelines,
number-format errors and code points, W4A8."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import pandas as pd

from trnkb.kb import KnowledgeBase

if TYPE_CHECKING:  # the engine is optional for other views: imported where used
    import numpy as np

    from trnkb.engine.result import Result


def gemm_sweep(kb: KnowledgeBase, runs: Iterable[tuple[str, str]],
               sizes: Iterable[int]) -> pd.DataFrame:
    """Square GEMMs on one NeuronCore of the reference engine (cost only, no numerics).

    ``runs`` are ``(chip, dtype)`` pairs, ``sizes`` the m = k = n values. Returns ``chip,
    dtype, label, size, time_us, achieved_TFLOPS, peak_TFLOPS, utilization, bound_by
    (the engine the critical path waits on most), busiest (the engine busiest), hbm_MB,
    intensity_FLOP_per_B`` (FLOPs over HBM bytes moved).
    """
    from trnkb.engine import NeuronCore, gemm  # the engine is optional for other views

    out = []
    for chip, dtype in runs:
        core = NeuronCore.from_kb(kb, chip)
        for n in sizes:
            r = gemm(core, n, n, n, dtype=dtype, execute=False)
            out.append({
                "chip": chip, "dtype": dtype, "label": f"{chip} {dtype}", "size": n,
                "time_us": float(r.seconds.to("us").magnitude),
                "achieved_TFLOPS": float(r.achieved.to("TFLOPS").magnitude),
                "peak_TFLOPS": float(r.peak.to("TFLOPS").magnitude),
                "utilization": r.utilization, "bound_by": r.bound_by, "busiest": r.busiest,
                "hbm_MB": float(r.bytes["hbm"].to("MB").magnitude),
                "intensity_FLOP_per_B": float((r.flops / r.bytes["hbm"]).to("FLOP/B").magnitude),
            })
    return pd.DataFrame(out)


def engine_busy(results: Mapping[str, Result]) -> pd.DataFrame:
    """Per-engine busy time of engine results (``{label: trnkb.engine.Result}``), long:
    ``run, engine, busy_us, share`` (share of the run's makespan)."""
    out = []
    for label, r in results.items():
        total = r.seconds.to("us").magnitude
        out += [{"run": label, "engine": e, "busy_us": float(b.to("us").magnitude),
                 "share": float(b.to("us").magnitude / total)} for e, b in r.busy.items()]
    return pd.DataFrame(out)


def timeline_frame(result: Result, label: str = "") -> pd.DataFrame:
    """A result's instruction timeline in microseconds: ``run, engine, op, start_us, end_us``
    (runs of equal instructions expanded)."""
    t = result.timeline
    return pd.DataFrame({"run": label or result.chip, "engine": t["engine"], "op": t["op"],
                         "start_us": (t["start"] * 1e6).round(6),
                         "end_us": (t["end"] * 1e6).round(6)})


def format_errors(x: np.ndarray,
                  formats: Iterable[str] = ("mxfp8", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp4", "nvfp4"),
                  ) -> pd.DataFrame:
    """Quantize the same float32 array to each format (:mod:`trnkb.engine.numerics`) and
    measure the error against it.

    Returns ``format, bits_per_element`` (packed storage, scales included), ``rel_rms``,
    ``max_rel``, ``max_abs``.
    """
    from trnkb.engine import numerics

    out = []
    for f in formats:
        q = numerics.quantize_nvfp4(x) if f == "nvfp4" else numerics.quantize_mx(x, f)
        err = numerics.error_stats(x, q.dequantize())
        out.append({"format": f, "bits_per_element": q.nbytes * 8 / x.size, **err})
    return pd.DataFrame(out)


def code_points(elements: Iterable[str] = ("e2m1", "e2m3", "e3m2", "e4m3", "e5m2"),
                ) -> pd.DataFrame:
    """Every positive finite value of each element format: ``format, value, code``."""
    import numpy as np

    from trnkb.engine import numerics

    out = []
    for name in elements:
        fmt = numerics.ELEMENTS[name]
        codes = np.arange(2 ** (fmt.bits - 1), dtype=np.uint8)  # sign bit clear
        values = numerics.decode_element(codes, fmt)
        out += [{"format": name, "value": float(v), "code": int(c)}
                for c, v in zip(codes, values, strict=True) if np.isfinite(v) and v > 0]
    return pd.DataFrame(out)


def w4a8(kb: KnowledgeBase, chip: str, shapes: Iterable[tuple[int, int, int]]) -> pd.DataFrame:
    """MXFP8 GEMMs with MXFP8 weights (W8A8) and MXFP4 weights (W4A8) on one core of the
    reference engine: ``m, k, n, weights, hbm_MB, time_us, bound_by``."""
    from trnkb.engine import NeuronCore, gemm

    core = NeuronCore.from_kb(kb, chip)
    out = []
    for m, k, n in shapes:
        for label, w in (("W8A8", None), ("W4A8", "mxfp4")):
            r = gemm(core, m, k, n, dtype="mxfp8", weight_dtype=w, execute=False)
            out.append({"m": m, "k": k, "n": n, "weights": label,
                        "hbm_MB": float(r.bytes["hbm"].to("MB").magnitude),
                        "time_us": float(r.seconds.to("us").magnitude), "bound_by": r.bound_by})
    return pd.DataFrame(out)
