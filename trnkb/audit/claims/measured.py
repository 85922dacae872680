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
``contradicted`` (with the gap to the nearest end) when it does not; ``unverifiable``
with the workload layer's own message when it cannot answer.

``args.model`` and ``args.system`` name KB ids (``specs/models.yaml``, ``racks.yaml``); they
are built with ``trnkb.workload.model(kb, id)`` / ``system(kb, id[, generation])``.
``per_chips: N`` divides a system-wide metric by N (training reports tokens/s for the
whole system). The result may give the metric by key or attribute; its value may be a
Quantity, a ``(low, high)`` pair, or an object or mapping with ``low``/``high`` (or
``lo``/``hi`` and a ``unit`` string, as :class:`trnkb.workload.Ranged`). That is the whole
contract with the workload layer.
"""

from __future__ import annotations

import inspect
import json
import weakref
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pint

from trnkb.audit.claims.operations import ClaimError
from trnkb.kb.expressions import Inputs
from trnkb.units import Q_, format_quantity, format_unit
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

CALLS = ("serve", "train")


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj[name]
    try:
        return obj[name]
    except (TypeError, KeyError, IndexError):
        return getattr(obj, name)


def _end(value: Any, which: str) -> Any:
    """``low``/``high`` of a range object or mapping (also ``lo``/``hi``), with its unit."""
    for name in (which, which[:2] if which == "high" else "lo"):
        try:
            v = _get(value, name)
        except (KeyError, AttributeError, TypeError):
            continue
        unit = None
        try:
            unit = _get(value, "unit")
        except (KeyError, AttributeError, TypeError):
            pass
        return (
            Q_(v, unit or "") if isinstance(unit, str) and not isinstance(v, pint.Quantity) else v
        )
    raise KeyError(which)


def _as_quantity(v: Any, unit: Quantity) -> Quantity:
    q = v if isinstance(v, pint.Quantity) else Q_(float(v), "")
    if q.dimensionality != unit.dimensionality:
        raise ValueError(f"the workload layer gave {q:~}, not comparable with {unit:~}")
    return q.to(unit.units)


def predicted_range(result: Any, metric: str, unit: Quantity) -> tuple[Quantity, Quantity]:
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
            lo, hi = _end(value, "low"), _end(value, "high")
        except (KeyError, AttributeError, TypeError):
            raise ValueError(f"{metric!r} is neither a quantity nor a range") from None
    lo, hi = sorted((_as_quantity(lo, unit), _as_quantity(hi, unit)), key=lambda q: q.magnitude)
    return lo, hi


def predicted_central(result: Any, metric: str, unit: Quantity) -> Quantity | None:
    """The central value of ``metric`` (its ``central`` or ``mid``), or None if it has none."""
    try:
        value = _get(result, metric)
    except (KeyError, AttributeError, TypeError):
        return None
    for name in ("central", "mid"):
        try:
            c = _get(value, name)
        except (KeyError, AttributeError, TypeError, IndexError):
            continue
        try:
            return _as_quantity(c, unit)
        except (ValueError, TypeError):
            return None
    return None


# Workload answers per KB object and question: a question asked twice (two metrics of
# one run) or by several views in one process (site build) is computed once.
_ANSWERS: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _cached_call(module: ModuleType, spec: dict[str, Any], kb: KnowledgeBase, where: str) -> Any:
    key = json.dumps([spec.get("call"), spec.get("args") or {}], sort_keys=True, default=str)
    try:
        memo = _ANSWERS.setdefault(kb, {})
    except TypeError:  # an object that cannot be weakly referenced: no cache
        return _call(module, spec, kb, where)
    if key not in memo:
        memo[key] = _call(module, spec, kb, where)
    return memo[key]


def _call(module: ModuleType, spec: dict[str, Any], kb: KnowledgeBase, where: str) -> Any:
    call = spec.get("call")
    if call not in CALLS:
        raise ClaimError(f"{where}: workload.call must be one of {', '.join(CALLS)}, got {call!r}")
    fn = getattr(module, call, None)
    if fn is None:
        raise LookupError(f"trnkb.workload has no {call}()")
    args = dict(spec.get("args") or {})
    _check_args(fn, args, kb, where)
    # model and system are named by KB id; the workload layer builds them from the KB
    if isinstance(args.get("model"), str) and hasattr(module, "model"):
        args["model"] = module.model(kb, args["model"])
    if isinstance(args.get("system"), str) and hasattr(module, "system"):
        gen = args.pop("generation", None)
        args["system"] = (
            module.system(kb, args["system"], gen) if gen else module.system(kb, args["system"])
        )
    try:
        params = inspect.signature(fn).parameters
        if "kb" in params and "kb" not in args:
            args["kb"] = kb
        if "curve" in params and "curve" not in args:
            args["curve"] = False
    except (TypeError, ValueError):
        pass
    return fn(**args)


def _check_args(fn: Any, args: dict[str, Any], kb: KnowledgeBase, where: str) -> None:
    """Refuse an argument the workload call does not take and a model that is not a KB
    row, with a near-miss suggestion (a typo must not turn a claim unverifiable)."""
    from trnkb.spec.specfile import suggest

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    names = [n for n in params if n != "kb"] + ["generation"]
    for name in args:
        if not takes_any and name not in names:
            raise ClaimError(f"{where}: workload.args: unknown argument {str(name)[:60]!r}"
                             f"{suggest(name, names)}")
    model = args.get("model")
    if isinstance(model, str) and "models" in kb.tables:
        ids = [str(i) for i in kb.table("models")["id"]]
        if model not in ids:
            raise ClaimError(f"{where}: workload.args.model: no model {model[:60]!r} in "
                             f"models.yaml{suggest(model, ids)}")


def evaluate_measured(
    item: dict[str, Any], kb: KnowledgeBase, claimed: Quantity, where: str
) -> tuple[tuple[Quantity, Quantity] | None, str, str, Inputs]:
    """(computed range or None, verdict, reason, inputs) for one measured claim."""
    spec = item.get("workload")
    if not isinstance(spec, dict) or not spec.get("metric"):
        raise ClaimError(f"{where}: a measured claim needs workload: {{call, args, metric}}")
    if not isinstance(item.get("measured"), dict):
        raise ClaimError(
            f"{where}: a measured claim needs measured: {{benchmark, system, model, chips, metric}}"
        )
    if spec.get("call") not in CALLS:
        raise ClaimError(f"{where}: workload.call must be one of {', '.join(CALLS)}")
    from trnkb import workload as module

    try:
        result = _cached_call(module, spec, kb, where)
        per = float(spec.get("per_chips", 1) or 1)
        lo, hi = predicted_range(result, str(spec["metric"]), claimed * per)
        lo, hi = lo / per, hi / per
        central = predicted_central(result, str(spec["metric"]), claimed * per)
    except ClaimError:
        raise
    except (LookupError, ValueError, TypeError, ArithmeticError, AttributeError) as e:
        msg = e.args[0] if e.args else type(e).__name__
        return None, "unverifiable", f"the workload layer could not answer: {msg}", []
    inputs: Inputs = [
        {
            "workload": spec.get("call"),
            "args": dict(spec.get("args") or {}),
            "metric": spec["metric"],
            "low": lo.magnitude,
            "high": hi.magnitude,
            "central": None if central is None else (central / per).to(lo.units).magnitude,
            "unit": format_unit(lo.units),
        }
    ]
    x = claimed.to(lo.units).magnitude
    if lo.magnitude <= x <= hi.magnitude:
        return (lo, hi), "supported", "", inputs
    nearest = lo if x < lo.magnitude else hi
    gap = (x - nearest.magnitude) / nearest.magnitude if nearest.magnitude else float("nan")
    side = "below" if x < lo.magnitude else "above"
    return (
        (lo, hi),
        "contradicted",
        (
            f"measured {format_quantity(claimed)} is {side} the predicted "
            f"range {format_quantity(lo)} to {format_quantity(hi)} ({gap:+.0%} from the "
            f"nearest end)"
        ),
        inputs,
    )
