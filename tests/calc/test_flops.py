"""Peak FLOP/s from the array: Neuron docs give 128x128 PEs, 8 NeuronCores, 2.4 GHz and
per-core 79 (BF16) / 315 (MXFP8) TFLOPS (shared/neuroncore_facts.md A.2, B.1)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnkb.calc import flops
from trnkb.units import Q_


def test_trainium3_mxfp8_peak_from_array_is_2517_tflops():
    # 8 x 128 x 128 x 4 MACs x 2 FLOP x 2.4 GHz = 2516.58 TFLOPS; AWS table: 2,517
    v = flops.peak_flops(8, 128, 128, "2.4 GHz", macs_per_pe=4).value
    assert v.to("TFLOPS").m == pytest.approx(2516.58, abs=0.01)


def test_one_neuroncore_bf16_is_78_6_tflops():
    assert flops.peak_flops(1, 128, 128, "2.4 GHz").value.to("TFLOPS").m == pytest.approx(
        78.64, abs=0.01
    )


def test_implied_clock_inverts_peak_flops():
    # Trn3 BF16 671 TFLOPS (AWS) on 8 x 128 x 128 implies 2.56 GHz (by hand: 671e12 /
    # 262,144 FLOP per cycle = 2.5597 GHz), 6.7% above the 2.4 GHz the Neuron docs state
    v = flops.implied_clock("671 TFLOPS", 8, 128, 128).value
    assert v.to("GHz").m == pytest.approx(2.56, abs=0.001)


def test_training_flops_is_6nd():
    assert flops.training_flops(70e9, 15e12).value.to("FLOP").m == pytest.approx(6 * 70e9 * 15e12)


def test_time_for_flops_at_40_percent_mfu():
    # 1e24 FLOP at 1 EFLOP/s x 0.4 = 2.5e6 s = 28.94 days
    v = flops.time_for_flops("1e24 FLOP", "1 EFLOPS", 0.4).value
    assert v.to("s").m == pytest.approx(2.5e6)


def test_flops_per_watt():
    assert flops.flops_per_watt("1000 TFLOPS", "1 kW").value.to("TFLOPS/W").m == pytest.approx(1)


@pytest.mark.parametrize("bad", [{"clock": "2.4 GB"}, {"cores": 0}, {"rows": 1.5}])
def test_bad_inputs_are_value_errors(bad):
    args = {"cores": 8, "rows": 128, "cols": 128, "clock": "2.4 GHz"} | bad
    with pytest.raises(ValueError):
        flops.peak_flops(**args)


@given(st.sampled_from(["2.4 GHz", "2400 MHz", "2400000 kHz", "0.0024 THz"]))
def test_peak_flops_ignores_clock_prefix(clock):
    assert flops.peak_flops(8, 128, 128, clock).value.to("TFLOPS").m == pytest.approx(629.1456)


@given(st.floats(0.1, 5), st.floats(0.1, 5), st.integers(1, 8))
def test_peak_flops_grows_with_clock(a, b, cores):
    lo, hi = sorted((a, b))
    assert (
        flops.peak_flops(cores, 128, 128, Q_(lo, "GHz")).value
        <= flops.peak_flops(cores, 128, 128, Q_(hi, "GHz")).value
    )
