"""The project's one unit registry.

pint's default registry treats bits and bytes as dimensionless and has no FLOP, so
``TB/s`` would convert to ``GHz``. Here information and compute get dimensions of their
own. Prefixes follow pint: ``GB`` is decimal (1e9 B), ``GiB`` binary (2**30 B); we keep
whatever a source wrote. ``lane`` is a dimensionless count so ``lanes x Gbit/s`` is a
bandwidth.
"""

from __future__ import annotations

import functools
import math
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


class QuantityError(ValueError):
    """Text that is not ``<plain decimal number> <unit expression>``; one-line message."""


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
    powered = False  # the last factor already has an exponent: no ``a**2**3``
    while pos < len(unit):
        m = _TOKEN.match(unit, pos)
        if not m:
            bad = unit[pos:].strip()[:1]
            raise QuantityError(f"cannot read {_show(text)} as a quantity: unexpected {bad!r} in "
                                f"the unit (a unit is words with *, / and **n, no arithmetic)")
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
            if operand or powered or not e or e.lastgroup != "int" or abs(int(e.group("int"))) > MAX_EXPONENT:
                raise QuantityError(f"cannot read {_show(text)} as a quantity: '**' takes a whole "
                                    f"number from -{MAX_EXPONENT} to {MAX_EXPONENT}")
            pos, powered = e.end(), True
        else:  # a number inside the unit: arithmetic on numbers is not a quantity
            raise QuantityError(f"cannot read {_show(text)} as a quantity: a number inside the unit "
                                f"(write one plain number, then the unit)")
    if operand or depth:
        raise QuantityError(f"cannot read {_show(text)} as a quantity: the unit is incomplete")


@functools.lru_cache(maxsize=1024)
def _units(unit: str, text: str = "") -> pint.Unit:
    _check_unit_expression(unit, text or unit)
    try:
        return ureg.parse_units(unit)
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


def parse(text: str | int | float) -> pint.Quantity:
    """Parse ``"144 GB"`` into a Quantity of this registry (a bare number is dimensionless).

    Only ``<plain decimal number> <unit expression>`` or a bare number is accepted: the
    unit is unit words and prefixes joined by ``*``, ``/``, ``**n`` (whole ``n``, at most
    12) and parentheses, with no arithmetic on numbers. Text is capped at 200 characters
    and each unit word at 64. The unit is parsed once per distinct unit string.

    Raises :class:`QuantityError` (a ``ValueError``) with a one-line message otherwise:
    unknown units, nan, inf, ``9**9**9``, a unit with no number.
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
        return Q_(text, "")
    if not isinstance(text, str):
        raise QuantityError(f"expected a quantity like '144 GB', got {type(text).__name__} "
                            f"{_show(str(text))}")
    if len(text) > MAX_TEXT:
        raise QuantityError(f"quantity of {len(text):,} characters (limit {MAX_TEXT}): {_show(text)}")
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
    unit = text[m.end():].strip()
    return Q_(value, _units(unit, text) if unit else "")


def has_dimension(q: pint.Quantity, dim: str) -> bool:
    """True when ``q`` has the dimensionality named in :data:`DIMENSIONS` (or a raw one)."""
    want = DIMENSIONS.get(dim, dim)
    return q.dimensionality == (ureg.get_dimensionality(want) if want else ureg.dimensionless.dimensionality)


def is_binary_prefixed(unit: pint.Unit | str) -> bool:
    """True when the unit string uses a binary prefix (KiB, MiB, GiB, TiB...)."""
    return any(p in str(unit) for p in ("kibi", "mebi", "gibi", "tebi", "pebi", "Ki", "Mi", "Gi", "Ti", "Pi"))
