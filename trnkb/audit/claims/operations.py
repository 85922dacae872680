"""The claim expression language as a table of operations.

A claim's ``compute`` is YAML data, never code. Each operation is one row of
:data:`OPERATIONS`: its name, the extra keys it accepts, and the function that evaluates
it. :func:`evaluate` looks the operation up and calls it; there is no ladder of ``if``s.

Every operation returns a pint Quantity (dimensionless for counts and ratios; ``text``
returns a string, compared with ``is``/``contains``/``lacks``) and
appends the KB values, calculators and graph measurements it used to ``inputs`` so a
verdict can show its lineage. Anything that cannot be evaluated (unknown id or field,
text where a number is needed, a zero denominator, incompatible dimensions) raises
:class:`ClaimError` with the expression path, never a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import pint

from trnkb.calc.derivation import quantity_json, unit_text
from trnkb.units import Q_, parse
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

Inputs: TypeAlias = list[dict[str, Any]]
"""The lineage an evaluation appends to: one dict per KB value, calculator or measurement."""
Node: TypeAlias = dict[str, Any]
"""One expression: a mapping with exactly one operation key (YAML data, never code)."""

__all__ = ["ClaimError", "OPERATIONS", "Operation", "evaluate", "literal"]


class ClaimError(ValueError):
    """A claim that cannot be evaluated (the message names the claim and the expression)."""


def unit_of(q: object) -> str | None:
    """The unit text of a Quantity, or None for a bare number."""
    if q is None or not isinstance(q, pint.Quantity) or q.dimensionless:
        return None
    return unit_text(q.units)


def literal(raw: object, where: str) -> Quantity:
    """A number or quantity string (``"144 GB"``) as a Quantity."""
    if isinstance(raw, bool):
        raise ClaimError(f"{where}: expected a number or quantity, got {raw!r}")
    if isinstance(raw, (int, float)):
        return Q_(raw, "")
    try:
        q = parse(str(raw))  # a plain number and a unit: never pint's expression evaluator
    except ValueError as e:
        raise ClaimError(f"{where}: {e}") from None
    return q


@dataclass(frozen=True)
class Operation:
    """One row of the operations table: ``fn(arg, node, kb, inputs, where) -> Quantity``."""

    name: str
    fn: Callable[[Any, Node, KnowledgeBase, Inputs, str], Quantity | str]
    extra_keys: tuple[str, ...] = ()
    doc: str = ""


def _lookup(arg: Any, node: Node, kb: KnowledgeBase, where: str, what: str) -> tuple[Any, Any]:
    """The KB value ``ID.FIELD`` names (from ``node``'s source if given) and its provenance."""
    from trnkb.calc.fromkb import ref

    row_id, _, fname = str(arg).partition(".")
    if not fname:
        raise ClaimError(f"{where}: {what} reference {arg!r} is not ID.FIELD")
    try:
        return ref(kb, row_id, fname, node.get("source"))
    except KeyError as e:
        raise ClaimError(f"{where}: no KB value for {arg}: {e.args[0] if e.args else e}") from None


def _kb(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
    value, prov = _lookup(arg, node, kb, where, "kb")
    if not isinstance(value, pint.Quantity):
        raise ClaimError(f"{where}: {arg} is text ({value!r}), not a number")
    inputs.append({"kb": str(arg), **quantity_json(value, unit_of(value)),
                   "source": prov.get("source"), "locator": prov.get("locator")})
    return value


def _topology(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
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


def _calc(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
    from trnkb.calc import run

    args = node.get("args") or {}
    if not isinstance(args, dict):
        raise ClaimError(f"{where}: calc args must be a mapping")
    values = {k: evaluate(v, kb, inputs, f"{where}.{arg}.{k}") if isinstance(v, dict) else v
              for k, v in args.items()}
    try:
        res = run(str(arg), values)
        out = res.output(node.get("output", "value"))
    except ZeroDivisionError:
        raise ClaimError(f"{where}: calculator {arg!r} divided by zero with "
                         f"{ {k: str(v) for k, v in values.items()} }") from None
    except (KeyError, ValueError, TypeError) as e:
        raise ClaimError(f"{where}: {e.args[0] if e.args else e}") from None
    inputs.append({"calc": str(arg), "formula": res.derivation.formula,
                   "args": {k: (quantity_json(v) if isinstance(v, pint.Quantity) else v)
                            for k, v in values.items()},
                   "output": node.get("output", "value")})
    return out


def _operands(arg: Any, kb: KnowledgeBase, inputs: Inputs, where: str, op: str,
              n: int | None = None) -> list[Quantity]:
    if not isinstance(arg, list) or not arg:
        raise ClaimError(f"{where}: {op} needs a list of operands")
    if n is not None and len(arg) != n:
        raise ClaimError(f"{where}: {op} needs exactly {n} operands, got {len(arg)}")
    out = []
    for i, a in enumerate(arg):
        v = evaluate(a, kb, inputs, f"{where}.{op}[{i}]")
        if isinstance(v, str):
            raise ClaimError(f"{where}.{op}[{i}]: text ({v!r}) where a number is needed")
        out.append(v)
    return out


def _arith(where: str, op: str, f: Callable[[], Quantity]) -> Quantity:
    try:
        out = f()
    except pint.DimensionalityError as e:
        raise ClaimError(f"{where}: {op} of incompatible quantities ({e})") from None
    return out.to("") if out.dimensionless else out


def _ratio(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
    num, den = _operands(arg, kb, inputs, where, "ratio", 2)
    if den.magnitude == 0:
        raise ClaimError(f"{where}: ratio divides by zero: the denominator {arg[1]!r} "
                         f"evaluates to {den:~}")
    return _arith(where, "ratio", lambda: num / den)


def _difference(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
    a, b = _operands(arg, kb, inputs, where, "difference", 2)
    return _arith(where, "difference", lambda: a - b)


def _product(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
    vals = _operands(arg, kb, inputs, where, "product")
    return _arith(where, "product", lambda: math.prod(vals[1:], start=vals[0]))


def _sum(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
    vals = _operands(arg, kb, inputs, where, "sum")
    return _arith(where, "sum", lambda: sum(vals[1:], start=vals[0]))


def _quantity(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
    return literal(arg, where)


def _text(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> str:
    value, prov = _lookup(arg, node, kb, where, "text")
    inputs.append({"kb": str(arg), "value": str(value), "unit": None,
                   "source": prov.get("source"), "locator": prov.get("locator")})
    return str(value)


DTYPE_METRICS = {"mantissa_bits": "nmant", "exponent_bits": "nexp", "bits": "bits",
                 "max": "max"}


def _dtype(arg: Any, node: Node, kb: KnowledgeBase, inputs: Inputs, where: str) -> Quantity:
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


OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    Operation("kb", _kb, ("source",), "the preferred KB value of ID.FIELD (source: S picks S's)"),
    Operation("calc", _calc, ("args", "output"), "a calculator of trnkb.calc"),
    Operation("topology", _topology, (), "a figure measured on a scale-up fabric graph"),
    Operation("ratio", _ratio, (), "A / B (a zero B is an error, not inf)"),
    Operation("product", _product, (), "A x B x ..."),
    Operation("sum", _sum, (), "A + B + ..."),
    Operation("difference", _difference, (), "A - B"),
    Operation("quantity", _quantity, (), "a literal number or quantity"),
    Operation("text", _text, ("source",), "the preferred KB text of ID.FIELD (names, "
              "generations, topologies), compared with is/contains/lacks"),
    Operation("dtype", _dtype, (), "a property of a number format from ml_dtypes "
              "(mantissa_bits, exponent_bits, bits, max)"),
)}


def evaluate(node: object, kb: KnowledgeBase, inputs: Inputs,
             where: str = "compute") -> Quantity | str:
    """Evaluate one expression; ``inputs`` collects its lineage."""
    if not isinstance(node, dict):
        return literal(node, where)
    ops = [k for k in node if k in OPERATIONS]
    if len(ops) != 1:
        raise ClaimError(f"{where}: expected exactly one of {', '.join(OPERATIONS)}, "
                         f"got {sorted(node)}")
    op = OPERATIONS[ops[0]]
    extra = set(node) - {op.name, *op.extra_keys}
    if extra:
        raise ClaimError(f"{where}: unknown key(s) {sorted(extra)} for {op.name!r}")
    return op.fn(node[op.name], node, kb, inputs, where)
