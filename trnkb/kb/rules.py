"""Rules between fields of one row, checked at load on the preferred values.

Each value was already checked alone (unit, range, whole number); these rules say how
values of the same row must relate, e.g. a model cannot have more KV heads than query
heads. A rule whose fields are not both given is skipped. Problems are reported at the
line of the first field: ``file:line: id.field: problem``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: (table, field a, relation, field b): ``le`` a <= b; ``divides`` a divides b
RULES: tuple[tuple[str, str, str, str], ...] = (
    ("models", "kv_heads", "le", "attention_heads"),
    ("models", "kv_heads", "divides", "attention_heads"),
    ("models", "active_params", "le", "total_params"),
    ("models", "active_experts", "le", "experts"),
    ("models", "sliding_layers", "le", "layers"),
    ("models", "dense_layers", "le", "layers"),
)


def _magnitude(fact: dict[str, Any]) -> float | None:
    m = fact.get("magnitude")
    return float(m) if isinstance(m, (int, float)) and m == m else None


def check_rules(facts: Iterable[dict[str, Any]]) -> list[str]:
    """``file:line: id.field: problem`` for every broken rule among the preferred facts."""
    rows: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for f in facts:
        if f.get("preferred"):
            rows.setdefault((f["table"], f["id"]), {})[f["field"]] = f
    errors = []
    for table, a, relation, b in RULES:
        for (t, rid), fields in rows.items():
            if t != table or a not in fields or b not in fields:
                continue
            x, y = _magnitude(fields[a]), _magnitude(fields[b])
            if x is None or y is None:
                continue
            if relation == "le" and x > y:
                problem = f"{x:g} is more than {b} ({y:g})"
            elif relation == "divides" and (x == 0 or y % x):
                problem = f"{x:g} does not divide {b} ({y:g}) into whole groups"
            else:
                continue
            errors.append(f"{fields[a]['file']}:{fields[a]['line']}: {rid}.{a}: {problem}")
    return errors
