"""The claims registry: published statements tested against the knowledge base.

``specs/claims.yaml`` lists one entry per statement; ``specs/claims/tools.yaml`` (other
tools' constants) and ``specs/claims/measured.yaml`` (benchmark results) hold more, each
as ``{sources: [...], claims: [...]}`` so the sources they cite live beside them::

    - id: trn3-hbm-capacity-from-stacks
      source: semianalysis-trn3            # a source id (sources.yaml or the file's own)
      locator: "Trainium3 Server Types and Specifications Overview"
      statement: Four 12-high stacks of 24 Gb dies make 144 GB.   # our paraphrase
      quantity: HBM capacity per Trainium3
      compute: {calc: hbm-capacity, args: {stacks: 4, stack-height: 12, die-density: 24 Gbit}}
      compare: "=="                        # ==, ~ (with tolerance and why), <, >, <=, >=, between
      claimed: 144 GB

``compute`` is an expression written as YAML data (:mod:`trnkb.audit.claims.operations`).
``compare: "~"`` needs ``tolerance`` (relative, 0-1) and ``why`` (the reason for that
tolerance, e.g. "one-digit headline: 5%"). ``kind: measured`` entries are checked against
the workload layer's predicted range (:mod:`trnkb.audit.claims.measured`). ``tool:`` records the
file, version and key of another tool's constant.

The verdict follows at load: ``supported`` or ``contradicted``; an entry without
``compute`` must say why in ``reason`` and is ``unverifiable``. A computation that fails
(unknown id or field, missing KB value, zero denominator, wrong dimension) is an error
reported by :func:`validate_claims` (and ``trnkb validate``), never a silent verdict.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from trnkb.audit.claims import memo
from trnkb.audit.claims.capabilities import reason_now
from trnkb.audit.claims.files import claim_files, read_claim_file
from trnkb.audit.claims.operations import ClaimError
from trnkb.calc.derivation import quantity_json
from trnkb.kb.expressions import Inputs, evaluate, literal, unit_of
from trnkb.spec.fields import ID_PATTERN
from trnkb.spec.specfile import (
    LineDict,
    SpecError,
    display_path,
    item_line,
    show,
)

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

ClaimValue: TypeAlias = Any
"""A claimed or computed value: a Quantity, a (low, high) pair of Quantities, text, or None."""

VERDICTS = ("supported", "contradicted", "unverifiable")
EXACT = 1e-9  # relative tolerance of "==" (floating point only)
KINDS = ("statement", "tool", "measured", "tco")
REQUIRED = ("id", "source", "locator", "statement", "quantity")
KEYS = set(REQUIRED) | {
    "compute",
    "compare",
    "claimed",
    "tolerance",
    "why",
    "reason",
    "note",
    "kind",
    "tool",
    "measured",
    "workload",
    "tco",
}


def _between(c: float, claimed: tuple[float, float], tol: float | None) -> bool:
    lo, hi = sorted(claimed)
    return lo <= c <= hi


# The comparison table: op -> (test(computed, claimed, tolerance), needs a tolerance)
COMPARATORS: dict[str, tuple[Callable[[Any, Any, Any], bool], bool]] = {
    "==": (lambda c, x, tol: math.isclose(c, x, rel_tol=EXACT, abs_tol=1e-12), False),
    "~": (lambda c, x, tol: abs(c - x) <= tol * abs(x), True),
    "<": (lambda c, x, tol: c < x, False),
    ">": (lambda c, x, tol: c > x, False),
    "<=": (lambda c, x, tol: c <= x, False),
    ">=": (lambda c, x, tol: c >= x, False),
    "between": (_between, False),
}
# Text comparisons (case-insensitive), for names, generations, topologies and vendors.
TEXT_COMPARATORS: dict[str, Callable[[str, str], bool]] = {
    "is": lambda c, x: c.strip().lower() == x.strip().lower(),
    "contains": lambda c, x: x.strip().lower() in c.lower(),
    "lacks": lambda c, x: x.strip().lower() not in c.lower(),
}
COMPARISONS = tuple(COMPARATORS) + tuple(TEXT_COMPARATORS)


@dataclass
class Claim:
    """One evaluated claim. ``computed``/``claimed`` are Quantities (``claimed`` is a
    pair for ``between``; ``computed`` is a (low, high) pair for a measured claim);
    ``inputs`` lists the KB values and calculators used."""

    id: str
    source: str
    locator: str
    statement: str
    quantity: str
    compare: str | None
    claimed: ClaimValue
    computed: ClaimValue
    verdict: str
    reason: str = ""
    tolerance: float | None = None
    why: str = ""
    note: str = ""
    kind: str = "statement"
    tool: dict[str, Any] = field(default_factory=dict)
    measured: dict[str, Any] = field(default_factory=dict)
    inputs: Inputs = field(default_factory=list)
    file: str = "claims.yaml"
    line: int = 0

    @property
    def relative_difference(self) -> float | None:
        """|computed - claimed| / |claimed| (for a measured claim: the gap to the nearest
        end of the predicted range, relative to the measurement); None when undefined
        (no computed value, a ``between`` claim, or a claimed value of zero)."""
        if (
            self.computed is None
            or self.claimed is None
            or self.compare == "between"
            or isinstance(self.claimed, str)
        ):
            return None
        if isinstance(self.computed, tuple):
            lo, hi = (v.to(self.claimed.units).magnitude for v in self.computed)
            x = self.claimed.magnitude
            gap = 0.0 if lo <= x <= hi else min(abs(x - lo), abs(x - hi))
            return gap / abs(x) if x else None
        c = self.claimed.to(self.computed.units).magnitude
        return abs(self.computed.magnitude - c) / abs(c) if c else None

    def to_dict(self) -> dict[str, Any]:
        def q(x: ClaimValue, unit: str | None = None) -> Any:
            if x is None or isinstance(x, str):
                return x
            if isinstance(x, tuple):
                return [quantity_json(v, unit or unit_of(v)) for v in x]
            return quantity_json(x, unit or unit_of(x))

        first = self.claimed[0] if isinstance(self.claimed, tuple) else self.claimed
        first = None if isinstance(first, str) else first
        rel = self.relative_difference
        return {
            "id": self.id,
            "kind": self.kind,
            "source": self.source,
            "locator": self.locator,
            "statement": self.statement,
            "quantity": self.quantity,
            "compare": self.compare,
            "tolerance": self.tolerance,
            "why": self.why,
            "claimed": q(self.claimed),
            "computed": q(self.computed, unit_of(first)),
            "relative_difference": None if rel is None else round(rel, 6),
            "verdict": self.verdict,
            "reason": self.reason,
            "note": self.note,
            "tool": self.tool,
            "measured": self.measured,
            "inputs": self.inputs,
        }


def _check_shape(item: LineDict, source_ids: set[str], where: str) -> str:
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
        raise ClaimError(
            f"{where}: unknown source {item['source']!r} (not in sources.yaml "
            f"nor in the file's sources)"
        )
    kind = item.get("kind", "statement")
    if kind not in KINDS:
        raise ClaimError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "tool" and not isinstance(item.get("tool"), dict):
        raise ClaimError(f"{where}: a tool claim needs tool: {{name, version, file, key}}")
    return cid


def _claimed(item: LineDict, op: object, where: str, kb: KnowledgeBase) -> ClaimValue:
    if "claimed" not in item:
        return None
    raw = item["claimed"]
    if isinstance(raw, dict):  # a figure the source gives as arithmetic (865,000 / 72 chips)
        value = evaluate(raw, kb, [], f"{where}.claimed")
        if isinstance(value, str):
            raise ClaimError(f"{where}: claimed must be a quantity, got text")
        return value
    if op == "between":
        if not (isinstance(raw, list) and len(raw) == 2):
            raise ClaimError(f"{where}: between needs claimed: [low, high]")
        return tuple(literal(r, f"{where}.claimed") for r in raw)
    return literal(raw, f"{where}.claimed")


def _evaluate_entry(
    item: LineDict, kb: KnowledgeBase, source_ids: set[str], where: str, file: str
) -> Claim:
    cid = _check_shape(item, source_ids, where)
    kind = str(item.get("kind", "statement"))
    common: dict[str, Any] = dict(
        id=cid,
        source=str(item["source"]),
        locator=str(item["locator"]),
        statement=" ".join(str(item["statement"]).split()),
        quantity=str(item["quantity"]),
        note=str(item.get("note", "") or ""),
        kind=kind,
        tool=dict(item.get("tool") or {}),
        measured=dict(item.get("measured") or {}),
        why=str(item.get("why", "") or ""),
        file=file,
        line=item.line,
    )
    op = item.get("compare")
    if op in TEXT_COMPARATORS and "compute" in item:
        return _evaluate_text(item, kb, op, common, where)
    claimed = _claimed(item, op, where, kb)
    if kind == "tco":  # two systems' ranges compared (trnkb.audit.claims.tco)
        from trnkb.audit.claims.tco import evaluate_tco

        ratio, verdict, reason, lineage = evaluate_tco(item, kb, where, claimed)
        return Claim(**common, compare=str(op), claimed=claimed, computed=ratio,
                     verdict=verdict, reason=reason, tolerance=item.get("tolerance"),
                     inputs=lineage)
    if kind == "measured":
        from trnkb.audit.claims.measured import evaluate_measured

        if claimed is None:
            raise ClaimError(f"{where}: a measured claim needs claimed: (the measurement)")
        predicted, verdict, reason, lineage = evaluate_measured(item, kb, claimed, where)
        return Claim(
            **common,
            compare="in range",
            claimed=claimed,
            computed=predicted,
            verdict=verdict,
            reason=reason,
            inputs=lineage,
        )
    if "compute" not in item:
        if not item.get("reason"):
            raise ClaimError(f"{where}: without compute, give the reason it is unverifiable")
        return Claim(
            **common,
            compare=op,
            claimed=claimed,
            computed=None,
            verdict="unverifiable",
            reason=reason_now(str(item["reason"]), kb),
        )
    if op not in COMPARATORS:
        raise ClaimError(f"{where}: compare must be one of {', '.join(COMPARISONS)}, got {op!r}")
    if claimed is None:
        raise ClaimError(f"{where}: claimed value missing")
    test, needs_tol = COMPARATORS[op]
    tol = item.get("tolerance")
    if needs_tol:
        if not (isinstance(tol, (int, float)) and not isinstance(tol, bool) and 0 < tol < 1):
            raise ClaimError(f"{where}: '~' needs a relative tolerance between 0 and 1")
        if not common["why"]:
            raise ClaimError(
                f'{where}: tolerance {tol} needs a why (e.g. "one-digit headline: 5%")'
            )
    inputs: Inputs = []
    computed = evaluate(item["compute"], kb, inputs, f"{where}.compute")
    if isinstance(computed, str):
        raise ClaimError(f"{where}: '{op}' compares numbers, but compute gave text {computed!r}")
    first = claimed[0] if isinstance(claimed, tuple) else claimed
    if first.dimensionality != computed.dimensionality:
        raise ClaimError(
            f"{where}: claimed {first:~} and computed {computed:~} have different dimensions"
        )
    if not first.dimensionless:
        computed = computed.to(first.units)
    x = (
        tuple(v.to(computed.units).magnitude for v in claimed)
        if isinstance(claimed, tuple)
        else claimed.to(computed.units).magnitude
    )
    ok = test(computed.magnitude, x, tol)
    return Claim(
        **common,
        compare=op,
        claimed=claimed,
        computed=computed,
        verdict="supported" if ok else "contradicted",
        reason=str(item.get("reason", "") or ""),
        tolerance=tol,
        inputs=inputs,
    )


def _evaluate_text(
    item: LineDict, kb: KnowledgeBase, op: str, common: dict[str, Any], where: str
) -> Claim:
    raw = item.get("claimed")
    if not isinstance(raw, str) or not raw.strip():
        raise ClaimError(f"{where}: '{op}' needs claimed: some text")
    inputs: Inputs = []
    computed = evaluate(item["compute"], kb, inputs, f"{where}.compute")
    if not isinstance(computed, str):
        raise ClaimError(f"{where}: '{op}' compares text, but compute gave {computed:~}")
    ok = TEXT_COMPARATORS[op](computed, raw)
    return Claim(
        **common,
        compare=op,
        claimed=raw,
        computed=computed,
        verdict="supported" if ok else "contradicted",
        reason=str(item.get("reason", "") or ""),
        inputs=inputs,
    )


def evaluate_claims(kb: KnowledgeBase, path: Path | None = None) -> tuple[list[Claim], list[str]]:
    """Evaluate every claim; returns (claims, errors as ``file:line: id: problem``).

    Remembered per knowledge base and content (:mod:`trnkb.audit.claims.memo`: the specs,
    the claim files and trnkb's code); each call gets its own lists."""
    files = [p for p in claim_files(kb, path) if p.exists()]
    claims, errors = memo.remembered(kb, Path(kb.path), files,
                                     lambda: _evaluate_files(kb, files))
    errors = list(errors)
    if path is None:  # the record files beside the registry, read afresh (never remembered)
        errors += _record_file_errors(kb)
    return list(claims), errors


#: claim kinds evaluated by running the workload layer (seconds each, not microseconds)
SLOW_KINDS = ("measured", "tco")


def _evaluate_files(kb: KnowledgeBase, files: list[Path]) -> tuple[list[Claim], list[str]]:
    source_ids = set(kb.sources["id"])
    errors: list[str] = []
    seen: dict[str, str] = {}
    entries: list[tuple[LineDict, str, str]] = []
    for p in files:
        items, sources, errs = read_claim_file(p)
        errors += errs
        source_ids |= {str(s.get("id")) for s in sources if isinstance(s, dict)}
        name = display_path(p)
        for i, item in enumerate(items):
            if not isinstance(item, LineDict):
                errors.append(
                    f"{name}:{item_line(items, i)}: (claim): expected a mapping, got {show(item)}"
                )
                continue
            cid = item.get("id", "(claim)")
            if cid in seen:
                errors.append(
                    f"{name}:{item.line}: {cid}: duplicate claim id (first at {seen[cid]})"
                )
                continue
            seen[cid] = f"{name}:{item.line}"
            entries.append((item, f"{name}:{item.line}: {cid}", name))
    # Cheap claims first; the ones that run the workload layer (measured, tco) only when
    # everything else is valid, so a typo is refused in about a second, not after minutes
    # of plan searches. File order is kept in the result.
    slow = [str(e[0].get("kind", "")) in SLOW_KINDS for e in entries]
    done: dict[int, Claim] = {}
    for stage in (False, True):
        if stage and errors:
            break
        for i, (item, where, name) in enumerate(entries):
            if slow[i] != stage:
                continue
            try:
                done[i] = _evaluate_entry(item, kb, source_ids, where, name)
            except ClaimError as e:
                errors.append(str(e))
    return [done[i] for i in sorted(done)], errors


def _record_file_errors(kb: KnowledgeBase) -> list[str]:
    """Problems of the claim record files beside the registry (seed coverage, verdict
    history): checked with the claims, so a malformed one is refused by validation and
    never reaches a view."""
    from trnkb.audit.claims.coverage import coverage_path, read_coverage
    from trnkb.audit.claims.history import history_path, read_history

    errors: list[str] = []
    for read, path in ((read_coverage, coverage_path(kb)), (read_history, history_path(kb))):
        if not path.exists() and not path.is_symlink():
            continue
        try:
            read(path)
        except SpecError as e:
            errors += e.errors
    return errors


def validate_claims(kb: KnowledgeBase, path: Path | None = None) -> list[Claim]:
    """Evaluate every claim; raise :class:`~trnkb.spec.specfile.SpecError` listing each claim
    that fails to evaluate. Returns the evaluated claims."""
    try:
        claims, errors = evaluate_claims(kb, path)
    except (ArithmeticError, TypeError, ValueError, KeyError) as e:  # safety net: one line
        where = display_path(Path(path) if path is not None else Path(kb.path) / "claims.yaml")
        raise SpecError([f"{where}:1: (claims): cannot evaluate "
                         f"({type(e).__name__}: {show(str(e), 200)})"]) from None
    if errors:
        raise SpecError(errors)
    return claims
