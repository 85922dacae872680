"""Interleaved 1F1B: bubble, pipeline sends, first-stage memory, validity, and the search's choice.

Expected values are hand arithmetic on a toy model and an analytic switch system (below), from
Narayanan et al. 2021 section 2.2.2 (bubble (p - 1) / (v m); communication x v), Korthikanti
et al. 2022 section 4.2.3 (first-stage activations x (1 + (p - 1) / (p v))) and Megatron-LM's
rule that the microbatches be a multiple of pp with the interleaved schedule.
"""

import pytest

from trnkb.workload.collectives import Network
from trnkb.workload.models import Model
from trnkb.workload.plan import Plan, memory_per_chip
from trnkb.workload.ranges import assumption
from trnkb.workload.search import best_vpp, candidate_plans, plans
from trnkb.workload.system import System
from trnkb.workload.training import central_values, step_breakdown

SEQ = 2048
TOY = Model(id="toy", name="toy", layers=16, d_model=1024, attention_heads=8, kv_heads=8,
            head_dim=128, vocabulary=32000, ffn_size=4096)


def _system(scaleup: float) -> System:
    """Four chips in one switched domain, ``scaleup`` B/s per chip, 1 PFLOP/s, 1 TB of HBM."""
    def fixed(name: str, x: float, unit: str) -> object:
        return assumption(name, x, x, x, unit, "test value")
    return System(id="toy-4", name="toy", chip="toy", vendor="test", domain_size=4,
                  chips_per_rack=4, peak={"bf16": fixed("peak_flops", 1e15, "FLOP/s")},
                  hbm_capacity=fixed("hbm_capacity", 1e12, "B"),
                  hbm_bandwidth=fixed("hbm_bandwidth", 1e13, "B/s"),
                  chip_power=fixed("chip_power", 1000.0, "W"), pue=fixed("pue", 1.2, ""),
                  capex=fixed("capex", 1e4, "USD"),
                  network=Network(domain=4, chip_scaleup=scaleup, scaleout=scaleup),
                  scaleup_input=fixed("scaleup_bandwidth", scaleup, "B/s"),
                  scaleout_input=fixed("scaleout_bandwidth", scaleup, "B/s"))


def _step(plan: Plan, n_micro: int, scaleup: float = 1e12) -> dict[str, float]:
    s = _system(scaleup)
    v = {k: i.mid for k, i in central_values(s, "bf16").items()}
    return step_breakdown(TOY, s, plan, v, seq_len=SEQ, batch_tokens=n_micro * SEQ * plan.dp,
                          recipe="bf16-adam", weight_bytes=2.0)


def test_interleaving_shrinks_the_bubble_by_vpp():
    # pp=4, vpp=2, 8 microbatches: (4 - 1) / (8 x 2) = 3/16 of the compute
    s = _step(Plan(pp=4, vpp=2), 8)
    assert s["bubble"] / s["compute"] == pytest.approx(3 / 16)
    assert _step(Plan(pp=4), 8)["bubble"] / s["compute"] == pytest.approx(3 / 8)


def test_pipeline_sends_grow_vpp_fold():
    # one microbatch's activations: 2048 tokens x 1024 x 2 bytes / tp 2 = 2 MiB; forward and
    # backward, 8 microbatches, 2 chunk boundaries per chip: 32 sends = 64 MiB per chip per step
    s = _step(Plan(tp=1, pp=4, vpp=2), 8)
    assert s["pp_bytes"] == pytest.approx(2 * 8 * 2 * 2048 * 1024 * 2)
    s2 = step_breakdown(TOY, _system(1e12), Plan(dp=1, tp=2, pp=2, vpp=2),
                        {k: i.mid for k, i in central_values(_system(1e12), "bf16").items()},
                        seq_len=SEQ, batch_tokens=8 * SEQ, recipe="bf16-adam", weight_bytes=2.0)
    assert s2["pp_bytes"] == pytest.approx(64 * 2**20)
    # over a scale-up neighbour at 1e12 B/s x the central collective efficiency 0.75
    assert s2["pp_comm"] == pytest.approx(64 * 2**20 / (1e12 * 0.75))
    assert _step(Plan(pp=4, vpp=4), 8)["pp_bytes"] == pytest.approx(2 * s["pp_bytes"])


def test_first_stage_holds_more_activations_when_interleaved():
    # Korthikanti et al. 4.2.3: x (1 + (p - 1) / (p v)) = 1 + 3/8 for pp=4, vpp=2
    one = memory_per_chip(TOY, Plan(pp=4), "bf16-adam", SEQ, 8)["activations"]
    two = memory_per_chip(TOY, Plan(pp=4, vpp=2), "bf16-adam", SEQ, 8)["activations"]
    assert two / one == pytest.approx(1 + 3 / 8)
    # with only pp microbatches the warm-up already runs every forward: no extra memory
    four = memory_per_chip(TOY, Plan(pp=4, vpp=2), "bf16-adam", SEQ, 4)["activations"]
    assert four == pytest.approx(memory_per_chip(TOY, Plan(pp=4), "bf16-adam", SEQ, 4)
                                 ["activations"])


def test_interleaving_needs_a_pipeline_and_pp_multiple_microbatches():
    assert not Plan(pp=4, vpp=2).problems(TOY, 4, 8)
    assert any("multiple of pp" in p for p in Plan(pp=4, vpp=2).problems(TOY, 4, 6))
    assert any("pp > 1" in p for p in Plan(dp=4, vpp=2).problems(TOY, 4, 8))
    assert any("exceeds" in p for p in Plan(pp=4, vpp=8).problems(TOY, 4, 8))


def test_search_offers_vpp_only_where_valid():
    cands = candidate_plans(TOY, _system(1e12), 4, 8)
    assert {p.vpp for p in cands if p.pp == 4} == {1, 2, 4}  # 4 x 8 = 32 > 16 layers
    assert {p.vpp for p in cands if p.pp == 1} == {1}


def _best_for(scaleup: float) -> int:
    rows = plans(TOY, _system(scaleup), 4, seq_len=SEQ, batch_tokens=8 * SEQ, top=None)
    same = [r for r in rows if (r["plan"].pp, r["plan"].tp, r["plan"].cp, r["plan"].zero,
                                r["plan"].recompute, r["plan"].microbatch)
            == (4, 1, 1, 1, "selective", 1)]
    return int(same[0]["plan"].vpp)


def test_search_interleaves_when_the_bubble_costs_more_than_the_sends():
    # compute = 6 x 0.334e9 params x 16,384 tokens / 4 chips / (1e15 x 0.45) = 18 ms per step;
    # the 1F1B bubble is 3/8 of it, 6.9 ms; each extra chunk boundary adds 16 sends x 4 MiB =
    # 64 MiB at 1e12 x 0.75 B/s = 89 us: vpp 4 saves 3/8 - 3/32 of the compute (5.1 ms) for
    # 3 x 89 us of sends
    assert _best_for(1e12) == 4


def test_search_keeps_1f1b_when_sends_cost_more_than_the_bubble():
    # at 1e9 B/s one extra chunk boundary costs 64 MiB / 7.5e8 B/s = 89 ms, far above the
    # whole 6.9 ms bubble it would halve
    assert _best_for(1e9) == 1


def test_best_vpp_picks_the_search_choice_for_a_fixed_plan():
    base = Plan(pp=4)
    kw = {"seq_len": SEQ, "batch_tokens": 8 * SEQ}
    assert best_vpp(TOY, _system(1e12), base, **kw).vpp == 4
    assert best_vpp(TOY, _system(1e9), base, **kw).vpp == 1
