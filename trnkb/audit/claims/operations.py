"""The operations claims add to the one expression evaluator (:mod:`trnkb.kb.expressions`).

A claim's ``compute`` is YAML data, never code, evaluated by
:func:`trnkb.kb.expressions.evaluate` (the evaluator derived values use too). The judging
layer registers the two operations that need more than the KB: ``topology`` (a figure
measured on a scale-up fabric graph) and ``dtype`` (a number format's property).

Every operation returns a pint Quantity (dimensionless for counts and ratios; ``text``
returns a string, compared with ``is``/``contains``/``lacks``) and
appends the KB values, calculators and graph measurements it used to ``inputs`` so a
verdict can show its lineage. Anything that cannot be evaluated (unknown id or field,
text where a number is needed, a zero denominator, incompatible dimensions) raises
:class:`ClaimError` with the expression path, never a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pint

from trnkb.calc.derivation import quantity_json
from trnkb.kb.expressions import (
    ExpressionError,
    Inputs,
    Node,
    Operation,
    register,
    unit_of,
)
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

ClaimError = ExpressionError
"""A claim that cannot be evaluated (the message names the claim and the expression)."""


def _topology(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs,
              where: str) -> Quantity:
    from trnkb.topology import topology_metric

    if not isinstance(arg, dict) or set(arg) - {"domain", "generation", "metric"} \
            or not {"domain", "metric"} <= set(arg):
        raise ClaimError(f"{where}: topology needs {{domain, metric[, generation]}}")
    try:
        value = topology_metric(arg["domain"], arg.get("generation"), arg["metric"], kb)
    except (KeyError, ValueError) as e:
        raise ClaimError(f"{where}: {e.args[0] if e.args else e}") from None
    out = value if isinstance(value, pint.Quantity) else Q_(value, "")
    inputs.append({"topology": dict(arg), **quantity_json(out, unit_of(out))})
    return out


DTYPE_METRICS = {"mantissa_bits": "nmant", "exponent_bits": "nexp", "bits": "bits",
                 "max": "max"}


def _dtype(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs,
              where: str) -> Quantity:
    import ml_dtypes
    import numpy as np

    if not isinstance(arg, dict) or set(arg) != {"name", "metric"} \
            or arg["metric"] not in DTYPE_METRICS:
        raise ClaimError(f"{where}: dtype needs {{name, metric}} with metric one of "
                         f"{', '.join(DTYPE_METRICS)}")
    try:
        # ml_dtypes.finfo is unannotated
        info = ml_dtypes.finfo(getattr(ml_dtypes, str(arg["name"])))  # type: ignore[no-untyped-call]
    except (AttributeError, TypeError, ValueError):
        raise ClaimError(f"{where}: ml_dtypes has no floating type {arg['name']!r}") from None
    value = float(np.float64(getattr(info, DTYPE_METRICS[arg["metric"]])))
    inputs.append({"dtype": dict(arg), "value": value, "unit": None,
                   "source": f"ml_dtypes {ml_dtypes.__version__}"})
    return Q_(value, "")


register(
    Operation("topology", _topology, (), "a figure measured on a scale-up fabric graph"),
    Operation("dtype", _dtype, (), "a property of a number format from ml_dtypes "
              "(mantissa_bits, exponent_bits, bits, max)"),
)
