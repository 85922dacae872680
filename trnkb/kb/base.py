"""The :class:`KnowledgeBase`: the loaded tables and an index for O(1) look-ups."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pint

from trnkb.kb.tables import plain_columns
from trnkb.kb.values import suggest
from trnkb.spec.schema import TABLES
from trnkb.spec.specfile import show

PROVENANCE_KEYS = ("source", "locator", "kind", "note", "qualifier", "file", "line", "density",
                   "direction", "derivation")


class KnowledgeBase:
    """The validated knowledge base.

    Attributes
    ----------
    facts : DataFrame
        Long table, one row per value: table, id, field, value (Quantity or str),
        magnitude (in the field's display unit), unit (exactly as the source wrote it),
        canonical_unit (:func:`trnkb.units.format_unit` of the value's unit), source,
        locator, kind, preferred, note, qualifier, file, line.
    sources : DataFrame
        ``specs/sources.yaml``.
    conflicts : DataFrame
        Values of one field from different sources that disagree beyond the field's
        tolerance; ``type`` is ``value``, ``unit-ambiguity`` (e.g. 144 GB vs 144 GiB),
        ``qualifier`` (the values carry different qualifiers, e.g. usable vs physical) or
        ``text``.
    memo : dict
        A cache for objects derived from this knowledge base (e.g. built fabrics), so
        callers need no module-level caches keyed by ``id(kb)``.

    :meth:`get`, :meth:`value`, :meth:`provenance`, :meth:`values` and :meth:`table_of`
    are dictionary look-ups in an index built once when the knowledge base is made.
    """

    def __init__(self, path: Path, facts: pd.DataFrame, sources: pd.DataFrame,
                 tables: Mapping[str, pd.DataFrame | Callable[[], pd.DataFrame]],
                 conflicts: pd.DataFrame, row_ids: Mapping[str, list[str]] | None = None
                 ) -> None:
        # ``tables`` values may be builders, called on first use (pint-pandas columns are
        # costly to make and many programs never ask for a wide table); ``row_ids`` then
        # gives each table's ids in order.
        self.path = path
        self.facts = facts
        self.sources = sources
        self._tables = dict(tables)
        self.conflicts = conflicts
        self.memo: dict[Any, Any] = {}
        self._row_ids = {n: list(i) for n, i in row_ids.items()} if row_ids is not None else {
            n: list(self._wide(n)["id"]) for n in self._tables}
        self._build_index()

    def _wide(self, name: str) -> pd.DataFrame:
        t = self._tables[name]
        if callable(t):
            t = self._tables[name] = t()
        return t

    def _build_index(self) -> None:
        cols = ["id", "field", "preferred", "value", *PROVENANCE_KEYS]
        self._preferred: dict[tuple[str, str], dict[str, Any]] = {}
        self._positions: dict[tuple[str, str], list[int]] = {}
        data = [self.facts[c].tolist() for c in cols]
        for pos, row in enumerate(zip(*data, strict=True)):
            key = (row[0], row[1])
            self._positions.setdefault(key, []).append(pos)
            if row[2]:
                self._preferred[key] = dict(zip(cols[3:], row[3:], strict=True))
        self._table_of = {i: name for name, ids in self._row_ids.items() for i in ids}
        self._sources: dict[str, dict[Any, Any]] = {
            r["id"]: r for r in self.sources.to_dict("records")}

    @property
    def tables(self) -> list[str]:
        return list(self._tables)

    def table(self, name: str, units: str | None = None) -> pd.DataFrame:
        """Wide view of a table: one row per id, the preferred value of each field.

        ``units=None`` (default): pint-pandas columns (``kb.table("chips")["hbm_bandwidth"]
        .pint.to("GB/s")``). ``units="columns"``: plain ``float64`` columns with the unit
        in the name, missing values NaN (never zero)::

            chips = kb.table("chips", units="columns")
            chips.nlargest(3, "dense_bf16 (TFLOP/s)")[["id", "dense_bf16 (TFLOP/s)"]]
        """
        if name not in self._tables:
            raise KeyError(f"no table {name!r}; tables are {', '.join(self._tables)}")
        if units is None:
            return self._wide(name).copy()
        if units == "columns":
            return plain_columns(name, self._wide(name))
        raise ValueError(f"units={units!r}: use None (pint columns) or 'columns' (plain floats)")

    def table_of(self, row_id: str) -> str:
        """The table an id lives in (ids are unique across tables)."""
        try:
            return self._table_of[row_id]
        except (KeyError, TypeError):
            raise KeyError(f"no row with id {show(row_id)}"
                           f"{suggest(str(row_id)[:200], self.ids())}") from None

    def ids(self, table: str | None = None) -> list[str]:
        names = [table] if table else self.tables
        return [i for n in names for i in self._row_ids[n]]

    def _fact(self, row_id: str, field: str) -> dict[str, Any]:
        fact = self._preferred.get((row_id, field))
        if fact is None:
            self._check_field(row_id, field)  # raises for an unknown id or field
            raise KeyError(f"{row_id} has no value for {field!r}")
        return fact

    def _check_field(self, row_id: object, field: object) -> None:
        """``KeyError`` (with a suggestion) unless ``row_id`` is a row and ``field`` a
        field of its table."""
        if not isinstance(row_id, str) or not isinstance(field, str):
            raise KeyError(f"ids and fields are text, got {show(row_id)}, {show(field)}")
        table = self.table_of(row_id)  # raises for an unknown id
        if table in TABLES and TABLES[table].field(field) is None:
            names = TABLES[table].names
            raise KeyError(f"table {table} has no field {show(field)}{suggest(field, names)}")

    def value(self, row_id: str, field: str) -> Any:
        """The preferred value: a pint Quantity (counts are dimensionless) or a string.

        A Quantity is a copy: changing it (``q.ito("GFLOPS")``) leaves the knowledge base
        as it was. An unknown id or field raises ``KeyError`` with a suggestion.
        """
        return _copy(self._fact(row_id, field)["value"])

    def get(self, row_id: str, field: str, default: Any = None) -> Any:
        """Like :meth:`value` (a copy) but returns ``default`` when there is no such value:
        the lenient look-up for code that probes rows of several tables (use
        :meth:`value` to have an unknown id or field refused with a suggestion)."""
        fact = self._preferred.get((row_id, field))
        return default if fact is None else _copy(fact["value"])

    def provenance(self, row_id: str, field: str) -> dict[str, Any]:
        """Source, locator, kind, note, qualifier, ``file:line``, density, direction and (for a
        derived value) the derivation naming every input and its source, of the preferred
        value."""
        f = self._fact(row_id, field)
        return {k: f[k] for k in PROVENANCE_KEYS}

    def attributes(self, row_id: str, field: str) -> dict[str, Any]:
        """What the preferred value counts: ``{"density", "direction", "qualifier"}``.

        ``density`` is dense, sparse or unstated ('' for fields that are not FLOP/s);
        ``direction`` is per-direction, bidirectional or unstated ('' for fields that are
        not link bandwidths). See :mod:`trnkb.spec.attributes`.
        """
        f = self._fact(row_id, field)
        return {k: f[k] for k in ("density", "direction", "qualifier")}

    def values(self, row_id: str, field: str) -> pd.DataFrame:
        """Every value of one field, from every source, preferred first (values are
        copies). An unknown id or field raises ``KeyError`` with a suggestion; a known
        field no source gives is an empty frame."""
        positions = self._positions.get((row_id, field))
        if positions is None:
            self._check_field(row_id, field)
        sub = self.facts.iloc[positions or []].copy()
        sub["value"] = [_copy(v) for v in sub["value"]]
        return sub.sort_values("preferred", ascending=False, kind="stable").reset_index(drop=True)

    def source(self, source_id: str) -> dict[str, Any]:
        try:
            return dict(self._sources[source_id])
        except KeyError:
            raise KeyError(f"no source {source_id!r}") from None

    def __repr__(self) -> str:
        sizes = ", ".join(f"{n}={len(i)}" for n, i in self._row_ids.items())
        return f"<KnowledgeBase {len(self.facts)} facts, {len(self.sources)} sources; {sizes}>"


def _copy(value: Any) -> Any:
    """A copy of a pint Quantity (text is immutable already): what callers get.

    The copy shares the immutable parts (a scalar magnitude, the unit container, which
    pint replaces rather than changes in ``ito``/``*=``) and copies an array magnitude;
    pint's own ``copy`` re-parses the unit and costs ~40 us per call.
    """
    if not isinstance(value, pint.Quantity):
        return value
    new = object.__new__(type(value))
    new.__dict__.update(value.__dict__)
    if hasattr(new._magnitude, "copy"):  # a NumPy array or scalar: not shared
        new._magnitude = new._magnitude.copy()
    return new
