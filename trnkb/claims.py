"""The claims registry: published statements tested against the knowledge base.

``specs/claims.yaml`` lists one entry per statement::

    - id: trn3-hbm-capacity-from-stacks
      source: semianalysis-trn3            # a source id in sources.yaml
      locator: "Trainium3 Server Types and Specifications Overview"
      statement: Four 12-high stacks of 24 Gb dies make 144 GB.   # our paraphrase
      quantity: HBM capacity per Trainium3
      compute: {calc: hbm-capacity, args: {stacks: 4, stack-height: 12, die-density: 24 Gbit}}
      compare: "=="                        # ==, ~ (with tolerance), <, >, between
      claimed: 144 GB

``compute`` is an expression written as YAML data, never evaluated as code:

``{kb: ID.FIELD}``
    the preferred KB value (``source: S`` picks S's value)
``{calc: NAME, args: {...}}``
    a calculator of :mod:`trnkb.calc` (``output: X`` for a secondary output); an
    argument may itself be an expression
``{ratio: [A, B]}``, ``{product: [A, ...]}``, ``{sum: [A, ...]}``, ``{difference: [A, B]}``
    arithmetic on expressions
``{topology: {domain: D, generation: G, metric: M}}``
    a figure measured on the scale-up fabric graph
    (:func:`trnkb.topology.topology_metric`, e.g. hop counts)
``{quantity: "144 GB"}``
    a literal (also any bare number or quantity string)

The verdict follows at load: ``supported`` or ``contradicted``; an entry without
``compute`` must say why in ``reason`` and is ``unverifiable``. A computation that fails
(unknown id or field, missing KB value, wrong dimension) is an error reported by
:func:`validate_claims` (and ``trnkb validate``), never a silent ``unverifiable``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pint

from trnkb.calc import run
from trnkb.calc.derivation import quantity_json, unit_text
from trnkb.calc.fromkb import ref
from trnkb.schema import ID_PATTERN
from trnkb.specfile import LineDict, SpecError, display_path, item_line, read_yaml, show
from trnkb.topology import topology_metric
from trnkb.units import Q_, parse

VERDICTS = ("supported", "contradicted", "unverifiable")
COMPARISONS = ("==", "~", "<", ">", "between")
REQUIRED = ("id", "source", "locator", "statement", "quantity")
KEYS = set(REQUIRED) | {"compute", "compare", "claimed", "tolerance", "reason", "note"}
EXACT = 1e-9  # relative tolerance of "==" (floating point only)
OPERATORS = ("kb", "calc", "topology", "ratio", "product", "sum", "difference", "quantity")


class ClaimError(ValueError):
    """A claim that cannot be evaluated."""


@dataclass
class Claim:
    """One evaluated claim. ``computed``/``claimed`` are Quantities (``claimed`` is a
    pair for ``between``); ``inputs`` lists the KB values and calculators used."""

    id: str
    source: str
    locator: str
    statement: str
    quantity: str
    compare: str | None
    claimed: object
    computed: pint.Quantity | None
    verdict: str
    reason: str = ""
    tolerance: float | None = None
    note: str = ""
    inputs: list[dict] = field(default_factory=list)
    line: int = 0

    @property
    def relative_difference(self) -> float | None:
        if self.computed is None or self.compare == "between" or self.claimed is None:
            return None
        c = self.claimed.to(self.computed.units).magnitude
        return abs(self.computed.magnitude - c) / abs(c) if c else math.inf

    def to_dict(self) -> dict:
        def q(x):
            if x is None:
                return None
            if isinstance(x, tuple):
                return [quantity_json(v, _unit(v)) for v in x]
            return quantity_json(x, _unit(x))
        unit = _unit(self.claimed[0] if isinstance(self.claimed, tuple) else self.claimed)
        rel = self.relative_difference
        return {
            "id": self.id, "source": self.source, "locator": self.locator,
            "statement": self.statement, "quantity": self.quantity, "compare": self.compare,
            "tolerance": self.tolerance, "claimed": q(self.claimed),
            "computed": None if self.computed is None else quantity_json(self.computed, unit),
            "relative_difference": None if rel is None else round(rel, 6),
            "verdict": self.verdict, "reason": self.reason, "note": self.note,
            "inputs": self.inputs,
        }


def _unit(q) -> str | None:
    if q is None or not isinstance(q, pint.Quantity) or q.dimensionless:
        return None
    return unit_text(q.units)


def _literal(raw, where: str) -> pint.Quantity:
    if isinstance(raw, bool):
        raise ClaimError(f"{where}: expected a number or quantity, got {raw!r}")
    if isinstance(raw, (int, float)):
        return Q_(raw, "")
    try:
        q = parse(str(raw))
    except ValueError as e:
        raise ClaimError(f"{where}: {e}") from None
    return q if isinstance(q, pint.Quantity) else Q_(q, "")


def evaluate(node, kb, inputs: list[dict], where: str = "compute") -> pint.Quantity:
    """Evaluate one expression (see the module docstring); ``inputs`` collects lineage."""
    if not isinstance(node, dict):
        return _literal(node, where)
    ops = [k for k in node if k in OPERATORS]
    if len(ops) != 1:
        raise ClaimError(f"{where}: expected exactly one of {', '.join(OPERATORS)}, "
                         f"got {sorted(node)}")
    op = ops[0]
    extra = set(node) - {op, *{"kb": ("source",), "calc": ("args", "output")}.get(op, ())}
    if extra:
        raise ClaimError(f"{where}: unknown key(s) {sorted(extra)} for {op!r}")
    arg = node[op]
    if op == "quantity":
        return _literal(arg, where)
    if op == "kb":
        row_id, _, fname = str(arg).partition(".")
        if not fname:
            raise ClaimError(f"{where}: kb reference {arg!r} is not ID.FIELD")
        try:
            value, prov = ref(kb, row_id, fname, node.get("source"))
        except KeyError as e:
            raise ClaimError(f"{where}: no KB value for {arg}: {e.args[0] if e.args else e}") from None
        if not isinstance(value, pint.Quantity):
            raise ClaimError(f"{where}: {arg} is text ({value!r}), not a number")
        inputs.append({"kb": str(arg), **quantity_json(value, _unit(value)),
                       "source": prov.get("source"), "locator": prov.get("locator")})
        return value
    if op == "topology":
        if not isinstance(arg, dict) or set(arg) - {"domain", "generation", "metric"} \
                or not {"domain", "metric"} <= set(arg):
            raise ClaimError(f"{where}: topology needs {{domain, metric[, generation]}}")
        try:
            value = topology_metric(arg["domain"], arg.get("generation"), arg["metric"], kb)
        except (KeyError, ValueError) as e:
            raise ClaimError(f"{where}: {e.args[0] if e.args else e}") from None
        out = value if isinstance(value, pint.Quantity) else Q_(value, "")
        inputs.append({"topology": dict(arg), **quantity_json(out, _unit(out))})
        return out
    if op == "calc":
        args = node.get("args") or {}
        if not isinstance(args, dict):
            raise ClaimError(f"{where}: calc args must be a mapping")
        values = {k: evaluate(v, kb, inputs, f"{where}.{arg}.{k}") if isinstance(v, dict)
                  else v for k, v in args.items()}
        try:
            res = run(str(arg), values)
            out = res.output(node.get("output", "value"))
        except (KeyError, ValueError, TypeError) as e:
            raise ClaimError(f"{where}: {e.args[0] if e.args else e}") from None
        inputs.append({"calc": str(arg), "formula": res.derivation.formula,
                       "args": {k: (quantity_json(v) if isinstance(v, pint.Quantity) else v)
                                for k, v in values.items()},
                       "output": node.get("output", "value")})
        return out
    if not isinstance(arg, list) or not arg:
        raise ClaimError(f"{where}: {op} needs a list of operands")
    vals = [evaluate(a, kb, inputs, f"{where}.{op}[{i}]") for i, a in enumerate(arg)]
    try:
        if op == "ratio" or op == "difference":
            if len(vals) != 2:
                raise ClaimError(f"{where}: {op} needs exactly two operands")
            out = vals[0] / vals[1] if op == "ratio" else vals[0] - vals[1]
        elif op == "product":
            out = math.prod(vals[1:], start=vals[0])
        else:
            out = sum(vals[1:], start=vals[0])
    except pint.DimensionalityError as e:
        raise ClaimError(f"{where}: {op} of incompatible quantities ({e})") from None
    except ZeroDivisionError:
        raise ClaimError(f"{where}: {op} divides by zero") from None
    if not math.isfinite(out.magnitude):
        raise ClaimError(f"{where}: {op} gives {out.magnitude} (division by zero or overflow)")
    return out.to("") if out.dimensionless else out


def _compare(op: str, computed: pint.Quantity, claimed, tol: float | None) -> bool:
    def mag(q):
        return q.to(computed.units).magnitude

    c = computed.magnitude
    if op == "between":
        lo, hi = sorted((mag(claimed[0]), mag(claimed[1])))
        return lo <= c <= hi
    x = mag(claimed)
    if op == "==":
        return math.isclose(c, x, rel_tol=EXACT, abs_tol=1e-12)
    if op == "~":
        return abs(c - x) <= tol * abs(x)
    return c < x if op == "<" else c > x


def _evaluate_entry(item: LineDict, kb, source_ids: set[str], where: str) -> Claim:
    for key in item:
        if key not in KEYS:
            raise ClaimError(f"{where}: unknown key {key!r}")
    for key in REQUIRED:
        if not item.get(key):
            raise ClaimError(f"{where}: {key} missing")
    cid = str(item["id"])
    if not re.match(ID_PATTERN, cid):
        raise ClaimError(f"{where}: id {cid!r} is not lowercase kebab-case")
    if item["source"] not in source_ids:
        raise ClaimError(f"{where}: unknown source {item['source']!r} (not in sources.yaml)")
    common = dict(id=cid, source=str(item["source"]), locator=str(item["locator"]),
                  statement=str(item["statement"]).strip(), quantity=str(item["quantity"]),
                  note=str(item.get("note", "") or ""), line=item.line)
    op = item.get("compare")
    claimed = None
    if "claimed" in item:
        raw = item["claimed"]
        if op == "between":
            if not (isinstance(raw, list) and len(raw) == 2):
                raise ClaimError(f"{where}: between needs claimed: [low, high]")
            claimed = tuple(_literal(r, f"{where}.claimed") for r in raw)
        else:
            claimed = _literal(raw, f"{where}.claimed")
    if "compute" not in item:
        if not item.get("reason"):
            raise ClaimError(f"{where}: without compute, give the reason it is unverifiable")
        return Claim(**common, compare=op, claimed=claimed, computed=None,
                     verdict="unverifiable", reason=str(item["reason"]))
    if op not in COMPARISONS:
        raise ClaimError(f"{where}: compare must be one of {', '.join(COMPARISONS)}, got {op!r}")
    if claimed is None:
        raise ClaimError(f"{where}: claimed value missing")
    tol = item.get("tolerance")
    if op == "~" and not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise ClaimError(f"{where}: '~' needs a relative tolerance between 0 and 1")
    inputs: list[dict] = []
    computed = evaluate(item["compute"], kb, inputs, f"{where}.compute")
    first = claimed[0] if isinstance(claimed, tuple) else claimed
    if first.dimensionality != computed.dimensionality:
        raise ClaimError(f"{where}: claimed {first:~} and computed {computed:~} have "
                         f"different dimensions")
    if not first.dimensionless:
        computed = computed.to(first.units)
    ok = _compare(op, computed, claimed, tol)
    return Claim(**common, compare=op, claimed=claimed, computed=computed,
                 verdict="supported" if ok else "contradicted",
                 reason=str(item.get("reason", "") or ""), tolerance=tol, inputs=inputs)


def claims_path(kb) -> Path:
    return Path(kb.path) / "claims.yaml"


def evaluate_claims(kb, path: Path | None = None) -> tuple[list[Claim], list[str]]:
    """Evaluate every claim; returns (claims, errors as ``file:line: id: problem``)."""
    path = Path(path) if path is not None else claims_path(kb)
    if not path.exists():
        return [], []
    name = display_path(path)
    data = read_yaml(path)
    if not isinstance(data, list):
        return [], [f"{name}:1: (file): expected a list of claims"]
    source_ids = set(kb.sources["id"])
    claims, errors, seen = [], [], {}
    for i, item in enumerate(data):
        if not isinstance(item, LineDict):
            errors.append(f"{name}:{item_line(data, i)}: (claim): expected a mapping, "
                          f"got {show(item)}")
            continue
        cid = item.get("id", "(claim)")
        if cid in seen:
            errors.append(f"{name}:{item.line}: {cid}: duplicate claim id (first at line "
                          f"{seen[cid]})")
            continue
        seen[cid] = item.line
        try:
            claims.append(_evaluate_entry(item, kb, source_ids, f"{name}:{item.line}: {cid}"))
        except ClaimError as e:
            errors.append(str(e))
    return claims, errors


def validate_claims(kb, path: Path | None = None) -> list[Claim]:
    """Evaluate every claim; raise :class:`~trnkb.specfile.SpecError` listing each claim
    that fails to evaluate. Returns the evaluated claims."""
    claims, errors = evaluate_claims(kb, path)
    if errors:
        raise SpecError(errors)
    return claims


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    """One row per claim: id, source, verdict, claimed and computed (text with units)."""
    def txt(q):
        if q is None:
            return ""
        if isinstance(q, tuple):
            return " to ".join(txt(v) for v in q)
        d = quantity_json(q, _unit(q))
        return f"{d['value']:.6g} {d['unit']}".strip()

    rows = [{"id": c.id, "source": c.source, "verdict": c.verdict,
             "compare": c.compare or "", "claimed": txt(c.claimed), "computed": txt(c.computed),
             "relative_difference": c.relative_difference, "statement": c.statement,
             "reason": c.reason} for c in claims]
    return pd.DataFrame(rows, columns=["id", "source", "verdict", "compare", "claimed",
                                       "computed", "relative_difference", "statement", "reason"])
