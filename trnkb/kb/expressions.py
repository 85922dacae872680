"""The one expression evaluator: YAML data in, a quantity and its lineage out.

Derived-value declarations (:mod:`trnkb.kb.derive`, formulas of
:mod:`trnkb.kb.formulas`) and claims (:mod:`trnkb.audit.claims`) are two spellings of
the same thing, so both are evaluated here. An expression is a mapping with exactly one
operation key (``{ratio: [A, B]}``, ``{kb: trainium3.hbm_capacity}``,
``{calc: peak-flops, args: {...}}``) or a literal (a number, ``"144 GB"``, or a
quantity). Each operation is one row of :data:`OPERATIONS`; layers above the KB add
their own rows with :func:`register` (the judging layer registers ``topology`` and
``dtype``). There is no Python ``eval`` and no ladder of ``if``s.

Every operation appends what it read to ``inputs``, the lineage, one record per KB value
or calculator: ``{"kb": "ID.FIELD", "value", "unit", "source", "locator"}`` or
``{"calc": NAME, "formula", "args", "output"}``. Anything that cannot be evaluated
raises :class:`ExpressionError` with the expression path, never a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import pint

from trnkb.calc.derivation import quantity_json, unit_text
from trnkb.units import format_quantity, parse
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb.base import KnowledgeBase

Inputs: TypeAlias = list[dict[str, Any]]
"""The lineage an evaluation appends to: one record per KB value or calculator."""
Node: TypeAlias = dict[str, Any]
"""One expression: a mapping with exactly one operation key (YAML data, never code)."""


class ExpressionError(ValueError):
    """An expression that cannot be evaluated (the message names where, and why)."""


def unit_of(q: object) -> str | None:
    """The unit text of a Quantity, or None for a bare number."""
    if q is None or not isinstance(q, pint.Quantity) or q.dimensionless:
        return None
    return unit_text(q.units)


def literal(raw: object, where: str) -> Quantity:
    """A quantity, a number or a quantity string (``"144 GB"``) as a Quantity."""
    if isinstance(raw, pint.Quantity):
        return raw
    if isinstance(raw, bool):
        raise ExpressionError(f"{where}: expected a number or quantity, got {raw!r}")
    try:
        if isinstance(raw, (int, float)):  # NaN and infinity are refused as in spec values
            return parse(raw)
        return parse(str(raw))  # a plain number and a unit: never pint's expression evaluator
    except ValueError as e:
        raise ExpressionError(f"{where}: {e}") from None


@dataclass(frozen=True)
class Operation:
    """One row of the operations table: ``fn(arg, node, kb, inputs, where) -> Quantity``.

    ``kb`` is the knowledge base the ``kb`` and ``text`` operations read (None while the
    knowledge base is being built: derived declarations resolve their inputs first)."""

    name: str
    fn: Callable[[Any, Node, KnowledgeBase | None, Inputs, str], Quantity | str]
    extra_keys: tuple[str, ...] = ()
    doc: str = ""


OPERATIONS: dict[str, Operation] = {}


def register(*ops: Operation) -> None:
    """Add operations to the table (a layer above the KB adds its own this way)."""
    for op in ops:
        OPERATIONS[op.name] = op


def evaluate(node: object, kb: KnowledgeBase | None, inputs: Inputs,
             where: str = "compute") -> Quantity | str:
    """Evaluate one expression; ``inputs`` collects its lineage."""
    if not isinstance(node, dict):
        return literal(node, where)
    ops = [k for k in node if k in OPERATIONS]
    if len(ops) != 1:
        raise ExpressionError(f"{where}: expected exactly one of {', '.join(OPERATIONS)}, "
                              f"got {sorted(node)}")
    op = OPERATIONS[ops[0]]
    extra = set(node) - {op.name, *op.extra_keys}
    if extra:
        raise ExpressionError(f"{where}: unknown key(s) {sorted(extra)} for {op.name!r}")
    return op.fn(node[op.name], node, kb, inputs, where)


def _shown(node: object) -> str:
    return format_quantity(node) if isinstance(node, pint.Quantity) else repr(node)


def _lookup(arg: Any, node: Node, kb: KnowledgeBase | None, where: str,
            what: str) -> tuple[Any, Any]:
    """The KB value ``ID.FIELD`` names (from ``node``'s source if given) and its provenance."""
    from trnkb.calc.fromkb import ref

    row_id, _, fname = str(arg).partition(".")
    if not fname:
        raise ExpressionError(f"{where}: {what} reference {arg!r} is not ID.FIELD")
    if kb is None:
        raise ExpressionError(f"{where}: {what} reference {arg!r}: no knowledge base here")
    try:
        return ref(kb, row_id, fname, node.get("source"))
    except KeyError as e:
        raise ExpressionError(
            f"{where}: no KB value for {arg}: {e.args[0] if e.args else e}") from None


def _kb(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs, where: str) -> Quantity:
    value, prov = _lookup(arg, node, kb, where, "kb")
    if not isinstance(value, pint.Quantity):
        raise ExpressionError(f"{where}: {arg} is text ({value!r}), not a number")
    inputs.append({"kb": str(arg), **quantity_json(value, unit_of(value)),
                   "source": prov.get("source"), "locator": prov.get("locator")})
    return value


def _text(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs, where: str) -> str:
    value, prov = _lookup(arg, node, kb, where, "text")
    inputs.append({"kb": str(arg), "value": str(value), "unit": None,
                   "source": prov.get("source"), "locator": prov.get("locator")})
    return str(value)


def _calc(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs,
          where: str) -> Quantity:
    from trnkb.calc import run

    args = node.get("args") or {}
    if not isinstance(args, dict):
        raise ExpressionError(f"{where}: calc args must be a mapping")
    values = {k: evaluate(v, kb, inputs, f"{where}.{arg}.{k}") if isinstance(v, dict) else v
              for k, v in args.items()}
    try:
        res = run(str(arg), values)
        out = res.output(node.get("output", "value"))
    except ZeroDivisionError:
        raise ExpressionError(f"{where}: calculator {arg!r} divided by zero with "
                              f"{ {k: str(v) for k, v in values.items()} }") from None
    except (KeyError, ValueError, TypeError, ArithmeticError) as e:
        raise ExpressionError(f"{where}: {e.args[0] if e.args else e}") from None
    inputs.append({"calc": str(arg), "formula": res.derivation.formula,
                   "args": {k: (quantity_json(v) if isinstance(v, pint.Quantity) else v)
                            for k, v in values.items()},
                   "output": node.get("output", "value")})
    return out


def _operands(arg: Any, kb: KnowledgeBase | None, inputs: Inputs, where: str, op: str,
              n: int | None = None) -> list[Quantity]:
    if not isinstance(arg, list) or not arg:
        raise ExpressionError(f"{where}: {op} needs a list of operands")
    if n is not None and len(arg) != n:
        raise ExpressionError(f"{where}: {op} needs exactly {n} operands, got {len(arg)}")
    out = []
    for i, a in enumerate(arg):
        v = evaluate(a, kb, inputs, f"{where}.{op}[{i}]")
        if isinstance(v, str):
            raise ExpressionError(f"{where}.{op}[{i}]: text ({v!r}) where a number is needed")
        out.append(v)
    return out


def _arith(where: str, op: str, f: Callable[[], Quantity]) -> Quantity:
    try:
        out = f()
    except pint.DimensionalityError as e:
        raise ExpressionError(f"{where}: {op} of incompatible quantities ({e})") from None
    except ArithmeticError as e:  # an overflow
        raise ExpressionError(f"{where}: {op}: {e}") from None
    return out.to("") if out.dimensionless else out


def _ratio(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs,
           where: str) -> Quantity:
    num, den = _operands(arg, kb, inputs, where, "ratio", 2)
    if den.magnitude == 0:
        raise ExpressionError(f"{where}: ratio divides by zero: the denominator "
                              f"{_shown(arg[1])} evaluates to {den:~}")
    return _arith(where, "ratio", lambda: num / den)


def _difference(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs,
                where: str) -> Quantity:
    a, b = _operands(arg, kb, inputs, where, "difference", 2)
    return _arith(where, "difference", lambda: a - b)


def _product(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs,
             where: str) -> Quantity:
    vals = _operands(arg, kb, inputs, where, "product")
    return _arith(where, "product", lambda: math.prod(vals[1:], start=vals[0]))


def _sum(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs,
         where: str) -> Quantity:
    vals = _operands(arg, kb, inputs, where, "sum")
    return _arith(where, "sum", lambda: sum(vals[1:], start=vals[0]))


def _quantity(arg: Any, node: Node, kb: KnowledgeBase | None, inputs: Inputs,
              where: str) -> Quantity:
    return literal(arg, where)


register(
    Operation("kb", _kb, ("source",), "the preferred KB value of ID.FIELD (source: S picks S's)"),
    Operation("calc", _calc, ("args", "output"), "a calculator of trnkb.calc"),
    Operation("ratio", _ratio, (), "A / B (a zero B is an error, not inf)"),
    Operation("product", _product, (), "A x B x ..."),
    Operation("sum", _sum, (), "A + B + ..."),
    Operation("difference", _difference, (), "A - B"),
    Operation("quantity", _quantity, (), "a literal number or quantity"),
    Operation("text", _text, ("source",), "the preferred KB text of ID.FIELD (names, "
              "generations, topologies), compared with is/contains/lacks"),
)
