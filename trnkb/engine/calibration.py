"""Fixed costs fitted on measured Trainium3 GEMMs, and the held-out comparison.

The measurements are SemiAnalysis' OperatorX NKI GEMM sweeps on one LNC=2 logical
NeuronCore of a Trainium3 (``trnkb/engine/data/operatorx/``, compacted from the
InferenceX repository with source and licence in each file). **One file is the fitting
set** (:data:`FIT_FILE`); every other file is held out and never fitted.

The fit (:func:`fit`), in three steps, each on the fitting set only:

1. ``kernel_launch`` = median of ``total_time - total_active_time`` (profiler time
   outside the kernel's activity);
2. ``kernel_start_end``, ``output_block_cost`` and ``tensor_sustained``: least squares,
   on the relative error, of ``total_active_time ~ start_end + per_block x blocks +
   span / sustained``, where ``span`` is the engine's makespan at the clock-derived
   TensorE rate without fixed costs and ``blocks`` the 2048 x 1024 output blocks of
   the executed shape;
3. check (not fitted): the engine's TensorE busy time over the profiler's
   ``tensor_engine_active_time`` (``check_tensor_active_ratio``).

The result is data (``trnkb/engine/data/operatorx/fit.json``: constants, residual per
row, the fitted file); ``specs/cores.yaml`` carries the constants with that source.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from trnkb.engine.model import NeuronCore
from trnkb.engine.tiling import named_tiling

DATA_DIR = Path(__file__).with_name("data") / "operatorx"
FIT_FILE = "trn3_lnc2_gemm_sweep_20260731.json"
FIT_JSON = DATA_DIR / "fit.json"
BLOCK = ("output_block_rows", "output_block_cols")


@lru_cache(maxsize=16)
def _read(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA_DIR / name).read_text())
    return data


def load(name: str) -> list[dict[str, Any]]:
    """The rows of one OperatorX file (per-row medians of the profiler counters, µs)."""
    rows: list[dict[str, Any]] = _read(name)["rows"]
    return rows


def held_out_files() -> list[str]:
    """Every measurement file but the fitting set (the held-out files), sorted."""
    return sorted(p.name for p in DATA_DIR.glob("trn3_*.json") if p.name != FIT_FILE)


def _bare(core: NeuronCore) -> NeuronCore:
    """The core without fitted constants (clock-derived TensorE rate, no fixed costs)."""
    return replace(core, tensor_sustained=1.0, kernel_launch=None, kernel_start_end=None,
                   output_block_cost=None)


def _blocks(rows: int, cols: int, m: int, n: int) -> int:
    return math.ceil(m / rows) * math.ceil(n / cols)


def fit(core: NeuronCore, block: tuple[int, int] = (2048, 1024)) -> dict[str, Any]:
    """Fit the fixed costs on :data:`FIT_FILE` (see the module docstring); plain numbers."""
    from trnkb.engine.logical import gemm

    bare = _bare(core)
    rows = load(FIT_FILE)
    spans0, ratio, launch, active, blocks = [], [], [], [], []
    for r in rows:
        e = r["executed_shape"]
        res = gemm(bare, e["m"], e["k"], e["n"], execute=False, lnc=2, fixed_costs=False)
        spans0.append(res.seconds.to("us").magnitude)
        ratio.append(res.busy["tensor"].to("us").magnitude / 2 / r["tensor_engine_active_time_us"])
        launch.append(r["total_time_us"]["median"] - r["total_active_time_us"])
        active.append(r["total_active_time_us"])
        blocks.append(_blocks(*block, e["m"], e["n"]))
    # total_active ~ start_end + per_block x blocks + span0 / sustained, least squares on the
    # relative error (each row weighted by 1 / its measured time)
    y = np.asarray(active)
    x = np.column_stack([np.ones(len(y)), np.asarray(blocks, float), np.asarray(spans0)])
    (start_end, per_block, inv), *_ = np.linalg.lstsq(x / y[:, None], np.ones(len(y)),
                                                      rcond=None)
    sustained = 1.0 / float(inv)
    t_launch = statistics.median(launch)
    fitted = replace(bare, tensor_sustained=sustained)
    per_row = []
    for r, nb in zip(rows, blocks, strict=True):
        e = r["executed_shape"]
        res = gemm(fitted, e["m"], e["k"], e["n"], execute=False, lnc=2, fixed_costs=False)
        pred = res.seconds.to("us").magnitude + t_launch + start_end + per_block * nb
        meas = r["total_time_us"]["median"]
        per_row.append({"name": r["name"], "executed_shape": r["executed_shape"],
                        "blocks": nb, "measured_us": meas, "predicted_us": round(float(pred), 3),
                        "residual_us": round(float(pred - meas), 3)})
    res_us = [p["residual_us"] for p in per_row]
    return {
        "fitted_file": FIT_FILE,
        "held_out_files": held_out_files(),
        "method": "see trnkb.engine.calibration (module docstring)",
        "output_block": {"rows": block[0], "cols": block[1]},
        "constants": {"tensor_sustained": round(sustained, 4),
                      "kernel_launch_us": round(t_launch, 2),
                      "kernel_start_end_us": round(float(start_end), 2),
                      "output_block_cost_us": round(float(per_block), 3)},
        "check_tensor_active_ratio": round(statistics.median(ratio), 4),
        "residual_rms_us": round(float(np.sqrt(np.mean(np.square(res_us)))), 3),
        "residual_median_abs_relative": round(statistics.median(
            abs(p["residual_us"]) / p["measured_us"] for p in per_row), 5),
        "rows": per_row,
    }


def fit_summary() -> dict[str, Any]:
    """The stored fit (``fit.json``): constants, residuals, the fitted and held-out files."""
    data: dict[str, Any] = json.loads(FIT_JSON.read_text())
    return data


def predict_rows(core: NeuronCore, name: str) -> list[dict[str, Any]]:
    """Engine (``lnc=2``, the nkilib tiling, fixed costs) vs measured for each row of a file."""
    from trnkb.engine.logical import gemm

    out = []
    seen: dict[tuple[int, int, int], tuple[float, dict[str, int]]] = {}
    for r in load(name):
        s = r["shape"]
        tiling = named_tiling("nkilib-gemm-trn3-lnc2")
        key = tiling.executed(s["m"], s["k"], s["n"])
        if key not in seen:  # the time depends on the executed shape only
            res = gemm(core, *key, execute=False, lnc=2)
            seen[key] = (res.seconds.to("us").magnitude, res.params["executed_shape"])
        pred, executed = seen[key]
        meas = r["total_time_us"]["median"]
        out.append({"name": r["name"], "shape": s, "executed_shape": r["executed_shape"],
                    "engine_executed_shape": executed,
                    "measured_us": meas, "spread_us": (r["total_time_us"]["min"],
                                                       r["total_time_us"]["max"]),
                    "predicted_us": pred, "error": (pred - meas) / meas})
    return out
