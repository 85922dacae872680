"""Fixed costs fitted on the OperatorX sweep only; the other files are held out.

Measured data: trnkb/engine/data/operatorx/*.json (SemiAnalysis InferenceX, branch
codex/trainium-exploration, commit e60b2ca4, Apache-2.0): NKI GEMMs on one LNC=2
logical NeuronCore of a Trainium3, profiler total_time medians over 21 samples.
"""

from __future__ import annotations

import json
import statistics

import pytest

from trnkb.engine.calibration import FIT_FILE, FIT_JSON, fit, held_out_files, load, predict_rows


@pytest.fixture(scope="module")
def stored():
    return json.loads(FIT_JSON.read_text())


def test_the_stored_fit_is_what_fitting_the_sweep_gives(trn3, stored):
    assert fit(trn3) == stored


def test_only_the_sweep_is_fitted_and_every_other_file_is_held_out(stored):
    assert stored["fitted_file"] == FIT_FILE == "trn3_lnc2_gemm_sweep_20260731.json"
    assert stored["held_out_files"] == held_out_files()
    assert FIT_FILE not in held_out_files() and len(held_out_files()) == 4
    assert {r["name"] for r in stored["rows"]} == {r["name"] for r in load(FIT_FILE)}


def test_specs_carry_the_fitted_constants(trn3, stored):
    c = stored["constants"]
    assert trn3.tensor_sustained == c["tensor_sustained"]
    assert trn3.kernel_launch.to("us").magnitude == pytest.approx(c["kernel_launch_us"])
    assert trn3.kernel_start_end.to("us").magnitude == pytest.approx(c["kernel_start_end_us"])
    assert trn3.output_block_cost.to("us").magnitude == pytest.approx(c["output_block_cost_us"])
    assert (trn3.output_block_rows, trn3.output_block_cols) == (2048, 1024)


def test_held_out_median_error_is_within_3_percent_with_no_systematic_sign(trn3):
    errors = []
    for name in held_out_files():
        for row in predict_rows(trn3, name):
            # the error is computed here from the measured median, not taken from the engine
            errors.append((row["predicted_us"] - row["measured_us"]) / row["measured_us"])
    assert len(errors) == 250
    assert statistics.median(abs(e) for e in errors) <= 0.03
    faster = sum(e < 0 for e in errors) / len(errors)
    assert 0.30 <= faster <= 0.70


def test_the_profiler_normalises_to_157_tflops_per_logical_core_and_4_71_tb_s_per_chip(trn3):
    for r in load(FIT_FILE):
        t = r["total_time_us"]["median"] * 1e-6
        peak = r["executed_flops"] / t / r["mfu_estimated_fraction"]
        hbm = (r["hbm_read_bytes"] + r["hbm_write_bytes"]) / t / r["mbu_estimated_fraction"]
        assert peak == pytest.approx(157.29e12, rel=2e-3)
        assert 4 * hbm == pytest.approx(4.71e12, rel=2e-3)
    assert trn3.profiler_peaks == (pytest.approx(157.29), pytest.approx(4.71))
