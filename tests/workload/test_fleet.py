"""Planner answers: fleet from a power budget, cost target, training size; CLI and Python."""

import json
import math

import pytest
from typer.testing import CliRunner

import trnkb.workload as W
from trnkb.cli import app
from trnkb.workload.fleet import cost_target, plan_fleet, train_plan

runner = CliRunner()


def test_plan_fleet_racks_follow_from_power_and_facility_watts(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "gb200-nvl72")
    r = plan_fleet(m, s, 50, 30, "fp8")
    fw = r["facility_w_per_chip"]
    # by hand: chips = 50e6 W / (W per chip), racks = chips // 72 (gb200-nvl72: 72 per rack)
    assert r["chips"]["central"] == math.floor(50e6 / fw["central"])
    assert r["racks"]["central"] == r["chips"]["central"] // 72
    assert r["racks"]["low"] <= r["racks"]["central"] <= r["racks"]["high"]
    assert r["reachable"] and r["tokens_per_s_per_user"] >= 30
    usd = r["usd_per_million_tokens"]
    assert usd["low"] <= usd["central"] <= usd["high"]
    assert r["usd_per_million_tokens_rests_on"][0]["kind"] in {"sourced", "assumption",
                                                                "sourced x assumption"}


def test_unreachable_interactivity_is_said_not_hidden(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "mi355x-8")
    r = plan_fleet(m, s, 10, 1e6, "fp8")
    # the answer falls back to the least loaded point: one client
    assert r["reachable"] is False and r["load"] == 1


def test_closed_form_engine_sweeps_batches_up_to_the_kv_limit(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "mi355x-8")
    r = plan_fleet(m, s, 10, 20, "fp8", engine="closed-form")
    assert r["engine"] == "closed-form" and r["load"] >= 1 and r["reachable"]
    with pytest.raises(ValueError, match="engine must be one of"):
        plan_fleet(m, s, 10, 20, "fp8", engine="magic")


def test_cost_target_higher_ceiling_never_lowers_interactivity(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "mi355x-8")
    lo, hi = cost_target(m, s, 0.3, "fp8"), cost_target(m, s, 3.0, "fp8")
    a, b = lo["tokens_per_s_per_user"]["central"], hi["tokens_per_s_per_user"]["central"]
    assert b is not None and (a is None or b >= a)
    assert cost_target(m, s, 1e-6, "fp8")["tokens_per_s_per_user"]["central"] is None


def test_train_plan_meets_the_deadline_at_central_inputs(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "gb300-nvl72")
    r = train_plan(m, s, 15e12, 30, "bf16")
    assert r["chips"] == r["racks"] * 72
    assert r["days"]["central"] <= 30 * 1.1  # whole racks; scaling loss within 10 %
    assert r["cost_usd"]["low"] <= r["cost_usd"]["central"] <= r["cost_usd"]["high"]


def test_planner_cli_json_and_bad_input(kb):
    res = runner.invoke(app, ["workload", "plan-fleet", "--model", "llama-3.1-70b", "--system",
                              "trn3-nl72x2-switched", "--power-mw", "50", "--tokens-per-user",
                              "50", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert {"racks", "fleet_tokens_per_s", "usd_per_million_tokens"} <= set(out)
    bad = runner.invoke(app, ["workload", "cost-target", "--model", "llama-3.1-70b", "--system",
                              "gb300-nvl72", "--max-usd-per-mtok", "-1"])
    assert bad.exit_code == 1 and "must be a positive number" in bad.output
    assert "Traceback" not in bad.output


def test_absurd_token_count_is_refused_not_searched(kb):
    """1e30 tokens needs ~1e21 chips, where no plan fits the 16 Mi-token batch; the search
    tries a bounded number of sizes (it tried every rack count up to +25%: ~1e18 calls).
    The guard bounds CPU time, not wall time."""
    import resource

    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "trn3-nl72x2-switched")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    with pytest.raises(ValueError, match="no plan fits"):
        train_plan(m, s, 1e30, 30)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - before < 60
