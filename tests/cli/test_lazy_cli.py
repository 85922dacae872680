"""`trnkb --help` imports no topic module, and the static command table matches them."""

import subprocess
import sys
from pathlib import Path

import pytest

from trnkb.cli import COMMANDS, TOPICS, _topic_commands

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("topic", TOPICS)
def test_command_table_matches_what_each_topic_registers(topic):
    registered = _topic_commands(topic)
    listed = {n for n, (t, _) in COMMANDS.items() if t == topic}
    fix = "update COMMANDS in trnkb/cli/__init__.py (the help `trnkb --help` shows)"
    assert set(registered) == listed, fix
    for name, cmd in registered.items():
        assert COMMANDS[name][1] == cmd.get_short_help_str(1000), fix


def test_help_lists_every_command_without_importing_heavy_modules():
    code = ("import sys\nfrom trnkb.cli import main\nsys.argv = ['trnkb', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pandas', 'pint', 'numpy', 'rich', 'networkx', 'yaml') or m.startswith('trnkb.')),"
            " file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    for name in COMMANDS:
        assert f"  {name} " in r.stdout
    assert r.stderr.strip() == "['trnkb.cli']"


def test_a_command_imports_only_its_topic():
    code = ("import sys\nfrom trnkb.cli import main\nsys.argv = ['trnkb', 'calc', '--list']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('trnkb.cli.')), file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "peak-flops" in r.stdout
    assert r.stderr.strip() == "['trnkb.cli.calc']"


def _leaves(cmd, path=()):
    if hasattr(cmd, "commands"):  # a group (typer vendors its own click)
        for name, sub in cmd.commands.items():
            yield from _leaves(sub, (*path, name))
    else:
        yield path, cmd


@pytest.mark.parametrize("topic", TOPICS)
def test_every_option_and_command_says_what_it_is(topic):
    # `--help` is the manual: an option listed without a sentence is a question left open
    checked = 0
    for name, top in _topic_commands(topic).items():
        for path, cmd in _leaves(top, (name,)):
            assert (cmd.help or "").strip(), f"trnkb {' '.join(path)} has no help text"
            bare = [p.opts[0] for p in cmd.params
                    if p.param_type_name == "option" and not (p.help or "").strip()]
            assert not bare, f"trnkb {' '.join(path)}: options without help: {bare}"
            checked += 1
    assert checked
