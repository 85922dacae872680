"""Every command of ``trnkb --help`` against a battery of bad arguments (issue 10).

Each invocation must finish within a bound, print no traceback and either succeed on
input that is legitimately valid (listed in ``ACCEPTS``) or refuse with exit code 1 and
one ``error: ...`` line (or the ``file:line: field: problem`` lines of a spec directory).
Commands run in-process through :func:`trnkb.cli.main` with the shipped knowledge base
loaded once; a few hostile cases also run in a subprocess with a hard timeout.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main

import trnkb
from trnkb.cli import app, main

BOUND = 60  # seconds of CPU for any one invocation (CPU, not wall: the machine is shared)
WALL_BACKSTOP = 900  # a subprocess blocked without using CPU (a pipe read) still ends
SPECS = Path(trnkb.__file__).resolve().parents[1] / "specs"

HOSTILE = ["banana", "(9**9**9) MB", "nan", "inf", "-1", "0", "1e400", "x" * 100_000,
           "TRAINIUM3", ""]

# Valid arguments for each command; the battery replaces one of them at a time.
BASE: dict[tuple[str, ...], list[str]] = {
    ("validate",): [],
    ("list",): ["chips"],
    ("show",): ["trainium3"],
    ("compare",): ["trainium3", "trainium2"],
    ("sources",): [],
    ("conflicts",): [],
    ("export",): ["--out", "out", "--format", "csv"],
    ("calc",): ["ridge-point", "--flops", "2517 TFLOPS", "--bandwidth", "4.9 TB/s"],
    ("check",): [],
    ("claims",): [],
    ("topology",): ["trn3-nl32x2-switched", "--message-size", "1MB"],
    ("engine", "gemm"): ["--m", "128", "--k", "128", "--n", "512", "--no-execute"],
    ("engine", "attention"): ["--seq", "128", "--head-dim", "64", "--no-execute"],
    ("engine", "mla"): ["--seq-kv", "1024", "--heads", "16"],
    ("workload", "train"): ["--model", "llama-3.1-70b", "--system", "trn3-nl72x2-switched",
                            "--chips", "1024", "--tokens", "15e12"],
    ("workload", "serve"): ["--model", "llama-3.1-70b", "--system", "trn3-nl72x2-switched",
                            "--chips", "8", "--batch", "64"],
    ("workload", "plans"): ["--model", "llama-3.1-70b", "--system", "trn3-nl72x2-switched",
                            "--chips", "1024", "--top", "3"],
    # the planners on one small replica and the closed-form engine: cheap, still end to end
    ("workload", "plan-fleet"): ["--model", "llama-3.1-70b", "--system", "gb300-nvl72",
                                 "--power-mw", "1", "--tokens-per-user", "50", "--chips", "8",
                                 "--engine", "closed-form"],
    ("workload", "cost-target"): ["--model", "llama-3.1-70b", "--system", "mi355x-8",
                                  "--max-usd-per-mtok", "0.5", "--chips", "8",
                                  "--engine", "closed-form"],
    ("workload", "train-plan"): ["--model", "llama-3.1-70b", "--system", "trn3-nl72x2-switched",
                                 "--tokens", "15e12", "--days", "30"],
    ("prices",): ["--chip", "mi300x"],
    ("peaks",): ["NVIDIA H100 80GB HBM3", "--dtype", "bf16"],
    ("stale",): [],
    ("diff",): [str(SPECS), str(SPECS)],
    ("audit", "mlsysim"): [],
}

# (command, parameter) -> hostile values that are legitimately valid there
ACCEPTS: dict[tuple[tuple[str, ...], str], set[str]] = {
    (("export",), "out"): {"banana", "(9**9**9) MB", "nan", "inf", "-1", "0", "1e400",
                           "TRAINIUM3"},  # any name is a directory name
    # --grep is free text to search for: no claim matching it is an empty answer, not an error
    (("claims",), "grep"): set(HOSTILE) - {""},
    (("engine", "gemm"), "seed"): {"0"},
    (("engine", "attention"), "seed"): {"0"},
    # --timeline names the trace file to write: any name is a file name
    (("engine", "gemm"), "timeline"): set(HOSTILE) - {"", "x" * 100_000},
    (("engine", "attention"), "timeline"): set(HOSTILE) - {"", "x" * 100_000},
    (("engine", "mla"), "timeline"): set(HOSTILE) - {"", "x" * 100_000},
    # MLA with no decoupled RoPE key (rope width 0) is a shape the cost model accepts
    (("engine", "mla"), "rope_dim"): {"0"},
}

# Options the battery does not run with hostile values, and why.
SKIP = {
    (("claims",), "record"): "writes the shipped specs/claims/history.yaml (its refusal of labels "
                             "that are not release numbers is tested in tests/test_claims.py)",
}

# Refusals other helpers own (issue 10, "never destroy"): expected to fail until merged.
PENDING: dict[tuple[tuple[str, ...], str, str], str] = {}


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    seconds: float


class Hang(BaseException):
    """Raised by the CPU-time timer: the invocation used more than :data:`BOUND` s of CPU."""


def _alarm(signum, frame):
    raise Hang()


def _cpu_limit() -> None:
    """In a subprocess: killed (SIGXCPU) after :data:`BOUND` s of CPU."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (BOUND, BOUND))


@pytest.fixture(scope="module")
def shipped_kb(kb):
    return kb


@pytest.fixture
def run(shipped_kb, monkeypatch, tmp_path):
    """Invoke ``trnkb ARGS`` in-process in a scratch directory, the shipped KB loaded once."""
    real_load = trnkb.load
    monkeypatch.setattr(trnkb, "load", lambda path=None, **kw: shipped_kb
                        if path is None and not kw else real_load(path, **kw))
    monkeypatch.chdir(tmp_path)

    def invoke(args: list[str]) -> Outcome:
        out, err = io.StringIO(), io.StringIO()
        old = signal.signal(signal.SIGPROF, _alarm)
        signal.setitimer(signal.ITIMER_PROF, BOUND)  # counts CPU time, not wall time
        start = time.monotonic()
        code = 0
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except Hang:
            pytest.fail(f"hang: trnkb {_show(args)} used over {BOUND} s of CPU")
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)
        return Outcome(code, out.getvalue(), err.getvalue(), time.monotonic() - start)

    return invoke


def _show(args) -> str:
    return " ".join(a if len(a) < 40 else a[:20] + f"...({len(a)} chars)" for a in args)


SPEC_LINE = re.compile(r"^\S.*:\d+: \S.*: .+$")


def assert_refused(o: Outcome, args, fragment: str | None = None) -> None:
    """Exit 1, nothing on stdout, no traceback, one ``error:`` line (or spec-error lines)."""
    what = f"trnkb {_show(args)}"
    assert "Traceback" not in o.err + o.out, f"{what}: traceback\n{o.err[-2000:]}"
    assert o.code == 1, f"{what}: accepted (exit {o.code}); stdout {o.out[:300]!r}"
    lines = [x for x in o.err.splitlines() if x.strip()]  # a progress bar may leave a blank
    if lines and lines[-1].endswith("problem(s); nothing loaded."):
        assert all(SPEC_LINE.match(x) for x in lines[:-1]), f"{what}: {lines}"
    else:
        assert len(lines) == 1 and lines[0].startswith("error: "), f"{what}: {lines}"
    assert all(len(x) <= 1000 for x in lines), f"{what}: unbounded echo"
    if fragment is not None:
        assert fragment in o.err, f"{what}: {o.err!r} lacks {fragment!r}"


def _commands():
    def walk(c, path=()):
        if hasattr(c, "list_commands"):  # a group (lazy: commands load on request)
            for name in c.list_commands(None):
                yield from walk(c.get_command(None, name), (*path, name))
        else:
            yield path, c

    return list(walk(typer.main.get_command(app)))


COMMANDS = _commands()


def _substitute(path: tuple[str, ...], param, value: str) -> list[str]:
    """The base arguments of ``path`` with ``param`` set to ``value``."""
    base = list(BASE.get(path, []))
    if param.param_type_name == "argument":  # BASE lists positionals first
        slots = [j for j, a in enumerate(base)
                 if not a.startswith("--") and (j == 0 or not base[j - 1].startswith("--"))]
        i = [p for p in _params(path) if p.param_type_name == "argument"].index(param)
        if param.nargs == -1 and slots:
            i = len(slots) - 1  # the last of several ids
        if i < len(slots):
            base[slots[i]] = value
        else:
            base.insert(len(slots), value)
        return [*path, *base]
    opt = param.opts[0]
    if opt in base:
        base[base.index(opt) + 1] = value
        return [*path, *base]
    return [*path, *base, opt, value]


def _params(path):
    return next(c for p, c in COMMANDS if p == path).params


CASES = [pytest.param(path, p.name, v, id=f"{' '.join(path)}-{p.name}-{v[:12]}",
                      marks=[pytest.mark.xfail(reason=PENDING[(path, p.name, v)], strict=False)]
                      if (path, p.name, v) in PENDING else [])
         for path, c in COMMANDS for p in c.params
         if p.param_type_name == "argument" or not getattr(p, "is_flag", False)
         if p.name not in ("help",) and (path, p.name) not in SKIP for v in HOSTILE]


def test_every_command_has_valid_base_arguments(run):
    missing = [" ".join(p) for p, _ in COMMANDS if p not in BASE]
    assert not missing, f"add these commands to BASE: {missing}"
    import importlib.util

    for path, args in BASE.items():
        if path == ("audit", "mlsysim") and importlib.util.find_spec("mlsysim") is None:
            continue  # the optional extra: its own test says it is skipped and why
        o = run([*path, *args])
        assert o.code == 0, f"trnkb {' '.join([*path, *args])}: {o.err}"


@pytest.mark.parametrize("path, name, value", CASES)
def test_hostile_argument_is_refused_cleanly(run, path, name, value):
    param = next(p for p in _params(path) if p.name == name)
    args = _substitute(path, param, value)
    o = run(args)
    if value in ACCEPTS.get((path, name), set()) and o.code == 0:
        assert "Traceback" not in o.err, o.err  # valid there; a clean refusal is fine too
        return
    assert_refused(o, args)


# Named refusals from issue 10, each with the words the message must contain.
REFUSALS = [
    (["calc", "ridge-point", "--flops", "2517 TFLOPS", "--bandwidth", "0 TB/s"], "bandwidth"),
    (["calc", "ridge-point", "--flops", "2517 TFLOPS", "--bandwidth", "-4.9 TB/s"], "bandwidth"),
    (["calc", "ridge-point", "--flops", "banana", "--bandwidth", "4.9 TB/s"], "--flops"),
    (["calc", "ridge-point", "--flops", "(9**9**9) TFLOPS", "--bandwidth", "4.9 TB/s"], "--flops"),
    (["calc", "ridge-point", "--flops", "nan TFLOPS", "--bandwidth", "4.9 TB/s"], "finite"),
    (["calc", "ridge-point", "--flops", "inf", "--bandwidth", "4.9 TB/s"], "finite"),
    (["calc", "ridge-point", "--flops", "2517 TB*Hz", "--bandwidth", "4.9 TB/s"], "dimension"),
    (["calc", "rigde-point"], "did you mean 'ridge-point'"),
    (["calc", "RIDGE-POINT"], "did you mean 'ridge-point'"),
    (["calc", "ridge-point", "--flops", "2517 TFLOPS", "--bandwith", "4.9 TB/s"], "--bandwidth"),
    (["topology", "trn3-nl32x2-switched", "--message-size", "-1 MB"], "greater than zero"),
    (["topology", "trn3-nl32x2-switched", "--message-size", "0 MB"], "greater than zero"),
    (["topology", "trn3-nl32x2-switched", "--message-size", "(9**9**9) MB"], "--message-size"),
    (["topology", "trn3-nl32x2-switched", "--message-size", "1 GHz"], "--message-size"),
    (["topology", "TRN3-NL32X2-SWITCHED"], "did you mean 'trn3-nl32x2-switched'"),
    (["engine", "attention", "--heads", "0"], "--heads must be at least 1"),
    (["engine", "attention", "--head-dim", "0"], "--head-dim must be at least 1"),
    (["engine", "attention", "--seq", "-128"], "--seq must be at least 1"),
    (["engine", "attention", "--exp-engine", "gpu"], "'gpu' is not one of"),
    (["engine", "attention", "--seq", "1048576", "--heads", "64", "--no-execute"],
     "above the limit of 2,000,000 instructions"),
    (["engine", "gemm", "--m", "0"], "--m must be at least 1"),
    (["engine", "gemm", "--dtype", "fp64"], "'fp64' is not one of"),
    (["engine", "gemm", "--m", "1048576", "--k", "1048576", "--n", "1048576", "--no-execute"],
     "above the limit of 2,000,000 instructions"),
    (["engine", "gemm", "--m", "16384", "--k", "16384", "--n", "16384"],
     "above the limit of 1,000,000,000,000 FLOP"),
    (["engine", "gemm", "--chip", "TRAINIUM3"], "did you mean 'trainium3'"),
    (["show", "TRAINIUM3"], "did you mean 'trainium3'"),
    (["show", "trainium"], "did you mean"),
    (["compare", "trainium3", "Trainium2"], "did you mean 'trainium2'"),
    (["list", "chip"], "did you mean 'chips'"),
    (["list", "CHIPS"], "did you mean 'chips'"),
    (["claims", "--source", "semianalysis-trn"], "did you mean"),
    (["claims", "--verdict", "Supported"], "did you mean 'supported'"),
    (["export", "--out", "out", "--format", "xlsx"], "xlsx"),
    (["prices", "--chip", "TRAINIUM3"], "did you mean 'trainium3'"),
    (["prices", "--chip", "x" * 100_000], "trnkb list chips"),
    # chip ids are matched as written (device strings ignore case): a case variant is a near miss
    (["peaks", "TRAINIUM3"], "did you mean 'trainium3'"),
    (["peaks", ""], "give a device string"),
    (["workload", "serve", "--model", "llama-3.1-70b", "--system", "trn3-nl72x2-switched",
      "--prefill-tp", "4"], "give --disagg"),  # without --disagg it would be ignored
    (["workload", "serve", "--model", "llama-3.1-70b", "--system", "trn3-nl72x2-switched",
      "--slo", ""], "--slo names no target"),
    (["workload", "serve", "--model", "llama-3.1-70b", "--system", "trn3-nl72x2-switched",
      "--input-len", ""], "--input-len"),
    (["workload", "plan-fleet", "--model", "llama-3.1-70b", "--system", "gb300-nvl72",
      "--chips", ""], "--chips"),
    (["validate", "no-such-dir"], "not a directory"),
    (["show", "trainium3", "--specs", "no-such-dir"], "not a directory"),
]


@pytest.mark.parametrize("args, fragment", REFUSALS, ids=[" ".join(a)[:60] for a, _ in REFUSALS])
def test_named_bad_input_is_refused_with_a_clear_line(run, args, fragment):
    assert_refused(run(args), args, fragment)


CALC_BASE = {
    "peak-flops": ["--cores", "8", "--rows", "128", "--cols", "128", "--clock", "2.4 GHz"],
    "implied-clock": ["--peak", "671 TFLOPS", "--cores", "8", "--rows", "128", "--cols", "128"],
    "flops-per-watt": ["--flops", "671 TFLOPS", "--power", "1000 W"],
    "time-for-flops": ["--work", "1e24 FLOP", "--rate", "671 TFLOPS", "--mfu", "0.4"],
    "training-flops": ["--params", "7e9", "--tokens", "2e12"],
    "hbm-capacity": ["--stacks", "4", "--stack-height", "12", "--die-density", "24 Gbit"],
    "hbm-bandwidth": ["--stacks", "4", "--bus-width", "1024 bit", "--pin-rate", "9.6 Gbit/s"],
    "ridge-point": ["--flops", "2517 TFLOPS", "--bandwidth", "4.9 TB/s"],
    "lnc-memory": ["--capacity", "144 GB", "--cores", "8", "--lnc", "2"],
    "scaleup-bandwidth": ["--lanes", "144", "--lane-rate", "64 Gbit/s"],
    "lane-budget": ["--pcb", "32", "--backplane-active", "64", "--backplane-redundant", "16",
                    "--cross-rack", "32", "--lane-rate", "64 Gbit/s"],
    "switches-per-rack": ["--chips", "32", "--lanes-per-chip", "64", "--lanes-per-port", "4",
                          "--switch-ports", "144"],
    "fabric-size": ["--switch-bandwidth", "12.8 Tbit/s", "--port-speed", "400 Gbit/s",
                    "--layers", "2"],
    "tor-fabric-size": ["--switch-bandwidth", "12.8 Tbit/s", "--port-speed", "400 Gbit/s",
                        "--endpoints-per-tor", "16"],
    "it-power": ["--facility-power", "100 MW", "--pue", "1.2"],
    "facility-power": ["--chips", "1000", "--chip-power", "1000 W", "--pue", "1.2"],
    "chips-per-mw": ["--chip-power", "1000 W"],
    "rack-power-density": ["--chips-per-rack", "64", "--chip-power", "1000 W"],
    "training-energy": ["--work", "1e24 FLOP", "--rate", "671 TFLOPS", "--mfu", "0.4",
                        "--power", "1000 W"],
    "tco": ["--capex", "30000 USD", "--lifetime", "5 year", "--cost-of-capital", "0.1",
            "--chip-power", "1000 W", "--power-price", "0.08 USD/kWh", "--pue", "1.2",
            "--utilization", "0.7"],
    "domain-total": ["--chips", "64", "--per-chip", "671 TFLOPS"],
}
# calculator parameters where zero is a legitimate value
ZERO_OK = {("lane-budget", "--backplane-redundant"), ("lane-budget", "--cross-rack"),
           ("lane-budget", "--pcb"), ("lane-budget", "--backplane-active"),
           ("tco", "--cost-of-capital")}


def _calc_cases():
    for name, base in CALC_BASE.items():
        for i in range(0, len(base), 2):
            opt, good = base[i], base[i + 1]
            number, _, unit = good.partition(" ")
            bad = {"banana": "banana", "bomb": f"(9**9**9) {unit}".strip(),
                   "nan": f"nan {unit}".strip(), "inf": f"inf {unit}".strip(),
                   "negative": f"-{number} {unit}".strip(), "zero": f"0 {unit}".strip(),
                   "huge": f"1e400 {unit}".strip(), "unit-only": unit or "GB"}
            for kind, value in bad.items():
                yield name, opt, kind, [*base[:i + 1], value, *base[i + 2:]]


CALC_CASES = list(_calc_cases())


def test_every_calculator_is_in_the_battery():
    from trnkb.calc import CALCULATORS

    assert set(CALC_BASE) == set(CALCULATORS)


@pytest.mark.parametrize("name, opt, kind, args", CALC_CASES,
                         ids=[f"{n}{o}-{k}" for n, o, k, _ in CALC_CASES])
def test_calculator_refuses_bad_values(run, name, opt, kind, args):
    o = run(["calc", name, *args])
    if kind == "zero" and (name, opt) in ZERO_OK:
        assert o.code == 0, o.err
        return
    assert_refused(o, ["calc", name, *args])


@pytest.mark.parametrize("name", sorted(CALC_BASE))
def test_calculator_base_arguments_are_valid(run, name):
    o = run(["calc", name, *CALC_BASE[name], "--json"])
    assert o.code == 0, o.err


# A few hostile invocations in a real subprocess, with a hard timeout: hangs and crashes
# that an in-process run could mask.
SUBPROCESS = [
    ["topology", "trn3-nl32x2-switched", "--message-size", "(9**9**9) MB"],
    ["calc", "ridge-point", "--flops", "(9**9**9) TFLOPS", "--bandwidth", "4.9 TB/s"],
    ["engine", "gemm", "--m", "1048576", "--k", "1048576", "--n", "1048576"],
    ["engine", "attention", "--exp-engine", "gpu"],
    ["show", "x" * 100_000],
]


@pytest.mark.parametrize("args", SUBPROCESS, ids=[_show(a)[:50] for a in SUBPROCESS])
def test_hostile_invocation_finishes_in_a_subprocess(args, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "trnkb", *args], capture_output=True,
                          text=True, timeout=WALL_BACKSTOP, preexec_fn=_cpu_limit,
                          cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(Path(trnkb.__file__).parents[1])})
    assert_refused(Outcome(proc.returncode, proc.stdout, proc.stderr, 0.0), args)


def test_spec_directory_that_is_a_named_pipe_does_not_hang(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    os.mkfifo(specs / "sources.yaml")
    proc = subprocess.run([sys.executable, "-m", "trnkb", "validate", str(specs)],
                          capture_output=True, text=True, timeout=WALL_BACKSTOP,
                          preexec_fn=_cpu_limit,
                          env={**os.environ, "PYTHONPATH": str(Path(trnkb.__file__).parents[1])})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "not a regular file" in proc.stderr


# Never destroy the user's files (issue 10). The site builder's refusals are the "site"
# helper's and export's atomic, symlink-safe writing is kbcore's; these cases check them
# from the command line.
def _foreign_dir(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text("mine\n")
    return root


@pytest.mark.parametrize("where", ["file", "below-file"])
def test_export_out_that_is_a_file_is_refused(run, tmp_path, where):
    (tmp_path / "afile").write_text("keep\n")
    out = "afile" if where == "file" else "afile/sub"
    assert_refused(run(["export", "--out", out, "--format", "csv"]), ["export", "--out", out])
    assert (tmp_path / "afile").read_text() == "keep\n"


def test_export_never_writes_through_a_symlink(run, tmp_path):
    (tmp_path / "victim.txt").write_text("victim\n")
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "chips.csv").symlink_to("../victim.txt")
    run(["export", "--out", "pkg", "--format", "csv"])
    assert (tmp_path / "victim.txt").read_text() == "victim\n"


@pytest.mark.parametrize("target", [".", "repo", "foreign"])
def test_export_refuses_cwd_repository_root_and_foreign_directory(run, tmp_path, target):
    _foreign_dir(tmp_path / "foreign")
    (_foreign_dir(tmp_path / "repo") / ".git").mkdir()
    (tmp_path / "notes.txt").write_text("mine\n")
    o = run(["export", "--out", target, "--format", "csv"])
    assert_refused(o, ["export", "--out", target])
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


@pytest.mark.parametrize("target", [".", "repo", "foreign", "link"])
def test_site_builder_refuses_and_deletes_nothing(shipped_kb, monkeypatch, tmp_path, target):
    # In-process through the builder's own command (the shipped KB loaded once); the
    # process path (one line, exit 1, no traceback) is tests/test_site_outdir.py's.
    from typer.testing import CliRunner

    import trnkb.site

    _foreign_dir(tmp_path / "foreign")
    (_foreign_dir(tmp_path / "repo") / ".git").mkdir()
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "link").symlink_to("foreign")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    monkeypatch.setattr(trnkb.site, "load", lambda specs=None: shipped_kb)
    monkeypatch.chdir(tmp_path)
    old = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, BOUND)  # CPU time, not wall time
    try:
        result = CliRunner().invoke(trnkb.site.app, [target])
    except Hang:
        pytest.fail(f"hang: python -m trnkb.site {target} used over {BOUND} s of CPU")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    assert result.exit_code == 1, (result.exception, result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "refusing" in result.stderr, result.stderr
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
