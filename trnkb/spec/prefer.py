"""Which value of a field is preferred: one rule, applied to every table at load.

When several sources give the same field of the same row, the wide tables and the
calculators use one of them, the *preferred* value. It is chosen by rule, not by hand:

1. an explicit override wins: a value written ``preferred: true`` with a ``note`` that
   says why the rule is set aside (at most one per field);
2. otherwise estimates (and values derived from an estimate) come last, and a value whose
   density or direction its source leaves unstated comes after one that states it;
3. then by the kind of source: ``vendor`` > ``paper`` > ``analyst`` > ``seed`` > ``press``
   (for a derived value, the weakest kind among its inputs' sources);
4. then a source's direct statement (``reported``, ``measured``) before our arithmetic
   (``derived``) from sources of the same kind;
5. then the newest source (the vendor's *current* page over an older version; for a
   derived value, the date of its oldest input; a date given as a year only counts as
   that year's earliest);
6. then the order in the file.

The rule is written out for contributors in ``docs/spec-format.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: source kind -> rank (higher is preferred)
SOURCE_RANK = {"vendor": 5, "paper": 4, "analyst": 3, "seed": 2, "press": 1, "derived": 0}
#: value kind -> rank among values from sources of the same rank
VALUE_RANK = {"reported": 2, "measured": 2, "derived": 1, "estimate": 0}


def source_info(sources: Any) -> dict[str, tuple[int, str]]:
    """``source id -> (rank, date text)`` from the sources table (a DataFrame or records)."""
    records = sources.to_dict("records") if hasattr(sources, "to_dict") else list(sources)
    return {str(s["id"]): (SOURCE_RANK.get(str(s.get("kind", "")), 0), str(s.get("date", "")))
            for s in records}


def fact_rank(fact: dict[str, Any], info: dict[str, tuple[int, str]]
              ) -> tuple[bool, bool, int, int, str]:
    """Sort key of one fact (higher is preferred), without the override and file order.

    A derived fact carries ``input_sources`` (ids of its inputs' sources); its source rank
    is the weakest of them and its date the oldest.
    """
    ids = fact.get("input_sources") or [fact.get("source")]
    known = [info.get(str(i), (0, "")) for i in ids]
    rank = min(k[0] for k in known) if known else 0
    dates = [k[1] for k in known if k[1]]
    date = min(dates) if dates else ""
    kind = str(fact.get("kind", ""))
    stated = "unstated" not in (fact.get("density"), fact.get("direction"))
    estimated = kind == "estimate" or bool(fact.get("estimated"))
    return (not estimated, stated, rank, VALUE_RANK.get(kind, 0), date)


def choose(group: list[dict[str, Any]], info: dict[str, tuple[int, str]]) -> int:
    """Index of the preferred fact of one field (``group`` in file order).

    A fact with ``override`` true wins (the loader refuses more than one per field).
    """
    for i, fact in enumerate(group):
        if fact.get("override"):
            return i
    best = 0
    for i, fact in enumerate(group[1:], start=1):
        if fact_rank(fact, info) > fact_rank(group[best], info):
            best = i
    return best


def apply(facts: Iterable[dict[str, Any]], info: dict[str, tuple[int, str]]) -> None:
    """Set ``preferred`` on every fact in place: exactly one per (table, id, field)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for fact in facts:
        groups.setdefault((fact["table"], fact["id"], fact["field"]), []).append(fact)
    for group in groups.values():
        pick = choose(group, info)
        for i, fact in enumerate(group):
            fact["preferred"] = i == pick


def override_errors(facts: Iterable[dict[str, Any]]) -> list[str]:
    """``file:line: id.field: problem`` for fields with more than one override."""
    seen: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for fact in facts:
        if fact.get("override"):
            seen.setdefault((fact["table"], fact["id"], fact["field"]), []).append(fact)
    errors = []
    for (_, rid, field), group in seen.items():
        if len(group) > 1:
            first = group[0]
            errors.append(f"{first['file']}:{first['line']}: {rid}.{field}: {len(group)} values "
                          "marked 'preferred: true'; at most one may override the preference rule")
    return errors
