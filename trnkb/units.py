"""The project's one unit registry, its one parser and its one formatter.

pint's default registry treats bits and bytes as dimensionless and has no FLOP, so
``TB/s`` would convert to ``GHz``. Here information and compute get dimensions of their
own. The definitions ship as a data file (``trnkb/data/units_en.txt``: pint's defaults
with ``bit`` given the dimension ``[information]``, plus FLOP, lane, transfer and USD),
loaded with pint's public ``UnitRegistry(filename)``. Prefixes follow pint: ``GB`` is
decimal (1e9 B), ``GiB`` binary (2**30 B); we keep whatever a source wrote. ``lane`` is a
dimensionless count so ``lanes x Gbit/s`` is a bandwidth.

Text in, text out:

- :func:`parse` reads ``"<plain decimal number> <unit expression>"`` (or a bare number)
  and nothing else; anything else raises :class:`QuantityError` with a one-line message.
- :func:`format_unit` writes a unit as an unambiguous symbol string (``Gbit/s``, never
  ``Gb / s``, which pint reads as gilbert per second), read back to the same unit by
  pint's default registry (for units it knows) and by this one.
- :func:`format_quantity` / :func:`format_number` are the human display
  (``"2,517 TFLOP/s"``).
"""

from __future__ import annotations

import functools
import math
import os
import re
from importlib import resources

import pint

__all__ = [
    "DIMENSIONS", "Q_", "Quantity", "QuantityError", "format_number", "format_quantity",
    "format_unit", "has_dimension", "is_binary_prefixed", "parse", "ureg",
]

UNITS_FILE = "units_en.txt"


class QuantityError(ValueError):
    """Text that is not ``<number> <unit>``: unknown unit, arithmetic, nan, no number..."""


def _cache_folder():
    """pint's own disk cache of parsed definitions (keyed by the files' content hash), in
    trnkb's user cache directory; None (parse every time) when it cannot be written or
    ``TRNKB_NO_CACHE`` is set."""
    if os.environ.get("TRNKB_NO_CACHE"):
        return None
    try:
        import platformdirs

        folder = platformdirs.user_cache_path("trnkb", appauthor=False) / f"pint-{pint.__version__}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder if os.access(folder, os.W_OK) else None
    except Exception:  # no home, read-only file system...: no cache
        return None


def _make_registry() -> pint.UnitRegistry:
    path = resources.files("trnkb").joinpath("data", UNITS_FILE)
    with resources.as_file(path) as p:
        folder = _cache_folder()
        if folder is not None:
            try:
                return pint.UnitRegistry(str(p), cache_folder=folder)
            except Exception:  # an unreadable cache entry: parse the definitions
                pass
        return pint.UnitRegistry(str(p))


ureg: pint.UnitRegistry = _make_registry()
pint.set_application_registry(ureg)

Q_ = ureg.Quantity
Quantity = ureg.Quantity


import pint_pandas  # noqa: E402  (after the registry exists)

pint_pandas.PintType.ureg = ureg

DIMENSIONS = {
    "compute_rate": "[compute] / [time]",
    "compute": "[compute]",
    "information": "[information]",
    "bandwidth": "[information] / [time]",
    "frequency": "1 / [time]",
    "power": "[power]",
    "length": "[length]",
    "time": "[time]",
    "cost_rate": "[currency] / [time]",
    "dimensionless": "",
}

# --------------------------------------------------------------------------- parsing

MAX_TEXT = 200  # characters; a spec value or CLI argument is never longer
_NUMBER_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d{1,3})?)(?:\s*(.*?))?\s*$")


@functools.lru_cache(maxsize=1024)
def _units(text: str) -> pint.Unit:
    return ureg.parse_units(text)


def parse(text: str | int | float) -> pint.Quantity:
    """Parse ``"144 GB"`` into a Quantity of this registry (a bare number is dimensionless).

    Accepts only a plain decimal number followed by a unit expression (unit words,
    prefixes, ``*``, ``/``, ``**int``, parentheses). Raises :class:`QuantityError` (a
    ``ValueError``) with a one-line message for anything else: unknown units, a unit
    with no number, ``nan``/``inf``, arithmetic on numbers, over-long text.

    >>> parse("144 GiB").to("B").magnitude  # 144 * 2**30
    154618822656
    """
    if isinstance(text, bool):
        raise QuantityError(f"expected a number with a unit, got {text!r}")
    if isinstance(text, (int, float)):
        if not math.isfinite(text):
            raise QuantityError(f"{text!r} is not a finite number")
        return Q_(text, "")
    s = str(text)
    if len(s) > MAX_TEXT:
        raise QuantityError(f"quantity text longer than {MAX_TEXT} characters")
    m = _NUMBER_UNIT.match(s)
    if not m:
        raise QuantityError(f"cannot read {s!r} as '<number> <unit>' (e.g. '12.8 Tbit/s')")
    number, unit = m.group(1), (m.group(2) or "")
    value = float(number) if any(c in number for c in ".eE") else int(number)
    if isinstance(value, float) and not math.isfinite(value):
        raise QuantityError(f"{s!r} is not a finite number")
    if not unit:
        return Q_(value, "")
    if re.search(r"\d", re.sub(r"\*\*\s*-?\d+", "", unit)):
        # digits only as exponents (``m**2``): no numbers multiplied or divided in
        raise QuantityError(f"{s!r}: the unit {unit!r} contains arithmetic; write one "
                            f"number and a unit (e.g. '12.8 Tbit/s')")
    try:
        u = _units(unit)
    except pint.errors.UndefinedUnitError as e:
        names = ", ".join(map(str, getattr(e, "unit_names", None) or [unit]))
        raise QuantityError(f"unknown unit {names!r} in {s!r}") from None
    except Exception as e:  # pint's expression parser raises assorted errors
        raise QuantityError(
            f"cannot read {s!r} as '<number> <unit>' ({type(e).__name__})") from None
    return Q_(value, u)


def has_dimension(q: pint.Quantity, dim: str) -> bool:
    """True when ``q`` has the dimensionality named in :data:`DIMENSIONS` (or a raw one)."""
    want = DIMENSIONS.get(dim, dim)
    target = ureg.get_dimensionality(want) if want else ureg.dimensionless.dimensionality
    return q.dimensionality == target


def is_binary_prefixed(unit: pint.Unit | str) -> bool:
    """True when the unit string uses a binary prefix (KiB, MiB, GiB, TiB...)."""
    binary = ("kibi", "mebi", "gibi", "tebi", "pebi", "Ki", "Mi", "Gi", "Ti", "Pi")
    return any(p in str(unit) for p in binary)


# --------------------------------------------------------------------------- formatting

_SYMBOL_OVERRIDES = {"lane": "lane", "lanes": "lane"}


def _to_unit(unit) -> pint.Unit:
    if isinstance(unit, pint.Quantity):
        return unit.units
    if isinstance(unit, str):
        return _units(unit) if unit.strip() else ureg.dimensionless
    return unit


@functools.lru_cache(maxsize=1024)
def _format_unit_cached(unit: pint.Unit) -> str:
    terms: dict[str, float] = {}
    order: list[str] = []

    def add(symbol: str, exp: float) -> None:
        if symbol not in terms:
            order.append(symbol)
            terms[symbol] = 0
        terms[symbol] += exp

    for name, exp in unit._units.items():  # UnitsContainer: name -> exponent
        prefix, base, _suffix = ureg.parse_unit_name(name)[0]
        if base == "FLOPS":  # TFLOPS -> TFLOP/s: one spelling for compute rates
            add(ureg.get_symbol(prefix + "FLOP"), exp)
            add("s", -exp)
            continue
        symbol = _SYMBOL_OVERRIDES.get(name) or ureg.get_symbol(name)
        if base == "bit":  # pint's symbol "b" reads back as gilbert with a prefix (Gb)
            symbol = symbol[:-1] + "bit"
        add(symbol, exp)

    def term(sym: str, exp: float) -> str:
        exp = int(exp) if float(exp).is_integer() else exp
        return sym if exp == 1 else f"{sym}**{exp}"

    num = [term(s, terms[s]) for s in order if terms[s] > 0]
    den = [term(s, -terms[s]) for s in order if terms[s] < 0]
    text = "*".join(num) or ("1" if den else "")
    if den:
        text += "/" + (den[0] if len(den) == 1 else "(" + "*".join(den) + ")")
    return text


def format_unit(unit: pint.Unit | pint.Quantity | str) -> str:
    """The unambiguous symbol string of a unit, the one written everywhere.

    Bits are ``bit`` (``Gbit/s``; pint's ``Gb`` is a gilbert), compute rates ``FLOP/s``
    (``TFLOP/s``), products ``*``, one ``/`` with a parenthesised denominator, powers
    ``**n``; dimensionless is ``""``. pint reads the text back to the same unit.

    >>> format_unit("Gbit/s"), format_unit("TFLOPS"), format_unit("GiB")
    ('Gbit/s', 'TFLOP/s', 'GiB')
    """
    u = _to_unit(unit)
    if not u._units:
        return ""
    return _format_unit_cached(u)


def format_number(x, sig: int = 4) -> str:
    """A number for people: ``sig`` significant digits, thousands separators, no exponent.

    The integer part is never replaced by zeros (``123456.7`` is ``123,457``, not
    ``123,500``). NaN is ``nan``; display of missing values (an em dash) is the caller's.

    >>> format_number(2517.0), format_number(4.9), format_number(0.00012346)
    ('2,517', '4.9', '0.0001235')
    >>> format_number(128.00000000000003), format_number(123456.7)
    ('128', '123,457')
    """
    if isinstance(x, pint.Quantity):
        return format_quantity(x, sig)
    if x is None:
        return "nan"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}"
    x = float(x)
    if not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if x == 0:
        return "0"
    r = float(f"{x:.{sig}g}")
    decimals = max(sig - 1 - math.floor(math.log10(abs(r))), 0)
    if decimals == 0:
        text = f"{round(x):,}"
    else:
        text = f"{r:,.{decimals}f}"
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return "0" if text in ("-0", "") else text


def format_quantity(q, sig: int = 4) -> str:
    """A quantity for people: ``"2,517 TFLOP/s"``, ``"144 GiB"``, ``"8"`` (counts).

    Text passes through unchanged; bare numbers are formatted by :func:`format_number`.

    >>> format_quantity(parse("2517 TFLOPS")), format_quantity(parse("1600 Gbit/s"))
    ('2,517 TFLOP/s', '1,600 Gbit/s')
    """
    if isinstance(q, str):
        return q
    if not isinstance(q, pint.Quantity):
        return format_number(q, sig)
    mag = format_number(float(q.magnitude), sig)
    unit = format_unit(q.units)
    return f"{mag} {unit}" if unit else mag
