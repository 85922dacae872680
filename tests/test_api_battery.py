"""The public Python functions against hostile arguments, like the CLI battery (issue 25).

Every call must end, within a bound on CPU time, in the typed exception the CLI's refusal
comes from (``KeyError`` for unknown names, ``ValueError`` for bad values, ``SpecError``
for spec directories), with a one-line message that says what is wrong (a suggestion
where there is a near miss); none may return as if the argument were fine. The calls run
in one worker subprocess whose CPU time is bounded per call (``ITIMER_PROF``) and as a
whole (``RLIMIT_CPU``), so a hang fails one case instead of stalling the suite.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# (name, Python expression, exception type, fragment of the message)
CASES = [
    ("kb.value unknown id", "kb.value('trainium33', 'cores')", "KeyError",
     "did you mean 'trainium3'"),
    ("kb.value unknown field", "kb.value('trainium3', 'core')", "KeyError",
     "did you mean 'cores'"),
    ("kb.value 100k id", "kb.value('x' * 100_000, 'cores')", "KeyError", "no row with id"),
    ("kb.value None id", "kb.value(None, 'cores')", "KeyError", "text"),
    ("kb.values unknown id", "kb.values('trainium33', 'cores')", "KeyError",
     "did you mean 'trainium3'"),
    ("kb.values unknown field", "kb.values('trainium3', 'hbm_capacty')", "KeyError",
     "did you mean 'hbm_capacity'"),
    ("kb.table unknown", "kb.table('chipz')", "KeyError", "no table"),
    ("kb.table_of case", "kb.table_of('TRAINIUM3')", "KeyError", "did you mean 'trainium3'"),
    ("load missing dir", "trnkb.load('/nonexistent-trnkb-dir')", "SpecError",
     "not a directory"),
    ("parse pint bomb", "trnkb.units.parse('(9**9**9) MB')", "QuantityError",
     "expected a plain number"),
    ("parse arabic digits", "trnkb.units.parse('\\u0661\\u0664\\u0664 GB')", "QuantityError",
     "U+0661"),
    ("gemm huge no-execute", "engine.gemm(core, 10**9, 4096, 4096, execute=False)",
     "ValueError", "above the limit"),
    ("gemm zero", "engine.gemm(core, 0, 128, 128, execute=False)", "ValueError",
     "at least 1"),
    ("gemm fraction", "engine.gemm(core, 128.5, 128, 128, execute=False)", "ValueError",
     "whole number"),
    ("gemm bool", "engine.gemm(core, True, 128, 128, execute=False)", "ValueError",
     "whole number"),
    ("gemm orientation typo",
     "engine.gemm(core, 128, 128, 512, orientation='swaped', execute=False)", "ValueError",
     "did you mean 'swapped'"),
    ("gemm huge execute", "engine.gemm(core, 65536, 65536, 65536)", "ValueError",
     "above the limit"),
    ("attention exp engine", "engine.attention(core, 128, 128, 64, exp_engine='gpu', "
     "execute=False)", "ValueError", "not one of vector, scalar"),
    ("attention huge", "engine.attention(core, 10**6, 10**6, 64, heads=64, execute=False)",
     "ValueError", "above the limit"),
    ("train mfu 1.5", "w.train(m, s, 64, tokens=1e9, assumptions={'mfu': 1.5})",
     "ValueError", "outside its domain (0, 1]"),
    ("train mfu negative", "w.train(m, s, 64, tokens=1e9, assumptions={'mfu': -0.4})",
     "ValueError", "outside its domain"),
    ("train mfu nan", "w.train(m, s, 64, tokens=1e9, assumptions={'mfu': float('nan')})",
     "ValueError", "not finite"),
    ("train mfu text", "w.train(m, s, 64, tokens=1e9, assumptions={'mfu': 'banana'})",
     "ValueError", "expected a number or an Input"),
    ("train unknown assumption", "w.train(m, s, 64, tokens=1e9, assumptions={'mfuu': 0.4})",
     "ValueError", "did you mean 'mfu'"),
    ("serve train-only assumption",
     "w.serve(m, s, 1, batch=8, input_len=128, output_len=128, curve=False, "
     "assumptions={'dp_overlap': 0.5})", "ValueError", "unknown assumption 'dp_overlap'"),
    ("train chips negative", "w.train(m, s, -1, tokens=1e9)", "ValueError", "chips"),
    ("train tokens inf", "w.train(m, s, 64, tokens=float('inf'))", "ValueError", "tokens"),
    ("model unknown", "w.model(kb, 'llama-3-1-9b')", "KeyError|ValueError", "llama"),
]

WORKER = textwrap.dedent("""
    import json, resource, signal, sys
    resource.setrlimit(resource.RLIMIT_CPU, (300, 300))

    class CpuBound(Exception):
        pass

    def on_prof(signum, frame):
        raise CpuBound("more than 30 s of CPU")

    signal.signal(signal.SIGPROF, on_prof)
    import trnkb, trnkb.units
    from trnkb import engine
    import trnkb.workload as w
    kb = trnkb.load()
    core = engine.NeuronCore.from_kb(kb, "trainium3")
    m, s = w.model(kb, "llama-3-1-8b"), w.system(kb, "trn3-nl32x2-switched")
    for name, expr in json.loads(sys.argv[1]):
        signal.setitimer(signal.ITIMER_PROF, 30)
        try:
            got = eval(expr)
            out = {"returned": repr(got)[:200]}
        except CpuBound as e:
            out = {"hang": str(e)}
        except Exception as e:
            msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
            out = {"type": type(e).__name__, "message": str(msg)}
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        print(json.dumps({"name": name, **out}), flush=True)
""")


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict[str, str]]:
    proc = subprocess.run([sys.executable, "-c", WORKER,
                           json.dumps([[n, e] for n, e, _, _ in CASES])],
                          capture_output=True, text=True, timeout=1800)
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            results[r["name"]] = r
    assert results, proc.stderr[-2000:]
    return results


@pytest.mark.parametrize("name, expr, exc, fragment", CASES, ids=[c[0] for c in CASES])
def test_hostile_call_is_refused_with_a_typed_exception(outcomes, name, expr, exc, fragment):
    got = outcomes.get(name)
    assert got is not None, "no outcome: the worker died before this call"
    assert "hang" not in got, got
    assert "returned" not in got, f"{expr} returned {got['returned']}"
    assert got["type"] in exc.split("|"), got
    assert fragment in got["message"], got
    assert "\n" not in got["message"] and len(got["message"]) <= 1000, got


def test_a_returned_quantity_cannot_change_the_knowledge_base():
    import trnkb

    kb = trnkb.load()
    q = kb.value("trainium3", "dense_bf16")
    q.ito("GFLOPS")
    q *= 2
    assert kb.value("trainium3", "dense_bf16") == trnkb.Q_("671 TFLOPS")
    assert str(kb.value("trainium3", "dense_bf16").units) == "teraFLOPS"
    g = kb.get("trainium3", "dense_bf16")
    g.ito("PFLOPS")
    table = kb.values("trainium3", "hbm_capacity")
    table["value"].iloc[0].ito("bit")
    assert kb.value("trainium3", "dense_bf16").units == trnkb.Q_("1 TFLOPS").units
    assert kb.values("trainium3", "hbm_capacity")["value"].iloc[0].units != trnkb.Q_(
        "1 bit").units
