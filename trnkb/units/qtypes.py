"""Type aliases for quantities, in the spirit of pint's typing module.

``Quantity`` is a pint quantity of the project registry (:data:`trnkb.units.ureg`);
``QuantityLike`` is what calculators accept: a quantity, a string the one parser reads
(``"12.8 Tbit/s"``), or a plain number for counts and ratios.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import pint

# Real objects, not strings: Sphinx and typing.get_type_hints must resolve them.
Quantity: TypeAlias = pint.Quantity[Any]
QuantityLike: TypeAlias = pint.Quantity[Any] | str | int | float
Provenance: TypeAlias = dict[str, Any]
"""A value's provenance as ``kb.provenance`` gives it (source, locator, kind, id, field)."""
Sources: TypeAlias = dict[str, Provenance] | None
"""Provenance per calculator input name."""
