"""Derived values: declared in the specs, computed at load, never typed.

A derived value is written as a *declaration*: the formula (a name from :data:`FORMULAS`
or a calculator from :mod:`trnkb.calc`) and its inputs, each a reference to another KB
value or a sourced literal::

    domain_bf16: {derive: product, kind: derived,
                  inputs: {chips: self.domain_size, per_chip: self.chip.dense_bf16}}
    cores: {derive: ratio, kind: derived, note: "2,592 cores over 36 CPUs",
            inputs: {numerator: {value: 2592, source: vendordeep-gb300, locator: "Summary"},
                     denominator: gb300-nvl72.host_cpus_per_rack}}

A reference is ``ROW.FIELD`` where ``ROW`` is an id or ``self`` (the declaring row), and
may follow reference fields on the way: ``self.chip.dense_bf16`` is the ``dense_bf16`` of
the chip this row's ``chip`` field names. An input reads the field's *preferred* value
(:mod:`trnkb.spec.prefer`), after every declaration of that field has been evaluated;
``ROW.FIELD@SOURCE`` reads the value a given source gives instead.

:func:`evaluate` takes the parsed facts and the declarations and returns the derived
facts; their ``inputs`` list every input with its value and source, so a derived figure
says where it came from. Bad declarations (unknown formula or input, a cycle, a result of
the wrong dimension, density or direction) are refused as ``file:line: id.field: problem``.
Nothing here uses Python ``eval``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pint

from trnkb.kb import expressions
from trnkb.kb.expressions import Inputs
from trnkb.kb.formulas import DIVISOR, FORMULAS
from trnkb.spec import attributes, prefer
from trnkb.units import parse, ureg
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.calc import Calculator
    from trnkb.kb.formulas import Formula

Record = dict[str, Any]  # a fact, a declaration or an input's provenance
Key = tuple[str, str]  # (row id, field)

DECLARATION_KEYS = {"derive", "inputs", "kind", "note", "qualifier", "density", "direction",
                    "preferred", "output"}


def _calculators() -> dict[str, Calculator]:
    from trnkb.calc import CALCULATORS

    return CALCULATORS


def parse_declaration(table: str, row_id: str, field: str, block: dict[str, Any], file: str,
                      line: int, source_ids: set[str]) -> tuple[Record | None, list[str]]:
    """Check one declaration block; return (declaration, errors)."""
    where = f"{file}:{line}: {row_id}.{field}"
    errors = []
    for key in block:
        if key not in DECLARATION_KEYS:
            errors.append(f"{where}: unknown key {key!r} in a declaration (a derived value has "
                          f"no value, source or locator: they come from its inputs)")
    if block.get("kind") != "derived":
        errors.append(f"{where}: a declaration must say 'kind: derived'")
    name = block.get("derive")
    if not isinstance(name, str) or (name not in FORMULAS and name not in _calculators()):
        # (calculators are imported only for a name that is not a formula)
        errors.append(f"{where}: unknown formula {name!r}; formulas are "
                      f"{', '.join(FORMULAS)} or a calculator ({', '.join(_calculators())})")
    inputs = block.get("inputs")
    if not isinstance(inputs, dict) or not inputs:
        errors.append(f"{where}: inputs must be a mapping of name -> ROW.FIELD or "
                      "{value, source, locator}")
        inputs = {}
    formula = FORMULAS.get(name) if isinstance(name, str) else None
    own = [k for k in inputs if not str(k).startswith(DIVISOR)]
    if formula is not None:
        if formula.params is None and len(inputs) < 2:
            errors.append(f"{where}: {name} needs two or more inputs")
        elif formula.params is not None and set(own) != set(formula.params):
            errors.append(f"{where}: {name} takes inputs {', '.join(formula.params)} (and "
                          f"divisors named {DIVISOR}...); got {', '.join(own) or 'none'}")
    parsed_inputs: dict[str, Record] = {}
    for key, raw in inputs.items():
        if not isinstance(key, str):
            errors.append(f"{where}: input name {key!r} is not text")
            continue
        if isinstance(raw, str):
            parts = raw.split(".")
            if len(parts) < 2 or not all(parts):
                errors.append(f"{where}: input {key}: {raw!r} is not ROW.FIELD")
                continue
            parsed_inputs[key] = {"ref": parts}
        elif isinstance(raw, dict):
            missing = [k for k in ("value", "source", "locator") if raw.get(k) in (None, "")]
            if missing:
                errors.append(f"{where}: input {key}: a literal needs value, source and locator "
                              f"(missing {', '.join(missing)})")
                continue
            if raw["source"] not in source_ids:
                errors.append(f"{where}: input {key}: unknown source {raw['source']!r}")
                continue
            try:
                q = parse(raw["value"])
            except Exception as e:  # one-line message from the one parser
                errors.append(f"{where}: input {key}: {e}")
                continue
            bad = attributes.check_literal(raw.get("density"), raw.get("direction"))
            if bad:
                errors.append(f"{where}: input {key}: {bad}")
                continue
            if raw.get("kind", "reported") not in ("reported", "estimate"):
                errors.append(f"{where}: input {key}: kind of a literal is reported or estimate")
                continue
            parsed_inputs[key] = {"literal": q, "source": raw["source"],
                                  "locator": str(raw["locator"]),
                                  "kind": raw.get("kind", "reported"),
                                  "density": raw.get("density", ""),
                                  "direction": raw.get("direction", "")}
        else:
            errors.append(f"{where}: input {key}: expected ROW.FIELD or {{value, source, "
                          f"locator}}, got {raw!r}")
    errors += [f"{where}: {p}" for p in attributes.check(table, field, block.get("density"),
                                                         block.get("direction"))]
    if "preferred" in block and not isinstance(block["preferred"], bool):
        errors.append(f"{where}: preferred must be true or false")
    if block.get("preferred") and not block.get("note"):
        errors.append(f"{where}: 'preferred: true' overrides the preference rule; "
                      "say why in note")
    if errors:
        return None, errors
    return {"table": table, "id": row_id, "field": field, "derive": name,
            "inputs": parsed_inputs, "output": block.get("output", "value"),
            "note": str(block.get("note", "") or ""),
            "qualifier": str(block.get("qualifier", "") or ""),
            "density": block.get("density"), "direction": block.get("direction"),
            "override": bool(block.get("preferred", False)), "file": file, "line": line}, []


class _Refused(Exception):
    pass


class _Need(Exception):
    """An input whose declarations have not been evaluated yet (evaluate those first)."""

    def __init__(self, key: Key) -> None:
        super().__init__(key)
        self.key = key


class _Evaluator:
    """Evaluates declarations in dependency order with an explicit stack (no recursion:
    a chain of any length written in any order is evaluated, never a RecursionError)."""

    def __init__(self, facts: Iterable[Record], declarations: Iterable[Record],
                 info: dict[str, tuple[int, str]], field_of: Callable[[str, str], object],
                 table_of: Callable[[str], str | None],
                 make_fact: Callable[[Record, Quantity], Record]) -> None:
        self.groups: dict[Key, list[Record]] = {}
        for f in facts:
            self.groups.setdefault((f["id"], f["field"]), []).append(f)
        self.pending: dict[Key, list[Record]] = {}
        for d in declarations:
            self.pending.setdefault((d["id"], d["field"]), []).append(d)
        self.info, self.field_of, self.table_of = info, field_of, table_of
        self.make_fact = make_fact
        self.derived: list[Record] = []
        self.errors: list[str] = []
        self.failed: set[Key] = set()

    def settle(self, start: Key) -> None:
        """Evaluate the declarations of ``start`` and, first, of every input they need."""
        stack = [start]
        while stack:
            key = stack[-1]
            decls = self.pending.get(key)
            if not decls:
                self.pending.pop(key, None)
                stack.pop()
                continue
            decl = decls[0]
            try:
                fact = self.compute(decl)
            except _Need as need:
                if need.key not in stack:
                    stack.append(need.key)
                    continue
                chain = " -> ".join(f"{i}.{f}" for i, f in stack[stack.index(need.key):])
                self.refuse(decl, f"cycle: {chain} -> {need.key[0]}.{need.key[1]}")
            except _Refused as e:
                self.refuse(decl, str(e))
            else:
                self.groups.setdefault(key, []).append(fact)
                self.derived.append(fact)
            decls.pop(0)

    def refuse(self, decl: Record, problem: str) -> None:
        self.errors.append(f"{decl['file']}:{decl['line']}: {decl['id']}.{decl['field']}: "
                           f"{problem}")
        self.failed.add((decl["id"], decl["field"]))

    def preferred(self, key: Key, decl: Record, ref: str) -> Record:
        """The preferred fact of ``(id, field)``; :class:`_Need` while declarations of it
        are still to be evaluated."""
        if self.pending.get(key):
            raise _Need(key)
        if key in self.failed and key not in self.groups:
            raise _Refused(f"input {ref} could not be derived (see its own error)")
        group = self.groups.get(key)
        if not group:
            raise _Refused(f"input {ref}: {key[0]} has no value for {key[1]!r}")
        # file order: reported facts first, then derived ones, as the loader orders them
        return group[prefer.choose(group, self.info)]

    def resolve(self, decl: Record, name: str, spec: Record) -> tuple[Quantity, Record]:
        if "literal" in spec:
            return spec["literal"], {"name": name, "source": spec["source"],
                                     "locator": spec["locator"], "kind": spec["kind"],
                                     "estimated": spec["kind"] == "estimate",
                                     "density": spec["density"],
                                     "direction": spec["direction"]}
        parts = spec["ref"]
        ref = ".".join(parts)
        row = decl["id"] if parts[0] == "self" else parts[0]
        for hop in parts[1:-1]:
            self.check_field(row, hop, ref)
            fact = self.preferred((row, hop), decl, ref)
            if isinstance(fact["value"], pint.Quantity):
                raise _Refused(f"input {ref}: {row}.{hop} is not a reference to a row")
            row = str(fact["value"])
        field, _, source = parts[-1].partition("@")
        self.check_field(row, field, ref)
        fact = self.preferred((row, field), decl, ref)
        if source:  # ROW.FIELD@SOURCE: the value that source gives, not the preferred one
            chosen = [f for f in self.groups[(row, field)] if f["source"] == source]
            if not chosen:
                raise _Refused(f"input {ref}: no value of {row}.{field} from {source!r}")
            fact = chosen[0]
        parts = [*parts[:-1], field]
        if not isinstance(fact["value"], pint.Quantity):
            raise _Refused(f"input {ref}: {row}.{parts[-1]} is text ({fact['value']!r}), "
                           "not a quantity")
        return fact["value"], {"name": name, "ref": f"{row}.{parts[-1]}",
                               "source": fact["source"], "locator": fact["locator"],
                               "kind": fact["kind"], "density": fact.get("density", ""),
                               "estimated": fact["kind"] == "estimate" or bool(
                                   fact.get("estimated")),
                               "direction": fact.get("direction", ""),
                               "sources": fact.get("input_sources") or [fact["source"]]}

    def check_field(self, row: str, field: str, ref: str) -> None:
        table = self.table_of(row)
        if table is None:
            raise _Refused(f"unknown input {ref}: no row {row!r}")
        if self.field_of(table, field) is None:
            raise _Refused(f"unknown input {ref}: table {table} has no field {field!r}")

    def compute(self, decl: Record) -> Record:
        values: dict[str, Quantity] = {}
        divisors: list[Quantity] = []
        inputs: list[Record] = []
        for name, spec in decl["inputs"].items():
            q, prov = self.resolve(decl, name, spec)
            inputs.append({**prov, "value": q})
            if name.startswith(DIVISOR):
                divisors.append(q)
            else:
                values[name] = q
        formula = FORMULAS.get(decl["derive"])
        if formula is not None and formula.needs:
            attr, want = formula.needs
            first = next(i for i in inputs if not i["name"].startswith(DIVISOR))
            if first.get(attr, "") != want:
                raise _Refused(f"{decl['derive']} needs a {want} input; "
                               f"{first.get('ref', first['name'])} is "
                               f"{first.get(attr, '') or 'not marked ' + want}")
        # one evaluator for declarations and claims: the formula (or calculator) as an
        # expression over the resolved inputs, then the divisors
        expr: Any = (formula.expression(values) if formula is not None else
                     {"calc": decl["derive"], "args": values, "output": decl["output"]})
        for q in divisors:
            if q.magnitude == 0:
                raise _Refused("cannot compute: a divisor (among...) is zero")
            expr = {"ratio": [expr, q]}
        lineage: Inputs = []
        try:
            value = expressions.evaluate(expr, None, lineage, f"cannot compute {decl['derive']}")
        except expressions.ExpressionError as e:
            raise _Refused(str(e)) from None
        assert not isinstance(value, str)  # no text operation in a formula
        calc = [i for i in lineage if "calc" in i]
        text = calc[0]["formula"] if calc else formula.text if formula else decl["derive"]
        if divisors:
            text += " / " + " / ".join(n for n in decl["inputs"] if n.startswith(DIVISOR))
        density, direction = self.attributes(decl, formula, inputs)
        fact = self.make_fact(decl, value)  # checks dimension and range; raises ValueError
        fact.update({"source": inputs[0]["source"], "density": density,
                     "estimated": any(i.get("estimated") for i in inputs),
                     "direction": direction, "inputs": inputs,
                     "input_sources": _unique(s for i in inputs for s in i.get("sources",
                                                                                [i["source"]])),
                     "formula": f"{decl['derive']}: {text}", "override": decl["override"]})
        return fact

    def attributes(self, decl: Record, formula: Formula | None, inputs: list[Record]
                   ) -> tuple[str, str]:
        table, field = self.table_of(decl["id"]), decl["field"]
        # (a row without a table has no defaults: "" is no table's name)
        want_density, want_direction = attributes.resolve(table or "", field, decl["density"],
                                                          decl["direction"])
        own = [i for i in inputs if not i["name"].startswith(DIVISOR)]
        got_density = formula.density if formula and formula.density else _combine(
            [i.get("density", "") for i in own], ("sparse", "unstated", "dense"))
        got_direction = formula.direction if formula and formula.direction else _combine(
            [i.get("direction", "") for i in own], ("bidirectional", "unstated",
                                                    "per-direction"))
        for attr, got, want in (("density", got_density, want_density),
                                ("direction", got_direction, want_direction)):
            if got and want and got != want and "unstated" not in (got, want):
                raise _Refused(f"wrong {attr}: the inputs give a {got} figure, the field "
                               f"holds {want} ones")
        return (want_density if want_density else "", want_direction if want_direction else "")


def _combine(values: list[str], order: tuple[str, ...]) -> str:
    for v in order:
        if v in values:
            return v
    return ""


def _unique(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for i in items:
        if i and i not in out:
            out.append(i)
    return out


def evaluate(facts: list[Record], declarations: list[Record], info: dict[str, tuple[int, str]],
             field_of: Callable[[str, str], object], table_of: Callable[[str], str | None],
             make_fact: Callable[[Record, Quantity], Record]
             ) -> tuple[list[Record], list[str]]:
    """Evaluate every declaration; return (derived facts, errors).

    ``facts`` are the parsed (typed) facts, ``declarations`` come from
    :func:`parse_declaration`, ``info`` from :func:`trnkb.spec.prefer.source_info`.
    ``field_of(table, field)`` gives the schema field or None, ``table_of(id)`` the table of
    a row or None, and ``make_fact(declaration, quantity)`` builds a fact row from a value
    (raising ``ValueError`` with the problem when the value has the wrong dimension or is
    implausible). The input facts are not modified.
    """
    ev = _Evaluator(facts, declarations, info, field_of, table_of, _guard(make_fact))
    while ev.pending:
        ev.settle(next(iter(ev.pending)))
    return ev.derived, ev.errors


def _guard(make_fact: Callable[[Record, Quantity], Record]
           ) -> Callable[[Record, Quantity], Record]:
    def make(decl: Record, value: Quantity) -> Record:
        try:
            return make_fact(decl, value)
        except ValueError as e:
            raise _Refused(str(e)) from None
        except (OverflowError, pint.DimensionalityError) as e:
            raise _Refused(f"result out of range ({e})") from None
    return make


def describe(fact: Record) -> str:
    """One line of lineage: ``formula; name = value [source] (ref), ...``."""
    from trnkb.units import format_quantity

    parts = []
    for i in fact.get("inputs", []):
        # full precision, unit spelled by the one formatter (Gbit/s, never pint's Gb / s)
        shown = format_quantity(i["value"], sig=15)
        parts.append(f"{i['name']} = {shown} [{i['source']}]" + (f" ({i['ref']})" if i.get(
            "ref") else ""))
    return f"{fact.get('formula', '')}; " + ", ".join(parts)


def fact_from_quantity(decl: Record, q: Quantity) -> Record:
    """A fact row for a derived value in its field's display unit (ValueError when the
    result does not fit the field: wrong dimension or implausible)."""
    from trnkb.spec.schema import TABLES
    from trnkb.units import DIMENSIONS, format_unit

    f = TABLES[decl["table"]].field(decl["field"])
    if f is None or f.kind not in ("quantity", "count"):
        raise ValueError(f"a {f.kind if f else 'unknown'} field cannot be derived")
    want = DIMENSIONS[f.dim] if f.kind == "quantity" else ""
    want_dim = ureg.get_dimensionality(want) if want else ureg.dimensionless.dimensionality
    if q.dimensionality != want_dim:
        got = str(q.dimensionality) if not q.dimensionless else "a plain number"
        raise ValueError(f"wrong dimension: the result is {got}, the field holds "
                         f"{want or 'a plain count'}")
    q = q.to(f.unit) if f.unit else q.to("")
    try:
        mag = float(f"{float(q.magnitude):.12g}")  # 900.0000000000001 is 900
    except OverflowError:
        mag = math.inf
    if not math.isfinite(mag):
        raise ValueError("result out of range (beyond what a 64-bit float holds)")
    if f.kind == "count" and math.isclose(mag, round(mag), rel_tol=1e-9):
        mag = float(round(mag))
        q = ureg.Quantity(int(mag), "")
    elif f.kind == "count" and f.integer:
        raise ValueError(f"a count must be a whole number, but the result is {mag:.6g}")
    else:
        q = ureg.Quantity(int(mag) if mag.is_integer() else mag, q.units)
    lo, hi = f.lo, f.hi
    if mag < 0:
        raise ValueError(f"negative result {mag:g} {f.unit}".rstrip())
    if lo is not None and hi is not None and not (lo <= mag <= hi):
        raise ValueError(f"implausible result {mag:g} {f.unit}: expected {lo:g} to "
                         f"{hi:g} {f.unit}".rstrip())
    unit = "" if q.dimensionless else format_unit(q.units)
    return {
        "table": decl["table"], "id": decl["id"], "field": decl["field"], "value": q,
        "magnitude": mag, "unit": unit, "canonical_unit": unit, "source": "",
        "locator": f"derived ({decl['derive']})", "kind": "derived", "preferred": False,
        "note": decl["note"], "qualifier": decl["qualifier"], "file": decl["file"],
        "line": decl["line"], "derivation": "",
    }


def derive_and_prefer(facts: list[Record], declarations: list[Record], sources: Any,
                      labels: dict[str, list[Record]], errors: list[str]) -> list[Record]:
    """The loader's derive step: evaluate every declaration, then mark the preferred value
    of every field by rule (:mod:`trnkb.spec.prefer`). Returns the derived facts; problems go
    to ``errors``. ``labels`` maps table -> row labels (each with its ``id``)."""
    from trnkb.spec.schema import TABLES

    info = prefer.source_info(sources)
    row_table = {x["id"]: name for name, rows in labels.items() for x in rows}
    derived, errs = evaluate(facts, declarations, info, lambda t, f: TABLES[t].field(f),
                             row_table.get, fact_from_quantity)
    errors += errs
    for fact in derived:
        fact["derivation"] = describe(fact)
    errors += prefer.override_errors(facts + derived)
    prefer.apply(facts + derived, info)
    return derived
