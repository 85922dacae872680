"""``trnkb calc``: run a derived calculator from the command line.

``trnkb calc --list`` shows every calculator and its parameters;
``trnkb calc NAME --param value ... [--json]`` runs one. Quantities are strings pint
parses (``"12.8 Tbit/s"``).
"""

from __future__ import annotations

import json
import sys

import typer

from trnkb.calc import CALCULATORS, calculator, run
from trnkb.spec.specfile import _one_line
from trnkb.units import format_quantity
from trnkb.units.qtypes import Quantity


def _pairs(extra: list[str]) -> dict[str, str]:
    args: dict[str, str] = {}
    i = 0
    while i < len(extra):
        flag = extra[i]
        if not flag.startswith("--"):
            raise ValueError(f"expected --param value, got {flag!r}")
        key = flag[2:]
        if "=" in key:
            key, val = key.split("=", 1)
            i += 1
        else:
            if i + 1 >= len(extra):
                raise ValueError(f"{flag} needs a value")
            val = extra[i + 1]
            i += 2
        args[key] = val
    return args


def _fmt(q: Quantity) -> str:
    return format_quantity(q, sig=6)  # the one formatter


def calc_command(
    ctx: typer.Context,
    name: str = typer.Argument(None, help="Calculator name (see --list)."),
    list_: bool = typer.Option(False, "--list", help="List calculators and their parameters."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Run a derived calculator: trnkb calc NAME --param value ... [--json]."""
    try:
        if list_ or name is None:
            if as_json:
                print(json.dumps({n: {"usage": c.usage(), "unit": c.unit, "summary": c.summary}
                                  for n, c in CALCULATORS.items()}, indent=2))
            else:
                for n, c in CALCULATORS.items():
                    print(f"{n} {c.usage()}\n    {c.summary}")
            return
        calc = calculator(name)
        res = run(name, _pairs(list(ctx.args)))
    except (KeyError, ValueError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(_one_line(f"error: {msg}"), file=sys.stderr)
        raise typer.Exit(1) from None
    if as_json:
        print(json.dumps(res.to_dict(calc.unit or None), indent=2))
        return
    d = res.derivation
    print(f"{name} = {_fmt(res.value.to(calc.unit) if calc.unit else res.value)}")
    print(f"  formula: {d.formula}")
    for i in d.inputs:
        print(f"  {i.name} = {_fmt(i.value)}")
    for k, v in d.outputs.items():
        print(f"  -> {k} = {_fmt(v)}")
    for n in d.notes:
        print(f"  note: {n}")


def register(app: typer.Typer) -> None:
    app.command(
        "calc",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )(calc_command)
