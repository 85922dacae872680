"""The ``trnkb`` command line.

Each topic lives in its own module under ``trnkb.cli`` and exposes ``register(app)``;
this module only assembles them and turns expected errors into a one-line message and
exit code 1 (never a traceback).

Topics are imported lazily: ``trnkb --help`` lists the commands from :data:`COMMANDS`
(name -> topic module and one-line help) without importing any topic, and a command's
module is imported only when that command runs (or its own ``--help`` is asked for), so
``trnkb --help`` and ``trnkb calc --list`` do not pay for pandas, the knowledge base or the
engine. A topic in :data:`TOPICS` that is missing from :data:`COMMANDS` still works: it is
imported eagerly (tests/cli/test_lazy_cli.py checks the table against the modules).

May import: every layer below it (it is the top).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any, cast

import typer
import typer.main
from typer import _click as click  # typer vendors click: its types, not click's
from typer.core import TyperGroup

# Order is the order of `trnkb --help`.
TOPICS = ("kbcmds", "calc", "check", "claims", "topology", "engine", "workload", "prices", "diff",
          "audit", "peaks", "stale")

# command -> (topic module, one-line help shown by `trnkb --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("kbcmds",
                 "Load and check every spec file (and claim); exit 1 listing every problem."),
    "list": ("kbcmds", "List the tables, or the rows of one table."),
    "show": ("kbcmds", "Every field of one row with its value, unit and source."),
    "compare": ("kbcmds", "Side-by-side values of rows of one table (every field any of them has; "
                          "missing shown as missing)."),
    "sources": ("kbcmds", "The bibliography, with how many values cite each source."),
    "conflicts": ("kbcmds", "Values that disagree between sources (never silently dropped)."),
    "export": ("kbcmds", "Write every table, facts, sources and conflicts plus a Frictionless "
                         "datapackage.json."),
    "calc": ("calc", "Run a derived calculator: trnkb calc NAME --param value ..."),
    "check": ("check", "Compare every derived value with the reported values of the same field."),
    "claims": ("claims",
               "Published statements tested against the knowledge base, with their verdicts."),
    "topology": ("topology",
                 "Scale-up fabric model: switch counts, hops, bandwidths and worked paths."),
    "engine": ("engine", "Run GEMM and attention on a modelled NeuronCore (time and numerics)."),
    "workload": ("workload",
                 "Train and serve models on systems: time, chips, tokens/s, cost, with ranges."),
    "prices": ("prices", "Every accelerator price (cloud and owner cost per chip-hour) with source "
                         "and date."),
    "diff": ("diff", "List what changed between two versions of the knowledge base."),
    "audit": ("audit", "Compare another tool's hardware constants with the knowledge base."),
    "peaks": ("peaks", "Resolve a device string to its chip row and sourced dense peaks (for "
                       "MFU)."),
    "stale": ("stale", "List values whose source is older than a newer same-kind source on the "
                       "same row, and rows still 'announced' that a shipping system, a price or "
                       "a device string names."),
}

HELP = "Sourced, unit-checked AI-accelerator specifications: show, compare, validate, export."


def _topic_commands(topic: str) -> dict[str, click.Command]:
    """Import one topic and return its click commands by name."""
    sub = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False)
    importlib.import_module(f"trnkb.cli.{topic}").register(sub)
    return dict(typer.main.get_group(sub).commands)


class LazyGroup(TyperGroup):
    """A command group that imports a topic module only when one of its commands is used."""

    def _eager_topics(self) -> None:
        listed = {t for t, _ in COMMANDS.values()}
        for topic in TOPICS:
            if topic not in listed and topic not in getattr(self, "_loaded", set()) \
                    and importlib.util.find_spec(f"trnkb.cli.{topic}") is not None:
                self._load(topic)

    def _load(self, topic: str) -> None:
        self._loaded = getattr(self, "_loaded", set()) | {topic}
        for name, cmd in _topic_commands(topic).items():
            self.commands.setdefault(name, cmd)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._eager_topics()
        names = [n for n, (t, _) in COMMANDS.items() if t in TOPICS]
        return names + [n for n in self.commands if n not in names]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            if cmd_name in COMMANDS and COMMANDS[cmd_name][0] in TOPICS:
                self._load(COMMANDS[cmd_name][0])
            else:
                self._eager_topics()
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                rows.append((name, self.commands[name].get_short_help_str(formatter.width - 6)))
            else:
                rows.append((name, COMMANDS[name][1]))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


app = typer.Typer(
    name="trnkb",
    cls=LazyGroup,
    help=HELP,
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


def _one_line(message: str) -> str:
    from trnkb.spec.specfile import _one_line as one_line

    return one_line(message)


def main(argv: list[str] | None = None) -> None:
    """Run the command line; every refusal of bad input is one ``error:`` line and exit 1."""
    try:
        code = app(args=argv, standalone_mode=False)
    except typer.Abort:
        print("error: aborted", file=sys.stderr)
        sys.exit(1)
    except typer.TyperException as e:  # click's errors: unknown option, bad choice, not an int
        if type(e).__name__ == "NoArgsIsHelpError":  # `trnkb engine` alone: show the help
            shown = cast(Any, e)  # click.exceptions.NoArgsIsHelpError
            shown.show()
            sys.exit(shown.exit_code)
        ctx = getattr(e, "ctx", None)
        where = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        msg = e.format_message() if hasattr(e, "format_message") else str(e)
        print(_one_line(f"error: {msg}{where}"), file=sys.stderr)
        sys.exit(1)
    except Exception as e:
        from trnkb.spec.specfile import SpecError

        if isinstance(e, SpecError):
            for line in e.errors:
                print(line, file=sys.stderr)
            print(f"{getattr(e, 'total', len(e.errors)):,} problem(s); nothing loaded.",
                  file=sys.stderr)
            sys.exit(1)
        # bad user input (DiffError is a ValueError): unknown id, bad quantity...
        if isinstance(e, (KeyError, ValueError)):
            msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            print(_one_line(f"error: {msg}"), file=sys.stderr)
            sys.exit(1)
        if isinstance(e, OSError):  # a path that cannot be read or written: which and why
            what = f"{e.filename}: " if e.filename else ""
            print(_one_line(f"error: {what}{e.strerror or e}"), file=sys.stderr)
            sys.exit(1)
        raise
    if isinstance(code, int) and code:
        sys.exit(code)
