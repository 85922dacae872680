"""Energy per token: MLPerf Inference Power runs and dashboard all-in power against the model."""

import pytest

import trnkb.workload as W
from trnkb.audit import energy_validation as ev


def test_measured_j_per_token_is_wall_power_over_tokens_per_s_by_hand(kb):
    rows = {r["run"]: r for r in ev.measured_energy(kb)}
    r = rows["mlperf-inf-5.1-0061-llama2-70b-99-offline"]
    # MLPerf Inference v5.1 summary_results.json, ID 5.1-0061 (Lenovo SR680a V3, 8 x B200),
    # llama2-70b-99 Offline: Power_Result 10400.9988793425 W, 102909 tokens/s
    assert r["measured_j_per_token"] == pytest.approx(10400.9988793425 / 102909)
    assert r["measured_w_per_chip"] == pytest.approx(10400.9988793425 / 8)
    # the model's J/token at the measured throughput: IT chip power of hgx-b200-8 x 8 chips
    p = W.system(kb, "hgx-b200-8").chip_power
    assert (r["model_j_low"], r["model_j_high"]) == pytest.approx(
        (p.lo * 8 / 102909, p.hi * 8 / 102909))
    assert r["within"] == (p.lo <= 10400.9988793425 / 8 <= p.hi)
    # the ledger cannot predict MLPerf throughput (input length unpublished): the reason shows
    assert r["predicted_j_central"] is None and "input length" in r["reason"]


def test_every_measured_power_row_is_checked_and_a_miss_is_signed():
    assert ev._miss(1.0, 2.0, 3.0) == pytest.approx(-0.5)
    assert ev._miss(4.5, 2.0, 3.0) == pytest.approx(0.5)
    assert ev._miss(2.5, 2.0, 3.0) == 0.0


def test_all_power_rows_are_used_once(kb):
    t = kb.table("power")
    measured = [rid for rid in t["id"] if kb.get(rid, "system_power") is not None]
    allin = [rid for rid in t["id"] if kb.get(rid, "allin_power_per_chip") is not None]
    assert len(measured) == len(ev.measured_energy(kb)) == 8
    assert len(allin) + len(measured) == len(t)
    # an all-in row per chip, one check row per system with that chip
    rows = ev.allin_check(kb)
    h100 = next(a for a in rows if a["system"] == "hgx-h100-8")
    assert h100["published_w"] == pytest.approx(1730)  # InferenceX GPU_SPECS.h100.power 1.73 kW
    assert h100["within"] is (h100["model_low_w"] <= 1730 <= h100["model_high_w"])


def test_energy_section_lists_every_run_with_a_verdict(kb):
    text = ev.markdown(kb)
    assert text.startswith("\n## Energy per token")
    for r in ev.measured_energy(kb):
        assert f"| {r['run']} |" in text
    assert text.count("| in range |") + text.count("| miss ") >= 8 + len(ev.allin_check(kb))


def test_dashboard_j_per_token_of_a_predicted_run_against_the_model_by_hand(kb):
    from trnkb.audit.ledger import Prediction, Run

    run = Run(id="x", family="serving throughput", vendor="NVIDIA", system="hgx-h100-8", chips=8,
              model="llama-3.1-70b", metric="tokens_per_s_system", value=8000.0, unit="1/s",
              source="s", locator="l", date="2026", split="holdout", line=1)
    pred = Prediction(mid=9000.0, lo=6000.0, hi=12000.0, call="trnkb workload serve ...")
    (r,) = ev.allin_runs(kb, [{"run": run, "prediction": pred}])
    s = W.system(kb, "hgx-h100-8")
    # InferenceX all-in 1.73 kW per H100 over 1,000 tokens/s per chip (8,000 / 8)
    assert r["allin_j_per_token"] == pytest.approx(1730 / 1000)
    # the model: facility W per chip (chip power x PUE) over predicted tokens/s per chip
    assert r["model_j_low"] == pytest.approx(s.chip_power.lo * s.pue.lo / 1500)
    assert r["model_j_high"] == pytest.approx(s.chip_power.hi * s.pue.hi / 750)
    assert r["within"] == (r["model_j_low"] <= 1.73 <= r["model_j_high"])
    # a run with no prediction or on a chip without an all-in figure is left out
    assert ev.allin_runs(kb, [{"run": run, "prediction": None}]) == []
