"""Helpers the workload tests share: fixed step-model inputs and the ledger importer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def step_values(s: Any, precision: str = "fp8") -> dict[str, float]:
    """A system's ``precision`` inputs at their centrals, with the step model's
    efficiencies and latencies fixed to round values a test can compute by hand."""
    return {**{k: i.mid for k, i in s.inputs(precision).items()},
            "hbm_efficiency": 0.8, "gemm_efficiency": 0.5, "gemm_m_half": 100.0,
            "moe_imbalance": 1.0, "attention_efficiency": 0.5, "elementwise_fraction": 0.0,
            "collective_efficiency": 1.0, "scaleout_latency": 0.0,
            "collective_latency": 1e-5, "collective_latency_per_rank": 0.0,
            "serve_overlap": 0.0, "step_overhead": 1e-3, "layer_overhead": 2e-6}


def ledger_importer(monkeypatch: Any, files: dict[str, str]) -> Any:
    """``bench/import_ledger.py`` as a module, its git reads answered from ``files``."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import import_ledger as imp
    finally:
        sys.path.remove(str(ROOT / "bench"))
    monkeypatch.setattr(imp, "_git", lambda repo, commit, path, mirror: files[path])
    return imp
