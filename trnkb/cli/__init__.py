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

from trnkb.specfile import SpecError, _one_line

app = typer.Typer(
    name="trnkb",
    help="Sourced, unit-checked AI-accelerator specifications: show, compare, validate, export.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# Order is the order of `trnkb --help`.
TOPICS = ("kbcmds", "calc", "check", "claims", "topology", "engine")

for _topic in TOPICS:
    if importlib.util.find_spec(f"trnkb.cli.{_topic}") is not None:
        importlib.import_module(f"trnkb.cli.{_topic}").register(app)


def main(argv: list[str] | None = None) -> None:
    """Run the command line; every refusal of bad input is one ``error:`` line and exit 1."""
    try:
        code = app(args=argv, standalone_mode=False)
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        sys.exit(1)
    except typer.TyperException as e:  # click's errors: unknown option, bad choice, not an int
        if type(e).__name__ == "NoArgsIsHelpError":  # `trnkb engine` alone: show the help
            e.show()
            sys.exit(e.exit_code)
        ctx = getattr(e, "ctx", None)
        where = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        msg = e.format_message() if hasattr(e, "format_message") else str(e)
        print(_one_line(f"error: {msg}{where}"), file=sys.stderr)
        sys.exit(1)
    except SpecError as e:
        for line in e.errors:
            print(line, file=sys.stderr)
        print(f"{len(e.errors)} problem(s); nothing loaded.", file=sys.stderr)
        sys.exit(1)
    except (KeyError, ValueError) as e:  # bad user input: unknown id, bad quantity...
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"error: {_one_line(str(msg))}", file=sys.stderr)
        sys.exit(1)
    except OSError as e:  # a path that cannot be read or written: say which and why
        what = f"{e.filename}: " if e.filename else ""
        print(_one_line(f"error: {what}{e.strerror or e}"), file=sys.stderr)
        sys.exit(1)
    if isinstance(code, int) and code:
        sys.exit(code)
