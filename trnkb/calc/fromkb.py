"""The thin layer between the knowledge base and the calculators.

Reads KB values together with their provenance (``kb.provenance``) and passes both to a
calculator, so the derivation of a figure names the sources of its inputs. Nothing here
computes; the formulas live in the calculator modules.
"""

from __future__ import annotations

from typing import Any

from trnkb.calc import run
from trnkb.calc.derivation import Result
from trnkb.units.qtypes import Provenance, Quantity


def ref(kb: Any, row_id: str, field: str, source: str | None = None) -> tuple[Quantity, Provenance]:
    """The value of ``row_id.field`` and its provenance.

    ``source`` picks the value a given source reports instead of the preferred one.
    Raises ``KeyError`` when the KB has no such value.
    """
    if source is None:
        value = kb.value(row_id, field)
        prov = dict(kb.provenance(row_id, field))
    else:
        rows = kb.values(row_id, field)
        rows = rows[rows["source"] == source]
        if rows.empty:
            raise KeyError(f"{row_id}.{field} has no value from source {source!r}")
        row = rows.iloc[0]
        value = row["value"]
        prov = {k: row[k] for k in ("source", "locator", "kind", "note", "qualifier", "file",
                                    "line")}
    prov = {"id": row_id, "field": field,
            **{k: (v.item() if hasattr(v, "item") else v) for k, v in prov.items() if v != ""}}
    return value, prov


def call(kb: Any, name: str, **args: Any) -> Result:
    """Run calculator ``name``; an argument given as ``"kb:id.field"`` is read from the KB
    (with its provenance), anything else is passed through.

    >>> call(kb, "hbm-capacity", stacks="kb:trainium3-hbm.stacks", stack_height=12,
    ...      die_density="24 Gbit")  # doctest: +SKIP
    """
    values: dict[str, Any] = {}
    sources: dict[str, Provenance] = {}
    for key, raw in args.items():
        if isinstance(raw, str) and raw.startswith("kb:"):
            row_id, _, field = raw[3:].partition(".")
            values[key], sources[key.replace("-", "_")] = ref(kb, row_id, field)
        else:
            values[key] = raw
    return run(name, values, sources)


def first(kb: Any, row_id: str, fields: tuple[str, ...]) -> str | None:
    """The first of ``fields`` that ``row_id`` has a value for, or None."""
    for f in fields:
        if kb.get(row_id, f) is not None:
            return f
    return None
