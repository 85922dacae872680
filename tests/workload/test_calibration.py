"""Held-out calibration of a serving central: the split rule, the median fit, the solve."""

import pytest

from trnkb import workload as W
from trnkb.audit import calibration as C
from trnkb.workload.serving import SERVE_ASSUMPTIONS


def _run(id_="r", source="trtllm", batch=0, moe=False, **kw):
    return C.Run(id_, source, batch, moe, kw.get("args", {}), kw.get("metric", "tpot"),
                 kw.get("measured", 1.0), kw.get("unit", "s"))


def test_the_split_rule():
    assert C.role(_run(batch=3)) == "held out"
    assert C.role(_run(batch=3, source=C.STACK_GAP_SOURCES[0])) == "held out"
    assert C.role(_run(batch=1, source=C.STACK_GAP_SOURCES[1])) == "excluded"
    assert C.role(_run(batch=2, moe=True)) == "excluded"
    assert C.role(_run(batch=0)) == "calibration"


def test_fit_is_the_median_of_the_implied_values():
    # by hand: sorted 0.2, 0.3, 0.5 -> 0.3; with 0.9 added -> (0.3 + 0.5) / 2 = 0.4
    assert C.fit([0.5, 0.2, 0.3]) == pytest.approx(0.3)
    assert C.fit([0.5, 0.2, 0.9, 0.3]) == pytest.approx(0.4)


def test_implied_bandwidth_fraction_by_hand(kb):
    # Llama 3.1 8B on one H100 at batch 1: no collectives, matmuls and attention weight- and
    # KV-bound, so TPOT = bytes / (bandwidth x hbm_efficiency) exactly: a run 1.5x slower than
    # the central prediction at 0.75 implies 0.75 / 1.5 = 0.5
    args = {"model": "llama-3-1-8b", "system": "hgx-h100-8", "chips": 1, "batch": 1,
            "input_len": 1024, "output_len": 128, "precision": "fp8"}
    r = W.serve(W.model(kb, "llama-3-1-8b"), W.system(kb, "hgx-h100-8"), 1, 1, 1024, 128, "fp8",
                curve=False)
    assert r.inputs["hbm_efficiency"].mid == 0.75
    run = _run(args=args, metric="tpot", measured=1.5 * r["tpot"].mid, unit="s")
    assert C.implied(kb, run) == pytest.approx(0.5, abs=2e-3)


@pytest.fixture(scope="module")
def report(kb):
    return C.report(kb)


def test_the_shipped_central_is_the_fit_only_if_it_wins_on_the_held_out_runs(report):
    ho = report["held_out"]
    won = ho["fitted"]["median_abs_error"] < ho["shipped"]["median_abs_error"]
    shipped = SERVE_ASSUMPTIONS[C.CALIBRATED].mid
    if won:
        assert shipped == pytest.approx(report["fitted"], abs=0.005)
    else:
        assert shipped != pytest.approx(report["fitted"], abs=0.005)
    # the split is disjoint and the fit saw no held-out run
    others = {k for k, v in report["roles"].items() if v != "calibration"}
    assert not set(report["implied"]) & others
    assert ho["shipped"]["runs"] == sum(v == "held out" for v in report["roles"].values())
