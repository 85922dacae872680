"""Every numeric option of every command is typed (trnkb.cli.params) and refuses bad numbers
in one ``error:`` line, exit 1, while the command line is parsed: before any work, so the
knowledge base is never loaded (the test spies on the loaders to check that).

The expected messages are written here from the option's declared bounds, not taken from
the code under test.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import typer.main

from trnkb.cli import app, main
from trnkb.cli.params import Positive, Whole

# valid base arguments (only what a command requires before its numbers are read)
BASE = {
    ("workload", "train"): ["--model", "m", "--system", "s", "--chips", "8"],
    ("workload", "serve"): ["--model", "m", "--system", "s"],
    ("workload", "plans"): ["--model", "m", "--system", "s", "--chips", "8"],
    ("workload", "plan-fleet"): ["--model", "m", "--system", "s"],
    ("workload", "cost-target"): ["--model", "m", "--system", "s"],
    ("workload", "train-plan"): ["--model", "m", "--system", "s"],
}


def _options():
    """(command path, option, its annotation, its parser) of every option."""
    def walk(c, path=()):
        if hasattr(c, "list_commands"):
            for name in c.list_commands(None):
                yield from walk(c.get_command(None, name), (*path, name))
        else:
            for p in c.params:
                td = getattr(p, "type_descriptor", None)
                if td is not None and p.param_type_name == "option":
                    yield path, p.opts[0], td.annotation, td.parameter_info.parser

    return list(walk(typer.main.get_command(app)))


ALL = _options()
OPTIONS = [(p, o, parser) for p, o, _, parser in ALL if isinstance(parser, Whole | Positive)]
# hostile text -> the words of its refusal, for a whole number and for a positive number
HOSTILE = {
    "1e30": ("must be a whole number, not '1e30'", None),
    "1.5": ("must be a whole number, not '1.5'", None),
    "nan": ("must be a whole number, not 'nan'", "must be a positive number, not 'nan'"),
    "inf": ("must be a whole number, not 'inf'", "must be a positive number, not 'inf'"),
    "-inf": ("must be a whole number, not '-inf'", "must be a positive number, not '-inf'"),
    "1e400": ("must be a whole number, not '1e400'", "must be a positive number, not '1e400'"),
    "": ("must be a whole number, not ''", "must be a number, not ''"),
    "banana": ("must be a whole number, not 'banana'", "must be a number, not 'banana'"),
    "-3": ("must be at least", "must be a positive number, not '-3'"),
    "0": ("must be at least", "must be a positive number, not '0'"),
    "9" * 25: ("is above the limit of", None),
    "9" * 5000: ("must be a whole number, not '" + "9" * 39, None),
}


def _expected(parser: Whole | Positive, text: str) -> str | None:
    whole, positive = HOSTILE[text]
    if isinstance(parser, Positive):
        return positive
    if whole == "must be at least":
        return None if int(text) >= parser.low else f"must be at least {parser.low}, got {text}"
    if whole == "is above the limit of":
        return None if parser.limit is None else f"is above the limit of {parser.limit:,}"
    return whole


def test_the_commands_have_typed_numbers():
    named = {(p, o) for p, o, _ in OPTIONS}
    for expected in [(("engine", "gemm"), "--m"), (("engine", "gemm"), "--seed"),
                     (("engine", "attention"), "--heads-kv"), (("engine", "mla"), "--rope-dim"),
                     (("workload", "serve"), "--chips"), (("workload", "serve"), "--rate"),
                     (("workload", "train"), "--tokens"), (("workload", "train-plan"), "--days")]:
        assert expected in named


def test_every_int_or_float_option_is_typed():
    untyped = [(p, o) for p, o, ann, parser in ALL
               if ann in (int, float, int | None, float | None)
               and not isinstance(parser, Whole | Positive)]
    assert not untyped


def test_the_engine_size_limit_is_the_engines():
    from trnkb.cli.engine import MAX_DIM
    from trnkb.engine.limits import MAX_DIM as ENGINE_MAX_DIM

    assert MAX_DIM == ENGINE_MAX_DIM


@pytest.fixture
def no_kb(monkeypatch):
    """Records every load of the knowledge base (or of the engine's snapshot of it); the
    spies call through, so a module that imported one by name meanwhile still works."""
    import trnkb
    import trnkb.engine.snapshot
    import trnkb.kb

    calls: list[str] = []

    def spy(name, real):
        def load(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)
        return load

    monkeypatch.setattr(trnkb.kb, "load", spy("trnkb.kb.load", trnkb.kb.load))
    monkeypatch.setattr(trnkb, "load", spy("trnkb.load", trnkb.load))
    monkeypatch.setattr(trnkb.engine.snapshot, "all_inputs",
                        spy("all_inputs", trnkb.engine.snapshot.all_inputs))
    return calls


@pytest.mark.parametrize("path, option, parser", OPTIONS,
                         ids=[f"{' '.join(p)} {o}" for p, o, _ in OPTIONS])
def test_a_bad_number_is_refused_in_one_line_before_any_work(no_kb, path, option, parser):
    for text, _ in HOSTILE.items():
        want = _expected(parser, text)
        if want is None:
            continue
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                pytest.raises(SystemExit) as ex:
            main([*path, *BASE.get(path, []), option, text])
        lines = err.getvalue().splitlines()
        assert ex.value.code == 1, (option, text)
        assert len(lines) == 1 and lines[0].startswith(f"error: {option} "), (option, lines)
        assert want in lines[0] and "Traceback" not in err.getvalue(), (option, text, lines)
    assert not no_kb, f"a refusal of {option} loaded {no_kb}"


def test_valid_numbers_parse_to_numbers():
    assert Whole("--chips", 10)("1_000"[:1]) == 1
    assert Whole("--chips")(" +1_024 ") == 1024
    assert Whole("--seed", low=0)("0") == 0
    assert Positive("--tokens")("15e12") == 15e12
    assert Positive("--rate")("1_000.5") == 1000.5
    assert Positive("--days")(30) == 30.0 and isinstance(Positive("--days")(30), float)
