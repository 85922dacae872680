"""Claimed and computed values as people read them, with :func:`trnkb.units.format_quantity`.

Both values of a claim are written in one unit, the claim's own (``144 GB`` and
``11,133 GB``; ``2,048 GiB/s`` and ``2,384 GiB/s``), with 4 significant figures and
thousands separators. One exception: a claim written in an unprefixed unit with a large
magnitude (another tool's constants in bytes or FLOP per second, ``8.1e11 B/s``) is shown
with the SI prefix that suits the claimed value, the same prefix for both (``810 GB/s`` and
``859 GB/s``), never ``810,000,000,000 B/s``. When a contradicted claim's two values
would print the same at 4 figures, up to 6 are used so the difference shows.
"""

from __future__ import annotations

import math
from typing import Any

import pint

from trnkb.units import format_quantity, ureg

COMPACT_FROM = 1e4  # an unprefixed unit is given a prefix from this magnitude on
MAX_SIG = 6


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, tuple) else value


def _prefix(name: str) -> str | None:
    """The SI or binary prefix of a unit name ("giga" in "gigabyte"), None if unknown."""
    parsed = ureg.parse_unit_name(name)
    return str(parsed[0][0]) if parsed else None


def display_unit(value: Any) -> Any:
    """The unit to show a claim's values in: the value's own, or, for an unprefixed unit
    such as ``B/s`` and a magnitude of at least 10^4, the SI-prefixed unit that suits it
    (``GB/s``). None for text, a missing value or a dimensionless number."""
    q = _first(value)
    if not isinstance(q, pint.Quantity) or q.dimensionless:
        return None
    units = q.units
    exponents: dict[str, Any] = dict(units._units)
    numerator = [(n, float(p)) for n, p in exponents.items() if float(p) > 0]
    unprefixed = all(_prefix(n) == "" for n in exponents)
    if (
        len(numerator) == 1
        and numerator[0][1] == 1
        and unprefixed
        and abs(q.magnitude) >= COMPACT_FROM
        and math.isfinite(q.magnitude)
    ):
        return q.to_compact().units
    return units


def value_text(value: Any, unit: Any = None, sig: int = 4) -> str:
    """One claimed or computed value as text: ``"11,133 GB"``, ``"810 GB/s"``, ``"2"``,
    a range as ``"7,966 1/s to 22,614 1/s"``, text in double quotes, "" when missing.
    ``unit`` (default :func:`display_unit` of the value) is the unit to write it in."""
    if value is None:
        return ""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        u = unit if unit is not None else display_unit(value)
        return " to ".join(value_text(v, u, sig) for v in value)
    if not isinstance(value, pint.Quantity):
        return format_quantity(value, sig)
    if value.dimensionless:
        return format_quantity(float(value.to("").magnitude), sig)
    u = unit if unit is not None else display_unit(value)
    return format_quantity(value.to(u) if u is not None else value, sig)


def _same(a: Any, b: Any) -> bool:
    """Whether two numeric values are equal (within 1e-9 relative)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return False
    try:
        x, y = float(a.to(b.units).magnitude), float(b.magnitude)
    except (AttributeError, pint.errors.PintError, TypeError, ValueError):
        return True
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def value_texts(claimed: Any, computed: Any, verdict: str = "") -> tuple[str, str]:
    """The claimed and computed values of one claim as text, in the same unit (the
    claimed value's :func:`display_unit`, else the computed one's)."""
    unit = display_unit(claimed)
    if unit is None and not isinstance(_first(claimed), str):
        unit = display_unit(computed)
    sig = 4
    while True:
        texts = value_text(claimed, unit, sig), value_text(computed, unit, sig)
        if (
            verdict != "contradicted"
            or sig >= MAX_SIG
            or texts[0] != texts[1]
            or _same(claimed, computed)
        ):
            return texts
        sig += 1
