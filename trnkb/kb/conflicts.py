"""Where sources disagree: every non-preferred value compared with the preferred one.

A pair is a conflict when the values differ beyond the field's tolerance. Its ``type`` is
``unit-ambiguity`` when reading one side's prefix the other way (GB <-> GiB) makes them
equal, ``qualifier`` when the values carry different qualifiers (e.g. usable vs
physical), ``text`` for differing text, else ``value``.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pint

from trnkb.spec.fields import Field
from trnkb.spec.schema import TABLES
from trnkb.units import format_unit, is_binary_prefixed, ureg

CONFLICT_COLUMNS = ["table", "id", "field", "preferred", "preferred_source", "other",
                    "other_source", "relative_difference", "type"]

_PREFIX_PAIRS = (("kibi", "kilo"), ("mebi", "mega"), ("gibi", "giga"), ("tebi", "tera"),
                 ("pebi", "peta"))


def conflict_type(f: Field, pref: dict[str, Any], other: dict[str, Any]
                  ) -> tuple[float, str] | None:
    """(relative difference, type) when two values of one field disagree, else None."""
    if f.kind in ("text", "ref"):
        same = str(other["value"]).strip().lower() == str(pref["value"]).strip().lower()
        return None if same else (math.nan, "text")
    a, b = pref["magnitude"], other["magnitude"]
    rel = abs(a - b) / max(abs(a), abs(b)) if max(abs(a), abs(b)) else 0.0
    if rel <= f.tolerance:
        return None
    pa_, pb = pref["value"], other["value"]
    if is_binary_prefixed(pa_.units) != is_binary_prefixed(pb.units):
        # 144 GB vs 144 GiB, or 9 TB vs 9,216 GiB (= 9 TiB): equal once one side's
        # prefix is read the other way
        for x, y in ((pa_, pb), (pb, pa_)):
            if math.isclose(_other_prefix(x).to(y.units).magnitude, y.magnitude, rel_tol=1e-3):
                return rel, "unit-ambiguity"
    if pref["qualifier"] != other["qualifier"]:
        return rel, "qualifier"  # e.g. usable vs physical: different things, both kept
    return rel, "value"


def _other_prefix(q: pint.Quantity[Any]) -> pint.Quantity[Any]:
    """``q`` with binary prefixes read as decimal and decimal as binary (GB <-> GiB)."""
    swapped = str(q.units)
    for binary, decimal in _PREFIX_PAIRS:
        swapped = swapped.replace(binary, "\0").replace(decimal, binary).replace("\0", decimal)
    out: pint.Quantity[Any] = q.magnitude * ureg.Unit(swapped)
    return out


def _text(v: object) -> str:
    """The value exactly as compared, as text :func:`trnkb.units.parse` reads back
    identically (``"2517 TFLOP/s"``, ``"144 GiB"``): full precision, no separators."""
    if not isinstance(v, pint.Quantity):
        return str(v)
    m = v.magnitude
    num = str(m) if isinstance(m, int) else repr(float(m))
    unit = format_unit(v.units)
    return f"{num} {unit}" if unit else num


def find_conflicts(facts: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per (preferred, other) pair that disagrees; columns :data:`CONFLICT_COLUMNS`."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for fact in facts:
        groups.setdefault((fact["table"], fact["id"], fact["field"]), []).append(fact)
    rows = []
    for (table, rid, fname), group in sorted(groups.items()):
        if len(group) < 2:
            continue
        f = TABLES[table].field(fname)
        assert f is not None  # every fact's field was checked against the table when read
        pref = next(x for x in group if x["preferred"])
        for other in (x for x in group if not x["preferred"]):
            found = conflict_type(f, pref, other)
            if found is None:
                continue
            rows.append({
                "table": table, "id": rid, "field": fname,
                "preferred": _text(pref["value"]), "preferred_source": pref["source"],
                "other": _text(other["value"]), "other_source": other["source"],
                "relative_difference": found[0], "type": found[1],
            })
    return pd.DataFrame(rows, columns=CONFLICT_COLUMNS)
