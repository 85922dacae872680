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

Quantity columns of DataFrames (pint-pandas) use the same registry once
:mod:`trnkb.units.frames` is imported (the knowledge base's wide tables do it); this
module itself imports neither pandas nor pint-pandas.

May import: nothing of trnkb (it is the bottom layer).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from importlib import resources
from pathlib import Path
from typing import Any

import pint
from pint.facets.plain import PlainUnit

__all__ = [
    "DIMENSIONS", "Q_", "Quantity", "QuantityError", "format_number", "format_quantity",
    "format_unit", "has_dimension", "is_binary_prefixed", "parse", "ureg",
]

UNITS_FILE = "units_en.txt"


class QuantityError(ValueError):
    """Text that is not ``<number> <unit>``: unknown unit, arithmetic, nan, no number..."""


def _cache_folder() -> Path | None:
    """pint's own disk cache of parsed definitions (keyed by the files' content hash), in
    trnkb's user cache directory (:func:`trnkb.userdirs.cache_dir`); None parses every time."""
    from trnkb.userdirs import cache_dir

    return cache_dir(f"pint-{pint.__version__}")


def _make_registry() -> pint.UnitRegistry[Any]:
    path = resources.files("trnkb").joinpath("data", UNITS_FILE)
    with resources.as_file(path) as p:
        folder = _cache_folder()
        if folder is not None:
            try:
                return pint.UnitRegistry(str(p), cache_folder=folder)
            except Exception:  # an unreadable cache entry: parse the definitions
                pass
        return pint.UnitRegistry(str(p))


ureg: pint.UnitRegistry[Any] = _make_registry()
pint.set_application_registry(ureg)  # type: ignore[no-untyped-call]

Q_ = ureg.Quantity
Quantity = ureg.Quantity
_DIMENSIONLESS = ureg.dimensionless  # one Unit: ``ureg.dimensionless`` parses on every access

# pint-pandas (hence pandas, ~0.25 s of import) is bound to this registry by
# :mod:`trnkb.units.frames`, imported where a ``pint[...]`` column is made, not here: a
# command that computes with scalar quantities only does not pay for pandas.

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

MAX_TEXT = 200  # characters of a quantity string
MAX_WORD = 64  # characters of one unit word (pint's unit lookup is quadratic in it)
MAX_DEPTH = 4  # nested parentheses in a unit expression
MAX_EXPONENT = 12  # |n| in ``unit**n``

_NUMBER = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\d.]|[eE][-+\d])\s*")
_NON_FINITE = re.compile(r"^[-+]?(?:nan|inf(?:inity)?)\b", re.IGNORECASE)
_TOKEN = re.compile(r"\s*(?:(?P<word>[^\W\d]\w*|%)|(?P<pow>\*\*|\^)|(?P<op>[*/])"
                    r"|(?P<lp>\()|(?P<rp>\))|(?P<int>[-+]?\d+))")


def _show(text: str, cap: int = 40) -> str:
    """``repr`` of ``text``, cut to ``cap`` characters (never echo an unbounded value)."""
    return repr(text) if len(text) <= cap else repr(text[:cap]) + f"... ({len(text):,} chars)"


def _check_unit_expression(unit: str, text: str) -> None:
    """Refuse anything but unit words, ``*``, ``/``, ``**int`` and parentheses."""
    pos, depth, operand = 0, 0, True  # operand: a word or '(' is expected next
    if unit.startswith("/"):  # a leading '/' is a reciprocal unit: ``865000 / s``
        pos = 1
    powered = False  # the last factor already has an exponent: no ``a**2**3``
    while pos < len(unit):
        m = _TOKEN.match(unit, pos)
        if not m:
            bad = unit[pos:].strip()[:1]
            raise QuantityError(f"cannot read {_show(text)} as a quantity: unexpected {bad!r} in "
                                f"the unit (a unit is words with *, / and **n, no arithmetic)")
        assert m.lastgroup is not None  # every alternative of _TOKEN is a named group
        kind, tok = m.lastgroup, m.group(m.lastgroup)
        pos = m.end()
        if kind == "word":
            if len(tok) > MAX_WORD:
                raise QuantityError(f"cannot read {_show(text)} as a quantity: unit word of "
                                    f"{len(tok):,} characters (limit {MAX_WORD})")
            operand, powered = False, False
        elif kind == "lp":
            depth += 1
            if depth > MAX_DEPTH:
                raise QuantityError(f"cannot read {_show(text)} as a quantity: parentheses nested "
                                    f"deeper than {MAX_DEPTH}")
            operand = True
        elif kind == "rp":
            if operand or depth == 0:
                raise QuantityError(f"cannot read {_show(text)} as a quantity: unbalanced ')'")
            depth -= 1
            powered = False
        elif kind == "op":
            if operand:
                raise QuantityError(f"cannot read {_show(text)} as a quantity: {tok!r} without a "
                                    f"unit before it")
            operand = True
        elif kind == "pow":
            e = _TOKEN.match(unit, pos)
            if (operand or powered or not e or e.lastgroup != "int"
                    or abs(int(e.group("int"))) > MAX_EXPONENT):
                raise QuantityError(f"cannot read {_show(text)} as a quantity: '**' takes a whole "
                                    f"number from -{MAX_EXPONENT} to {MAX_EXPONENT}")
            pos, powered = e.end(), True
        else:  # a number inside the unit: arithmetic on numbers is not a quantity
            raise QuantityError(f"cannot read {_show(text)} as a quantity: a number inside the "
                                f"unit (write one plain number, then the unit)")
    if operand or depth:
        raise QuantityError(f"cannot read {_show(text)} as a quantity: the unit is incomplete")


def _units(unit: str, text: str = "") -> pint.Unit:
    """The Unit of ``unit`` (cached per unit text: pint's parser is slow, and most values
    share a few units); errors are worded with the whole ``text``."""
    u = _units_ok(unit)
    return u if u is not None else _units_uncached(unit, text)


@functools.lru_cache(maxsize=1024)
def _units_ok(unit: str) -> pint.Unit | None:
    try:
        return _units_uncached(unit, unit)
    except QuantityError:
        return None


def _units_uncached(unit: str, text: str = "") -> pint.Unit:
    _check_unit_expression(unit, text or unit)
    try:
        return ureg.parse_units("1 " + unit if unit.startswith("/") else unit)
    except pint.errors.UndefinedUnitError as e:
        names = ", ".join(map(str, getattr(e, "unit_names", None) or [unit]))
        raise QuantityError(f"unknown unit {_show(names)} in {_show(text or unit)}") from None
    except Exception as e:  # pint's parser raises assorted errors for odd input
        raise QuantityError(f"cannot read {_show(text or unit)} as a quantity: invalid unit "
                            f"({type(e).__name__})") from None


def _number(token: str, text: str) -> int | float:
    value: int | float = float(token) if any(c in token for c in ".eE") else int(token)
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        finite = False
    if not finite:
        raise QuantityError(f"cannot read {_show(text)} as a quantity: number out of range")
    return value


def parse(text: str | int | float) -> pint.Quantity[Any]:
    """Parse ``"144 GB"`` into a Quantity of this registry (a bare number is dimensionless).

    Only ``<plain decimal number> <unit expression>`` or a bare number is accepted: the
    unit is unit words and prefixes joined by ``*``, ``/``, ``**n`` (whole ``n``, at most
    12) and parentheses (a leading ``/`` for a rate: ``865000 / s``), with no arithmetic
    on numbers. Text is capped at 200 characters
    and each unit word at 64. The unit is parsed once per distinct unit string.

    Raises :class:`QuantityError` (a ``ValueError``) with a one-line message otherwise:
    unknown units, nan, inf, ``9**9**9``, a unit with no number.

    >>> parse("144 GiB").to("B").magnitude  # 144 * 2**30
    154618822656
    """
    if isinstance(text, bool):
        raise QuantityError(f"expected a quantity, got {text!r}")
    if isinstance(text, (int, float)):
        try:
            finite = math.isfinite(text)
        except OverflowError:  # an int beyond float range
            finite = False
        if not finite:
            why = "is out of range" if isinstance(text, int) else "is not a finite number"
            raise QuantityError(f"{_show(str(text))} {why}")
        return Q_(text, _DIMENSIONLESS)
    if not isinstance(text, str):
        raise QuantityError(f"expected a quantity like '144 GB', got {type(text).__name__} "
                            f"{_show(str(text))}")
    if len(text) > MAX_TEXT:
        raise QuantityError(f"quantity of {len(text):,} characters (limit {MAX_TEXT}): "
                            f"{_show(text)}")
    if not text.isascii():  # fullwidth digits and letters fold to ASCII; other digits do not
        text = _ascii_number(text)
    if not text.strip():
        raise QuantityError("empty quantity; write e.g. '144 GB'")
    stripped = text.strip()
    if _NON_FINITE.match(stripped):
        raise QuantityError(f"cannot read {_show(text)} as a quantity: not a finite number")
    m = _NUMBER.match(text)
    if not m:
        hint = "a unit with no number" if _TOKEN.match(stripped) and stripped[0].isalpha() else \
            "expected a plain number followed by a unit"
        raise QuantityError(f"cannot read {_show(text)} as a quantity: {hint} (e.g. '144 GB')")
    value = _number(m.group(1), text)
    unit = _BPS.sub(r"\1bit/s", text[m.end():].strip())
    return Q_(value, _units(unit, text) if unit else _DIMENSIONLESS)


_BPS = re.compile(r"(?<![A-Za-z])([kMGTP]?)bps(?![A-Za-z])")  # "Gbps" is Gbit/s, not pint's baud


def _ascii_number(text: str) -> str:
    """``text`` after NFKC normalisation; a digit that is still not ASCII (Arabic-Indic,
    Devanagari...) is refused, naming its code point."""
    norm = unicodedata.normalize("NFKC", text)
    for ch in norm:
        if ch.isdigit() and not ch.isascii():
            raise QuantityError(f"cannot read {_show(text)} as a quantity: digit U+{ord(ch):04X} "
                                f"({unicodedata.name(ch, '?')}) is not an ASCII digit 0-9")
    return norm


def has_dimension(q: pint.Quantity[Any], dim: str) -> bool:
    """True when ``q`` has the dimensionality named in :data:`DIMENSIONS` (or a raw one)."""
    want = DIMENSIONS.get(dim, dim)
    target = ureg.get_dimensionality(want) if want else ureg.dimensionless.dimensionality
    return q.dimensionality == target


_BINARY = ("kibi", "mebi", "gibi", "tebi", "pebi", "Ki", "Mi", "Gi", "Ti", "Pi")


@functools.lru_cache(maxsize=1024)
def is_binary_prefixed(unit: pint.Unit | str) -> bool:
    """True when the unit string uses a binary prefix (KiB, MiB, GiB, TiB...)."""
    text = str(unit)  # pint formats a Unit on every str(): once here, then cached
    return any(p in text for p in _BINARY)


# --------------------------------------------------------------------------- formatting

_SYMBOL_OVERRIDES = {"lane": "lane", "lanes": "lane", "year": "year"}  # pint: "lanes", "a"


def _to_unit(unit: PlainUnit | pint.Quantity[Any] | str) -> PlainUnit:
    if isinstance(unit, pint.Quantity):
        return unit.units
    if isinstance(unit, str):
        return _units(unit) if unit.strip() else ureg.dimensionless
    return unit


@functools.lru_cache(maxsize=1024)
def _format_unit_cached(unit: PlainUnit) -> str:
    terms: dict[str, Any] = {}  # symbol -> exponent (pint's int, float or Fraction)
    order: list[str] = []

    def add(symbol: str, exp: Any) -> None:
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


def format_unit(unit: PlainUnit | pint.Quantity[Any] | str) -> str:
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


def format_number(x: Any, sig: int = 4) -> str:
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


def format_quantity(q: Any, sig: int = 4) -> str:
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
