"""The answer of a workload question: ranged metrics, central breakdown, every input's basis."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from trnkb.workload.ranges import Input, Ranged, propagate


def check_positive(**values: object) -> None:
    """Refuse non-positive or non-finite numeric arguments with one line naming them."""
    for name, v in values.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be a positive number, not {v!r}")


@dataclass
class WorkloadResult:
    """Result of :func:`~trnkb.workload.train` or :func:`~trnkb.workload.serve`.

    ``metrics``: name -> :class:`Ranged`; ``breakdown``: every part at the central inputs
    (floats, seconds/bytes/FLOPs as named); ``inputs``: name -> :class:`Input`.
    """

    kind: str
    model: str
    system: str
    chips: int
    precision: str
    metrics: dict[str, Ranged]
    breakdown: dict[str, float]
    inputs: dict[str, Input]
    plan: object | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, kind: str, model: Any, system: Any, chips: int, precision: str,
              inputs: dict[str, Input],
              run: Callable[[dict[str, float]], dict[str, float]], metrics: dict[str, str],
              plan: object | None = None,
              settings: dict[str, Any] | None = None) -> WorkloadResult:
        ranged = propagate(run, inputs, metrics)
        central = run({k: i.mid for k, i in inputs.items()})
        notes = list(system.notes)
        if system.network.fabric is None:
            notes.append(f"scale-up: {system.network.scaleup_basis}")
        extra: dict[str, Any] = {"model_sources": dict(model.sources),
                                 "scaleup": system.network.scaleup_basis}
        if system.generation:
            extra["switch_generation"] = system.generation
        return cls(kind, model.id, system.id, chips, precision, ranged, central, dict(inputs), plan,
                   settings or {}, notes, extra)

    # names other modules use for our metrics (the claims registry's measured evidence)
    ALIASES = {"tokens_per_second_per_chip": "tokens_per_s_per_chip", "mfu": "achieved_mfu",
               "tokens_per_second": "tokens_per_s"}

    def __getitem__(self, metric: str) -> Ranged:
        return self.metrics[self.ALIASES.get(metric, metric)]

    def __getattr__(self, name: str) -> Ranged:
        metrics = self.__dict__.get("metrics") or {}
        key = self.ALIASES.get(name, name)
        if key in metrics:
            return cast(Ranged, metrics[key])
        raise AttributeError(name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: central, low, high, the inputs moving each metric, every input's basis."""
        out: dict[str, Any] = {"kind": self.kind, "model": self.model, "system": self.system,
                               "chips": self.chips, "precision": self.precision,
                               "settings": self.settings}
        if self.plan is not None:
            out["plan"] = self.plan.label if hasattr(self.plan, "label") else str(self.plan)
        out["metrics"] = {k: r.to_dict() for k, r in self.metrics.items()}
        out["central_breakdown"] = {k: _num(v) for k, v in self.breakdown.items()}
        out["inputs"] = {k: _input(i) for k, i in self.inputs.items()}
        out["notes"] = self.notes
        out.update(self.extra)
        return out


def _num(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return float(f"{x:.6g}") if isinstance(x, float) else x


def _input(i: Input) -> dict[str, Any]:
    d = i.to_dict()
    for k in ("central", "low", "high"):
        d[k] = _num(float(d[k]))
    return d
