"""Typed command-line numbers: an option's text parsed and bounded where it is read.

Each type is a parameter type typer runs on the option's value (``typer.Option(parser=
Whole("--chips", 10_000_000))``; typer 0.29 vendors click without ``click.ParamType`` and
takes a ``parser`` callable instead), so a bad number is refused while the command line is
parsed, before any work starts (no knowledge-base load), with one line that names the
option, what was given and what would be right. :func:`trnkb.cli.main` prints it as
``error: ...`` and exits 1 (:class:`Refused` carries no usage hint).

The same types check numbers found inside other options (``--set NAME=LOW:CENTRAL:HIGH``,
``--lora RANK``) and bounds that depend on another option (``--heads-kv`` at most
``--heads``): call the type on the value.
"""

from __future__ import annotations

import math
import sys
from typing import IO, Any

from typer._click.exceptions import ClickException  # typer's click: what its runner catches

_LONGEST = 30  # characters of a whole number read; longer text is refused, never parsed


class Refused(ClickException):
    """An option value that is refused: its one-line message is the whole error, shown as
    ``error: ...`` whether :func:`trnkb.cli.main` or typer's own runner catches it."""

    def show(self, file: IO[Any] | None = None) -> None:
        print(f"error: {self.format_message()}", file=file or sys.stderr)


class Whole:
    """A whole number from ``low`` to ``limit`` (no upper bound when ``limit`` is None).

    Text is digits with an optional sign, ``_`` separators and surrounding spaces
    (``1_000``); an int passes as it is (a default). ``1.5``, ``1e3``, ``nan`` and text
    longer than 30 characters are not whole numbers.
    """

    def __init__(self, option: str, limit: int | None = None, low: int = 1) -> None:
        self.option, self.limit, self.low = option, limit, low

    def __call__(self, value: object) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            t = str(value).replace("_", "").strip()
            if not t.lstrip("+-").isdigit() or len(t) > _LONGEST:
                raise Refused(f"{self.option} must be a whole number, not {str(value)[:40]!r}")
            n = int(t)
        if n < self.low:
            raise Refused(f"{self.option} must be at least {self.low}, got {n}")
        if self.limit is not None and n > self.limit:
            raise Refused(f"{self.option} {n:,} is above the limit of {self.limit:,}")
        return n


class Positive:
    """A finite number above zero: ``15e12``, ``0.5``, ``1_000`` (a float or an int passes
    as it is, when finite and positive)."""

    def __init__(self, option: str) -> None:
        self.option = option

    def __call__(self, value: object) -> float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            x = float(value)
        else:
            try:
                x = float(str(value).replace("_", ""))
            except ValueError:
                raise Refused(f"{self.option} must be a number, not {str(value)[:40]!r}"
                              ) from None
        if not math.isfinite(x) or x <= 0:
            raise Refused(f"{self.option} must be a positive number, not {str(value)[:40]!r}")
        return x


class Shown(float):
    """A float default that ``--help`` shows as written (``15e12``, not ``15000000000000.0``);
    :class:`Positive` hands the command a plain float."""

    _text: str

    def __new__(cls, text: str) -> Shown:
        self = super().__new__(cls, float(text))
        self._text = text
        return self

    def __str__(self) -> str:
        return self._text
