"""Measured evidence: a published benchmark run checked against the workload layer.

A ``kind: measured`` claim records a run (benchmark body or vendor, system, model,
configuration, metric) and the question to put to the workload layer::

    measured: {benchmark: MLPerf Inference v4.1, system: gb200-nvl72, model: llama-2-70b,
               chips: 72, scenario: offline, precision: fp4, metric: output tokens/s per chip}
    workload:
      call: serve                       # trnkb.workload.serve or trnkb.workload.train
      args: {model: llama-2-70b, system: gb200-nvl72, chips: 72, batch: 512,
             input_len: 1024, output_len: 1024, precision: fp4}
      metric: tokens_per_second_per_chip   # the field of the result to compare
    claimed: 12014 / s                  # the measurement (tokens are counts: 1/s)

The verdict is ``supported`` when the measurement falls in the predicted range,
``contradicted`` (with the gap to the nearest end) when it does not. ``trnkb.workload``
is imported lazily: when it is not installed the claim is ``unverifiable`` with the
reason "workload layer not available", never an error.

The result of ``call`` may give the metric as an attribute or a key; its value may be a
Quantity, a ``(low, high)`` pair, or an object or mapping with ``low``/``high`` (and
``central``). That is the whole contract with the workload layer.
"""

from __future__ import annotations

import importlib
import inspect

import pint

from trnkb.claims.operations import ClaimError
from trnkb.units import Q_

__all__ = ["CALLS", "WORKLOAD_MISSING", "evaluate_measured", "predicted_range"]

CALLS = ("serve", "train")
WORKLOAD_MISSING = "workload layer not available (trnkb.workload is not part of this build)"


def _get(obj, name):
    if isinstance(obj, dict):
        return obj[name]
    return getattr(obj, name)


def _as_quantity(v, unit) -> pint.Quantity:
    q = v if isinstance(v, pint.Quantity) else Q_(float(v), "")
    if q.dimensionality != unit.dimensionality:
        raise ValueError(f"the workload layer gave {q:~}, not comparable with {unit:~}")
    return q.to(unit.units)


def predicted_range(result, metric: str, unit: pint.Quantity) -> tuple[pint.Quantity,
                                                                        pint.Quantity]:
    """The (low, high) range of ``metric`` in ``result``, in the units of ``unit``."""
    try:
        value = _get(result, metric)
    except (KeyError, AttributeError, TypeError):
        raise ValueError(f"the workload result has no {metric!r}") from None
    if isinstance(value, (tuple, list)) and len(value) == 2:
        lo, hi = value
    elif isinstance(value, pint.Quantity) or isinstance(value, (int, float)):
        lo = hi = value
    else:
        try:
            lo, hi = _get(value, "low"), _get(value, "high")
        except (KeyError, AttributeError, TypeError):
            raise ValueError(f"{metric!r} is neither a quantity nor a range") from None
    lo, hi = sorted((_as_quantity(lo, unit), _as_quantity(hi, unit)), key=lambda q: q.magnitude)
    return lo, hi


def _call(module, spec: dict, kb, where: str):
    call = spec.get("call")
    if call not in CALLS:
        raise ClaimError(f"{where}: workload.call must be one of {', '.join(CALLS)}, "
                         f"got {call!r}")
    fn = getattr(module, call, None)
    if fn is None:
        raise LookupError(f"trnkb.workload has no {call}()")
    args = dict(spec.get("args") or {})
    # ids in a claim become the plain objects the workload layer takes (built from the KB)
    fromkb = importlib.import_module("trnkb.workload.fromkb")
    for name, build in (("model", fromkb.model), ("system", fromkb.system)):
        if isinstance(args.get(name), str):
            args[name] = build(kb, args[name])
    try:
        if "kb" in inspect.signature(fn).parameters and "kb" not in args:
            args["kb"] = kb
    except (TypeError, ValueError):
        pass
    return fn(**args)


def evaluate_measured(item, kb, claimed: pint.Quantity, where: str):
    """(computed range or None, verdict, reason, inputs) for one measured claim."""
    spec = item.get("workload")
    if not isinstance(spec, dict) or not spec.get("metric"):
        raise ClaimError(f"{where}: a measured claim needs workload: {{call, args, metric}}")
    if not isinstance(item.get("measured"), dict):
        raise ClaimError(f"{where}: a measured claim needs measured: {{benchmark, system, "
                         f"model, chips, metric}}")
    if spec.get("call") not in CALLS:
        raise ClaimError(f"{where}: workload.call must be one of {', '.join(CALLS)}")
    try:
        module = importlib.import_module("trnkb.workload")
    except ImportError:
        return None, "unverifiable", WORKLOAD_MISSING, []
    try:
        result = _call(module, spec, kb, where)
        lo, hi = predicted_range(result, str(spec["metric"]), claimed)
    except ClaimError:
        raise
    except (LookupError, ValueError, TypeError, ArithmeticError, AttributeError) as e:
        msg = e.args[0] if e.args else type(e).__name__
        return None, "unverifiable", f"the workload layer could not answer: {msg}", []
    inputs = [{"workload": spec.get("call"), "args": dict(spec.get("args") or {}),
               "metric": spec["metric"], "low": lo.magnitude, "high": hi.magnitude,
               "unit": f"{lo.units:~}"}]
    x = claimed.to(lo.units).magnitude
    if lo.magnitude <= x <= hi.magnitude:
        return (lo, hi), "supported", "", inputs
    nearest = lo if x < lo.magnitude else hi
    gap = (x - nearest.magnitude) / nearest.magnitude if nearest.magnitude else float("nan")
    side = "below" if x < lo.magnitude else "above"
    return (lo, hi), "contradicted", (f"measured {claimed:~.4g} is {side} the predicted "
                                      f"range {lo:~.4g} to {hi:~.4g} ({gap:+.0%} from the "
                                      f"nearest end)"), inputs
