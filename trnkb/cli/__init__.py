"""The ``trnkb`` command line.

Each topic lives in its own module under ``trnkb.cli`` and exposes ``register(app)``;
this module only assembles them and turns expected errors into a one-line message and
exit code 1 (never a traceback).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

from trnkb.specfile import SpecError

app = typer.Typer(
    name="trnkb",
    help="Sourced, unit-checked AI-accelerator specifications: show, compare, validate, export.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

def _version(value: bool) -> None:
    if value:
        from trnkb import __version__

        print(f"trnkb {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the trnkb version and exit."),
) -> None:
    """Sourced, unit-checked AI-accelerator specifications: show, compare, validate, export."""


# Order is the order of `trnkb --help`.
TOPICS = ("kbcmds", "calc", "check", "claims", "topology", "engine", "workload", "diff", "audit")

for _topic in TOPICS:
    if importlib.util.find_spec(f"trnkb.cli.{_topic}") is not None:
        importlib.import_module(f"trnkb.cli.{_topic}").register(app)


def main(argv: list[str] | None = None) -> None:
    try:
        app(args=argv, standalone_mode=True)
    except SpecError as e:
        for line in e.errors:
            print(line, file=sys.stderr)
        print(f"{len(e.errors)} problem(s); nothing loaded.", file=sys.stderr)
        sys.exit(1)
    except (KeyError, ValueError) as e:  # bad user input (DiffError is a ValueError): unknown id, bad quantity...
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"error: {msg}", file=sys.stderr)
        sys.exit(1)
