"""HBM math against seed 004 ("Trainium3 Server Types and Specifications Overview"):
4 stacks of 12-high 24 Gb dies give 144 GB; 9.6 Gb/s pins on 1024-bit stacks 4.9 TB/s
(Neuron docs, trainium3.rst: 4.9 TB/s); Trn2 at 5.7 Gb/s about 2.9 TB/s."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnkb.calc import memory


def test_trainium3_capacity_is_144_gb():
    assert memory.hbm_capacity(4, 12, "24 Gbit").value.to("GB").m == pytest.approx(144)


def test_binary_die_density_gives_binary_capacity():
    assert memory.hbm_capacity(4, 12, "24 Gibit").value.to("GiB").m == pytest.approx(144)


def test_trainium3_bandwidth_is_4_9_tb_s():
    # Neuron docs (trainium3.rst) state 4.9 TB/s, two significant figures: +-0.05 TB/s
    v = memory.hbm_bandwidth(4, "1024 bit", "9.6 Gbit/s").value
    assert v.to("TB/s").m == pytest.approx(4.9, abs=0.05)


def test_bus_width_may_be_a_pin_count():
    assert memory.hbm_bandwidth(4, 1024, "5.7 Gbit/s").value == memory.hbm_bandwidth(
        4, "1024 bit", "5.7 Gbit/s").value


def test_pin_speedup_5_7_to_9_6_is_68_percent():
    # the same stacks and bus: bandwidth follows the pin rate, 9.6 / 5.7 = 1.684 (68% more)
    a = memory.hbm_bandwidth(4, 1024, "5.7 Gbit/s").value
    b = memory.hbm_bandwidth(4, 1024, "9.6 Gbit/s").value
    assert (b / a).to("").m == pytest.approx(1.68, abs=0.005)


def test_lnc2_on_8_cores_gives_4_devices_of_36_gb():
    r = memory.lnc_memory("144 GB", 8, 2)
    assert r.value.to("GB").m == 36 and r.derivation.outputs["logical_devices"].m == 4


def test_lnc_must_divide_cores():
    with pytest.raises(ValueError, match="divide"):
        memory.lnc_memory("144 GB", 8, 3)


def test_ridge_point():
    assert memory.ridge_point("2000 TFLOPS", "4 TB/s").value.to("FLOP/B").m == pytest.approx(500)


@given(st.sampled_from(["24 Gbit", "24000 Mbit", "3 GB", "0.024 Tbit"]))
def test_capacity_ignores_prefixes(density):
    assert memory.hbm_capacity(4, 12, density).value.to("GB").m == pytest.approx(144)


@given(st.integers(1, 16), st.integers(1, 16))
def test_capacity_is_monotonic_in_stack_height(stacks, height):
    assert memory.hbm_capacity(stacks, height + 1, "24 Gbit").value > memory.hbm_capacity(
        stacks, height, "24 Gbit").value
