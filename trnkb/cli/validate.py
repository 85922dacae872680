"""Checking command-line arguments at the boundary, before any work starts.

Every helper raises ``ValueError`` with one line naming the option, what was given and
what would be right; :func:`trnkb.cli.main` prints it as ``error: ...`` and exits 1.
"""

from __future__ import annotations

import difflib

import pint

from trnkb.units import DIMENSIONS, QuantityError, has_dimension, parse


def suggest(name: str, options) -> str:
    """`` (did you mean 'x'?)`` for a near miss in ``options``, case-insensitively, else ``""``."""
    options = [str(o) for o in options]
    lower = {o.lower(): o for o in options}
    if name.lower() in lower:
        return f" (did you mean {lower[name.lower()]!r}?)"
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.6)
    return f" (did you mean {lower[close[0]]!r}?)" if close else ""


def quantity(text: str, option: str, dim: str, example: str) -> pint.Quantity:
    """``text`` parsed strictly (:func:`trnkb.units.parse`) and of dimension ``dim``
    (a key of :data:`trnkb.units.DIMENSIONS`)."""
    try:
        q = parse(text)
    except QuantityError as e:
        hint = "" if "e.g." in str(e) else f" (e.g. {example})"
        raise ValueError(f"{option}: {e}{hint}") from None
    if not has_dimension(q, dim):
        want = DIMENSIONS.get(dim, dim) or "a plain number"
        raise ValueError(f"{option}: {text!r} is not {dim.replace('_', ' ')} ({want}); "
                         f"e.g. {example}")
    return q


def positive_quantity(text: str, option: str, dim: str, example: str) -> pint.Quantity:
    """Like :func:`quantity`, and greater than zero (a size, a rate something divides by)."""
    q = quantity(text, option, dim, example)
    if not q.magnitude > 0:
        raise ValueError(f"{option} must be greater than zero, got {text!r}")
    return q


def positive_int(value: int | None, option: str, limit: int | None = None) -> int | None:
    """``value`` >= 1 (and <= ``limit`` when given); ``None`` passes through."""
    if value is None:
        return None
    if value < 1:
        raise ValueError(f"{option} must be at least 1, got {value}")
    if limit is not None and value > limit:
        raise ValueError(f"{option} {value:,} is above the limit of {limit:,}")
    return value


def within(estimate: float, limit: float, what: str, unit: str = "") -> None:
    """Refuse work whose estimated size ``estimate`` exceeds ``limit``, quoting both."""
    if estimate > limit:
        u = f" {unit}" if unit else ""
        raise ValueError(f"{what}: about {estimate:,.0f}{u}, above the limit of {limit:,.0f}{u}; "
                         f"choose smaller sizes")


def choice(value: str | None, options, option: str) -> str | None:
    """``value`` if it is one of ``options`` (``None`` passes through), else a one-line refusal
    with a near-miss suggestion."""
    if value is None or value in options:
        return value
    raise ValueError(f"{option}: {value!r} is not one of {', '.join(options)}"
                     f"{suggest(value, options)}")
