"""What an unverifiable claim needs, checked against the code and the KB as they are now.

Unverifiable reasons are typed once in the registry and go stale as the code grows
("needs the workload layer's training model (not on main yet)"). Each capability a reason
may name is a row of :data:`CAPABILITIES` with a test of whether it exists now;
:func:`reason_now` rewrites a reason from that state when a claim is evaluated, so a
reason never says a capability is missing when it exists.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase


def _module_has(module: str, *names: str) -> Callable[[KnowledgeBase | None], bool]:
    def check(_kb: KnowledgeBase | None) -> bool:
        try:
            m = importlib.import_module(module)
        except ImportError:
            return False
        return all(hasattr(m, n) for n in names)
    return check


def _table_rows(table: str) -> Callable[[KnowledgeBase | None], bool]:
    def check(kb: KnowledgeBase | None) -> bool:
        if kb is None:
            from trnkb.kb import load

            kb = load()
        return table in kb.tables and len(kb.table(table)) > 0
    return check


@dataclass(frozen=True)
class Capability:
    """Something a claim may need: ``pattern`` finds it named in a reason, ``exists``
    says whether the code or the KB has it now, ``where`` names it for the reader."""

    name: str
    pattern: str
    exists: Callable[[KnowledgeBase | None], bool]
    where: str


CAPABILITIES: tuple[Capability, ...] = (
    Capability("workload training model", r"workload layer'?s? training model",
               _module_has("trnkb.workload.training", "train"), "trnkb.workload.training"),
    Capability("workload cost model", r"workload layer'?s? cost model",
               _module_has("trnkb.workload.cost", "cost_inputs"), "trnkb.workload.cost"),
    Capability("workload serving model", r"workload layer \(serving model",
               _module_has("trnkb.workload.serving", "serve"), "trnkb.workload.serving"),
    Capability("fabric collectives", r"fabric collectives",
               _module_has("trnkb.workload.collectives", "Network"),
               "trnkb.workload.collectives"),
    Capability("prices", r"\bprices\b", _table_rows("prices"), "the KB's prices table"),
)
# Reasons that state an absence ("the KB holds no prices"): (pattern, capability, the words
# that replace the pattern once the capability exists).
ABSENCES: tuple[tuple[str, str, str], ...] = (
    (r"the KB holds no prices or equity data", "prices",
     "the KB holds cloud chip-hour prices only (its prices table), no equity data"),
    (r"the KB holds no margins or prices", "prices",
     "the KB holds no margins, and cloud chip-hour prices only (its prices table)"),
    (r"no prices in the KB", "prices",
     "the KB holds cloud chip-hour prices only (its prices table), not this"),
    (r"the KB holds no prices", "prices",
     "the KB holds cloud chip-hour prices only (its prices table), no purchase prices"),
)
_STALE = re.compile(r"\s*\(?,?\s*not on main yet\)?", re.IGNORECASE)


def reason_now(reason: str, kb: KnowledgeBase | None = None) -> str:
    """``reason`` with every capability it names as missing checked against the code and
    the KB now. When all of them exist, the reason says so and what is left (a compute
    expression, or the measurement it asks for); otherwise the missing ones are named."""
    by_name = {c.name: c for c in CAPABILITIES}
    for pattern, cap, words in ABSENCES:
        if re.search(pattern, reason) and by_name[cap].exists(kb):
            return re.sub(pattern, words, reason)
    named = [c for c in CAPABILITIES if re.search(c.pattern, reason, re.IGNORECASE)]
    if not named or not reason.lower().startswith("needs"):
        return reason
    missing = [c for c in named if not c.exists(kb)]
    if missing:
        return _STALE.sub("", reason).rstrip(" ,") + (
            " (missing now: " + ", ".join(c.name for c in missing) + ")")
    have = ", ".join(f"{c.name} ({c.where})" for c in named)
    rest = " or a measurement" if "measurement" in reason else ""
    return (f"what it needs now exists: {have}; the claim awaits a compute expression in the "
            f"registry that uses it{rest}")




def missing_named(reason: str, kb: KnowledgeBase | None = None) -> list[str]:
    """Capabilities ``reason`` names as needed that exist now (a stale reason: empty
    for every reason :func:`reason_now` wrote)."""
    by_name = {c.name: c for c in CAPABILITIES}
    out = [cap for pattern, cap, _ in ABSENCES
           if re.search(pattern, reason) and by_name[cap].exists(kb)]
    if "not on main yet" in reason.lower() or reason.lower().startswith("needs"):
        out += [c.name for c in CAPABILITIES
                if re.search(c.pattern, reason, re.IGNORECASE) and c.exists(kb)]
    return out
