"""The project's one unit registry.

pint's default registry treats bits and bytes as dimensionless and has no FLOP, so
``TB/s`` would convert to ``GHz``. Here information and compute get dimensions of their
own. Prefixes follow pint: ``GB`` is decimal (1e9 B), ``GiB`` binary (2**30 B); we keep
whatever a source wrote. ``lane`` is a dimensionless count so ``lanes x Gbit/s`` is a
bandwidth.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

import pint
import pint_pandas

_EXTRA = """
FLOP = [compute] = FLOP = flop
FLOPS = FLOP / second = FLOPS = flops
lane = [] = lanes
transfer = [] = T
USD = [currency]
"""


def _make_registry() -> pint.UnitRegistry:
    # Edit pint's own definitions text rather than redefining afterwards: a late
    # ``define("bit = [information]")`` leaves pint's root-unit cache stale. The text is
    # loaded from memory (no temporary files at import).
    pint_files = resources.files("pint")
    text = pint_files.joinpath("default_en.txt").read_text(encoding="utf-8")
    constants = pint_files.joinpath("constants_en.txt").read_text(encoding="utf-8")
    text = text.replace("\nbit = []\n", "\nbit = [information] = b\n", 1)
    text = text.replace("@import constants_en.txt", constants, 1)
    registry = pint.UnitRegistry(None, cache_folder=None)
    registry.load_definitions((text + _EXTRA).splitlines())
    registry._build_cache()  # what UnitRegistry(filename) does after loading its file
    return registry


ureg: pint.UnitRegistry = _make_registry()
pint.set_application_registry(ureg)
pint_pandas.PintType.ureg = ureg

Q_ = ureg.Quantity
Quantity = ureg.Quantity

DIMENSIONS = {
    "compute_rate": "[compute] / [time]",
    "compute": "[compute]",
    "information": "[information]",
    "bandwidth": "[information] / [time]",
    "frequency": "1 / [time]",
    "power": "[power]",
    "length": "[length]",
    "time": "[time]",
    "dimensionless": "",
}


_NUMBER_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


@functools.lru_cache(maxsize=1024)
def _units(text: str) -> pint.Unit:
    return ureg.parse_units(text)


def parse(text: str | int | float) -> pint.Quantity:
    """Parse ``"144 GB"`` into a Quantity of this registry (numbers become dimensionless).

    The common ``<number> <unit>`` form is split and its unit parsed once per distinct
    unit string (pint's expression parser is slow); anything else goes to pint whole.
    Raises pint's ``UndefinedUnitError`` for unknown units.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return Q_(text, "")
    m = _NUMBER_UNIT.match(str(text))
    if m:
        number, unit = m.groups()
        value = float(number) if any(c in number for c in ".eE") else int(number)
        return Q_(value, _units(unit) if unit else "")
    return Q_(str(text))


def has_dimension(q: pint.Quantity, dim: str) -> bool:
    """True when ``q`` has the dimensionality named in :data:`DIMENSIONS` (or a raw one)."""
    want = DIMENSIONS.get(dim, dim)
    return q.dimensionality == (ureg.get_dimensionality(want) if want else ureg.dimensionless.dimensionality)


def is_binary_prefixed(unit: pint.Unit | str) -> bool:
    """True when the unit string uses a binary prefix (KiB, MiB, GiB, TiB...)."""
    return any(p in str(unit) for p in ("kibi", "mebi", "gibi", "tebi", "pebi", "Ki", "Mi", "Gi", "Ti", "Pi"))
