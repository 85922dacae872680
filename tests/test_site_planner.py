"""The planner's grid (trnkb.site.serving_grid) holds the workload layer's own answers.

The page selects among stored simulator points with the rules of trnkb.workload.fleet; here
each rule's answer on the stored points is compared with the workload layer's function run
directly, for one model and system (a few seconds of CPU).
"""

from __future__ import annotations

import math

import pytest

from trnkb import workload as W
from trnkb.kb import load
from trnkb.site import serving_grid as G
from trnkb.workload import fleet


@pytest.fixture(scope="module")
def objs():
    kb = load()
    return W.model(kb, "llama-3-1-8b"), W.system(kb, "gb300-nvl72", None)


def test_operating_point_and_power_budget_match_plan_fleet(objs):
    model, system = objs
    chips = fleet.replica_chips(model, system, "fp8", 2048, 512, "owner")
    view = G.serve_points(model, system, chips, "fp8", 2048, 512, "owner")
    for target in (5.0, 50.0, 1e6):  # 1e6 tokens/s per user: never reached
        p, ok = G.operating(view["points"], target)
        plan = fleet.plan_fleet(model, system, 10.0, target, "fp8", chips=chips)
        assert ok == plan["reachable"] and p["load"] == plan["load"]
        # the page's arithmetic on the stored point (as planner.js does it)
        watts = 10.0 * 1e6
        per = system.chips_per_rack or system.domain_size
        assert math.floor(watts / p["facility_w"][0]) // per == plan["racks"]["central"]
        assert p["tokens_per_s_per_mw"][0] * 10 == pytest.approx(
            plan["fleet_tokens_per_s"]["central"], rel=1e-3)
        assert p["usd_per_million_tokens"][:3] == pytest.approx(
            [plan["usd_per_million_tokens"][k] for k in ("central", "low", "high")], rel=1e-3)


def test_cost_ceiling_rule_matches_cost_target(objs):
    model, system = objs
    chips = fleet.replica_chips(model, system, "fp8", 2048, 512, "owner")
    pts = G.serve_points(model, system, chips, "fp8", 2048, 512, "owner")["points"]
    for ceiling in (0.05, 0.5, 5.0):
        want = fleet.cost_target(model, system, ceiling, "fp8", chips=chips)
        for i, which in enumerate(("central", "optimistic", "pessimistic")):
            ok = [p["tokens_per_s_per_user"][0] for p in pts
                  if p["usd_per_million_tokens"][i] <= ceiling]
            got = max(ok) if ok else None
            exp = want["tokens_per_s_per_user"][which]
            assert (got is None) == (exp is None), (ceiling, which)
            if got is not None:
                assert got == pytest.approx(exp, rel=1e-3)


def test_training_point_is_train_plan_with_the_inputs_that_move_it(objs):
    model, system = objs
    got = G.train_point(model, system, 2e12, 30, "bf16")
    want = fleet.train_plan(model, system, 2e12, 30, "bf16")
    assert (got["chips"], got["racks"]) == (want["chips"], want["racks"])
    for name in ("days", "cost_usd", "energy_mwh"):
        assert got[name][:3] == pytest.approx(
            [want[name][k] for k in ("central", "low", "high")], rel=1e-3)
        assert 1 <= len(got[name][3]) <= 3
    assert got["cost_usd"][3][0] == want["cost_rests_on"][0]["input"]


def test_keys_write_integral_floats_as_integers_as_the_page_reads_them():
    assert G.key("m", "s", "bf16", 15e12, 30) == "m|s|bf16|15000000000000|30"
    assert G.key("m", "s", "fp8", 2048, 512) == "m|s|fp8|2048|512"


def test_the_grid_is_reused_from_the_cache_until_its_fingerprint_changes(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TRNKB_NO_CACHE", raising=False)
    calls: list[int] = []
    monkeypatch.setattr(G, "grid", lambda kb, systems, progress: calls.append(1) or
                        {"computed": len(calls)})
    fingerprint = ["a"]
    monkeypatch.setattr(G, "_fingerprint", lambda kb, systems: fingerprint[0])
    assert G.cached_grid(None) == {"computed": 1}
    assert G.cached_grid(None) == {"computed": 1}  # read back, not recomputed
    fingerprint[0] = "b"  # the KB or the model code changed
    assert G.cached_grid(None) == {"computed": 2}
    monkeypatch.setenv("TRNKB_NO_CACHE", "1")
    assert G.cached_grid(None) == {"computed": 3}
