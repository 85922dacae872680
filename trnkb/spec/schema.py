"""What each table is: its fields, their units, meanings and plausible ranges.

This module is the field dictionary (the tables themselves are declared in
:mod:`trnkb.spec.hardware` and :mod:`trnkb.spec.systems`, from the vocabulary of
:mod:`trnkb.spec.fields`). It says nothing about YAML; ``trnkb.kb`` reads
specs against it, the pandera schemas are built from it (:func:`pandera_schema`), and
the data dictionary in the docs and the Frictionless descriptor are generated from it.

Field kinds
-----------
``quantity``  a pint quantity of the named dimension, shown in ``unit``.
``count``     a dimensionless number (lanes, stacks, chips); integers unless noted.
``text``      a sourced string (process node, topology, cooling).
``ref``       the id of a row in another table (foreign key), sourced like text.
``label``     a plain unsourced string that names or classifies the row (name, vendor).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from trnkb.spec.fields import (
    ID_PATTERN,
    Field,
    Table,
)
from trnkb.spec.hardware import CHIPS, DEVICES, HBM, PACKAGES
from trnkb.spec.systems import (
    CORES,
    DATACENTER,
    FABRICS,
    MODELS,
    NETWORK,
    POWER,
    PRICES,
    RACKS,
)

TABLES: dict[str, Table] = {
    t.name: t
    for t in (CHIPS, PACKAGES, HBM, RACKS, NETWORK, DATACENTER, CORES, FABRICS, MODELS, PRICES,
              DEVICES, POWER)
}

SOURCE_FIELDS = ("id", "title", "publisher", "url", "date", "kind")

#: Units a quantity field accepts, by dimension, as example units: a value's unit must be
#: built like one of them term by term (``TB*Hz`` has the dimension of a bandwidth but is
#: not written like ``TB/s`` or ``Gbps``, so it is refused).
UNIT_FAMILIES: dict[str, tuple[str, ...]] = {
    "compute_rate": ("TFLOPS", "TFLOP/s"),
    "compute": ("FLOP",),
    "information": ("GB",),
    "bandwidth": ("TB/s", "Gbit/s"),
    "frequency": ("GHz",),
    "power": ("W",),
    "length": ("um",),
    "time": ("ns",),
}

FIRST_SOURCE_YEAR = 1950  # no source in this field is older


def _shape(units: Any) -> list[tuple[str, float]]:
    """How a unit is built: the dimension and exponent of each of its terms, sorted."""
    from trnkb.units import ureg

    return sorted((str(ureg.get_dimensionality(name)), exp) for name, exp in units._units.items())


def value_problem(f: Field, q: Any) -> str | None:
    """What is wrong with quantity ``q`` for field ``f`` beyond its dimension, or None.

    A count takes a plain number (no unit, not even ``%``), whole unless ``f.integer`` is
    False; a quantity's unit must belong to the field's family (:data:`UNIT_FAMILIES`).
    """
    from trnkb.units import ureg

    if f.kind == "count":
        if q.units != ureg.dimensionless:
            return f"a count takes a plain number, not a unit ({q.units:~})"
        if f.integer and not float(q.magnitude).is_integer():
            return f"a count must be a whole number, got {q.magnitude:g}"
        return None
    if f.kind == "quantity" and f.dim in UNIT_FAMILIES:
        examples = UNIT_FAMILIES[f.dim]
        if _shape(q.units) not in [_shape(ureg.parse_units(u)) for u in examples]:
            what = f.dim.replace("_", " ")
            return (
                f"unit '{q.units:~}' is not a{'n' if what[0] in 'aeiou' else ''} {what} unit; "
                "write it "
                f"like {' or '.join(examples)}"
            )
    return None


def date_problem(value: object, today: datetime.date | None = None) -> str | None:
    """What is wrong with a source date (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or a date),
    or None: it must exist on the calendar and lie between 1950 and next year."""
    today = today or datetime.date.today()
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, datetime.date):
        year = value.year
    else:
        text = str(value)
        m = re.match(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$", text)
        if not m:
            return f"{text[:40]!r} is not a date (YYYY[-MM[-DD]])"
        year, month, day = int(m[1]), int(m[2] or 1), int(m[3] or 1)
        try:
            datetime.date(year, month, day)
        except ValueError as e:
            return f"impossible date {text!r} ({e})"
    if not FIRST_SOURCE_YEAR <= year <= today.year + 1:
        return f"implausible date {str(value)!r}: expected {FIRST_SOURCE_YEAR} to {today.year + 1}"
    return None


def pandera_schema(table: Table, present: list[str]) -> Any:
    """Build the pandera schema of a wide table (columns ``present`` that exist).

    Quantity columns carry pint dtypes, which pandera's type engine does not know, so
    they are declared without a dtype and checked for dimensionality and range instead.
    """
    import pandera.pandas as pa
    import pint_pandas

    from trnkb.units import DIMENSIONS, ureg

    def dimension_check(dim: str) -> pa.Check:
        want = ureg.get_dimensionality(DIMENSIONS[dim])
        return pa.Check(
            lambda s: (
                isinstance(s.dtype, pint_pandas.PintType) and s.pint.units.dimensionality == want
            ),
            name=f"dimensionality=={DIMENSIONS[dim]}",
        )

    def range_check(f: Field) -> pa.Check:
        def ok(s: Any) -> Any:
            m = s.pint.to(f.unit).pint.magnitude if f.kind == "quantity" else s
            m = m.astype("float64")
            return m.isna() | ((m >= f.lo) & (m <= f.hi))

        return pa.Check(ok, name=f"in_range({f.lo}, {f.hi}) {f.unit}".rstrip())

    columns = {"id": pa.Column(str, pa.Check.str_matches(ID_PATTERN), unique=True)}
    for name in present:
        f = table.field(name)
        if f is None:
            continue
        checks = []
        if f.kind == "quantity":
            checks = [dimension_check(f.dim), range_check(f)]
        elif f.kind == "count":
            checks = [range_check(f)]
        elif f.choices:
            checks = [pa.Check.isin(list(f.choices))]
        columns[name] = pa.Column(checks=checks, nullable=not f.required)
    return pa.DataFrameSchema(columns, name=table.name, strict=False)
