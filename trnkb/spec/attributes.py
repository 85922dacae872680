"""Density and direction: what a FLOP/s or a bandwidth figure counts, as explicit attributes.

Every fact carries two attributes next to its value:

``density``
    ``dense``, ``sparse`` (structured sparsity counted as if the zeros were computed) or
    ``unstated`` (the source does not say, e.g. AMD's MI455X FP8/FP4 targets). Empty for
    fields that are not FLOP/s.
``direction``
    ``per-direction``, ``bidirectional`` (both directions added) or ``unstated``. Empty for
    fields that are not link bandwidths (HBM bandwidth has no direction).

A field's name gives the default (``dense_*`` dense, ``sparse_*`` sparse, ``*_bidir``
bidirectional, other link bandwidths per direction); a value overrides it with the
``density:`` or ``direction:`` key when its source says otherwise or says nothing.
Read them with ``kb.attributes(id, field)``.
"""

from __future__ import annotations

from typing import Any

DENSITIES = ("dense", "sparse", "unstated")
DIRECTIONS = ("per-direction", "bidirectional", "unstated")

#: link-bandwidth fields per table (HBM bandwidths are not links)
LINK_FIELDS = {
    "chips": {"scaleup_bandwidth", "scaleup_bandwidth_bidir", "scaleout_bandwidth"},
    "racks": {"scaleout_per_chip", "domain_scaleup_bandwidth"},
    "network": {"lane_rate", "port_speed", "switch_bandwidth", "bandwidth"},
}
#: link fields that are stated "as the source states it" (no default direction)
_UNSTATED_DIRECTION = {("racks", "domain_scaleup_bandwidth")}
_DENSE_FIELDS = {("racks", "domain_bf16"), ("racks", "domain_fp8"), ("racks", "domain_fp4")}


def default_density(table: str, field: str) -> str:
    """The density a field's name implies ('' when the field is not FLOP/s)."""
    if field.startswith("sparse_"):
        return "sparse"
    if field.startswith("dense_") or (table, field) in _DENSE_FIELDS:
        return "dense"
    return ""


def default_direction(table: str, field: str) -> str:
    """The direction a field's name implies ('' when the field is not a link bandwidth)."""
    if field not in LINK_FIELDS.get(table, ()):
        return ""
    if (table, field) in _UNSTATED_DIRECTION:
        return "unstated"
    return "bidirectional" if field.endswith("_bidir") else "per-direction"


def check(table: str, field: str, density: object, direction: object) -> list[str]:
    """Problems with explicit ``density``/``direction`` keys of a value (None: not given)."""
    problems = []
    if density is not None:
        if not default_density(table, field):
            problems.append(f"density given for a field that is not FLOP/s ({density!r})")
        elif density not in DENSITIES:
            problems.append(f"density {density!r} is not one of {', '.join(DENSITIES)}")
    if direction is not None:
        if not default_direction(table, field):
            problems.append(f"direction given for a field that is not a link bandwidth "
                            f"({direction!r})")
        elif direction not in DIRECTIONS:
            problems.append(f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}")
    return problems


def check_literal(density: object, direction: object) -> str:
    """Problem with the density/direction of a literal input of a declaration, or ''."""
    if density not in (None, "", *DENSITIES):
        return f"density {density!r} is not one of {', '.join(DENSITIES)}"
    if direction not in (None, "", *DIRECTIONS):
        return f"direction {direction!r} is not one of {', '.join(DIRECTIONS)}"
    return ""


def resolve(table: str, field: str, density: str | None = None, direction: str | None = None
            ) -> tuple[str, str]:
    """``(density, direction)`` of a value: its explicit keys, else the field's defaults."""
    return (density if density is not None else default_density(table, field),
            direction if direction is not None else default_direction(table, field))


def comparable(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when two facts count the same thing (same density and same direction).

    ``unstated`` compares with nothing but itself: a figure whose direction is not known
    is never set against a per-direction or a bidirectional one.
    """
    return bool(a.get("density", "") == b.get("density", "")
                and a.get("direction", "") == b.get("direction", ""))
