"""The registry gives bytes and FLOP their own dimensions and keeps prefixes apart."""

import pytest
from pint.errors import DimensionalityError

from trnkb.units import Q_, has_dimension, is_binary_prefixed


def test_gb_and_gib_differ_by_the_binary_factor():
    # 1 GiB = 2**30 B, 1 GB = 1e9 B: 144 GiB = 154.6 GB
    assert Q_("144 GiB").to("GB").magnitude == pytest.approx(144 * 2**30 / 1e9)
    assert Q_("144 GB") != Q_("144 GiB")


def test_bandwidth_cannot_become_a_frequency():
    with pytest.raises(DimensionalityError):
        Q_("1 TB/s").to("GHz")


def test_bandwidth_has_information_per_time():
    assert has_dimension(Q_("4.9 TB/s"), "bandwidth")
    assert not has_dimension(Q_("4.9 GHz"), "bandwidth")


def test_flops_over_bandwidth_is_flop_per_byte():
    # Trainium3: 2517 TFLOPS MXFP8 / 4.9 TB/s = 513.7 FLOP/B (ridge point)
    ridge = (Q_("2517 TFLOPS") / Q_("4.9 TB/s")).to("FLOP/B")
    assert ridge.magnitude == pytest.approx(2517 / 4.9)


def test_lanes_times_lane_rate_is_a_bandwidth():
    # 144 lanes x 64 Gbit/s = 9216 Gbit/s = 1.152 TB/s per direction
    assert (144 * Q_("1 lane") * Q_("64 Gbit/s")).to("TB/s").magnitude == pytest.approx(1.152)


def test_byte_is_eight_bits():
    assert Q_("1 B").to("bit").magnitude == 8


def test_binary_prefix_detection():
    assert is_binary_prefixed(Q_("1 GiB").units)
    assert not is_binary_prefixed(Q_("1 GB").units)
