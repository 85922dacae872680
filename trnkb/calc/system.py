"""System totals: a scale-up domain (UltraServer, NVL rack) summed from its chips.

``total = domain_size x per_chip`` for FLOP/s per precision, HBM capacity and bandwidth,
and scale-up bandwidth (per direction, or bidirectional if the per-chip figure is).
"""

from __future__ import annotations

import pint

from trnkb.calc._common import positive_count, result
from trnkb.calc.derivation import Result
from trnkb.units import parse
from trnkb.units.qtypes import Quantity, QuantityLike, Sources

#: display unit of a total, by dimensionality of the per-chip quantity
_UNITS = {"[compute] / [time]": "PFLOPS", "[information]": "TB",
          "[information] / [time]": "TB/s"}


def domain_total(chips: QuantityLike, per_chip: QuantityLike, *, sources: Sources = None) -> Result:
    """``chips x per_chip`` in a readable unit (PFLOPS, TB, TB/s)."""
    n = positive_count(chips, "chips")
    q = per_chip if isinstance(per_chip, pint.Quantity) else parse(str(per_chip))
    total = n * q
    unit = _UNITS.get(str(q.dimensionality))
    if unit:
        total = total.to(unit)
    return result("domain-total", "chips x per_chip", total, {"chips": n, "per_chip": q},
                  sources)


def domain_totals(chips: QuantityLike, per_chip: dict[str, Quantity], *,
                  sources: Sources = None) -> dict[str, Result]:
    """:func:`domain_total` for every per-chip figure in ``per_chip`` (name -> Quantity).

    ``sources`` may hold ``"chips"`` and the names of ``per_chip`` (KB provenance).
    """
    sources = sources or {}
    out = {}
    for name, q in per_chip.items():
        src = {k: v for k, v in (("chips", sources.get("chips")),
                                 ("per_chip", sources.get(name))) if v}
        out[name] = domain_total(chips, q, sources=src)
    return out
