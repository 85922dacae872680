"""Fabric-size math against the figures SemiAnalysis states (seed 004, "Amazon Cuts to the
Chase: High Radix by Default") and hand-computed fat-tree counts."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnkb.calc import network
from trnkb.units import Q_


@pytest.mark.parametrize(
    ("bw", "port", "layers", "endpoints"),
    [
        ("12.8 Tbit/s", "400 Gbit/s", 2, 512),  # seed 004: 512 GPUs
        ("12.8 Tbit/s", "100 Gbit/s", 2, 8192),  # seed 004: 8,192
        ("12.8 Tbit/s", "100 Gbit/s", 3, 524288),  # seed 004: 524,288
        ("25.6 Tbit/s", "400 Gbit/s", 2, 2048),  # QM9700, 64 x 400G: 2,048
    ],
)
def test_fabric_size_matches_seed_004(bw, port, layers, endpoints):
    assert network.fabric_size(bw, port, layers).value.magnitude == endpoints


def test_fabric_size_counts_switches_and_links_of_a_k_ary_fat_tree():
    # k = 32, 2 layers: 32 leaves, 16 spines, 512 host links + 512 leaf-spine links
    out = network.fabric_size("12.8 Tbit/s", "400 Gbit/s", 2).derivation.outputs
    assert (out["radix"].m, out["switches_leaf"].m, out["switches_spine"].m) == (32, 32, 16)
    assert out["links"].m == 1024
    # k = 128, 3 layers: k^2/2 leaves and spines, k^2/4 core
    out = network.fabric_size("12.8 Tbit/s", "100 Gbit/s", 3).derivation.outputs
    assert (out["switches_leaf"].m, out["switches_spine"].m, out["switches_core"].m) == (
        8192,
        8192,
        4096,
    )


def test_oversubscription_3_to_1_connects_one_and_a_half_times_more():
    flat = network.fabric_size("25.6 Tbit/s", "400 Gbit/s", 2).value.m
    over = network.fabric_size("25.6 Tbit/s", "400 Gbit/s", 2, oversubscription=3).value.m
    # 64-port switch: flat = 64 x 64 / 2 = 2,048; at 3:1 each leaf has 48 down, 16 up, and
    # 64 spines of 64 ports serve 64 leaves: 64 x 48 = 3,072 = 1.5 x 2,048
    assert (flat, over) == (2048, 3072)


def test_51t2_switch_100g_vs_400g_ratio_is_16x_for_2_layers_and_64x_for_3():
    def size(port, layers):
        return network.fabric_size("51.2 Tbit/s", port, layers).value.m

    assert size("100 Gbit/s", 2) / size("400 Gbit/s", 2) == 16
    assert size("100 Gbit/s", 3) / size("400 Gbit/s", 3) == 64


def test_tor_first_fabric_gains_4x_chips_from_doubling_the_plane_switch():
    small = network.tor_fabric_size("12.8 Tbit/s", "100 Gbit/s", 16)
    big = network.tor_fabric_size("25.6 Tbit/s", "100 Gbit/s", 16)
    assert big.value.m / small.value.m == 4
    assert big.derivation.outputs["pods"].m == 2 * small.derivation.outputs["pods"].m
    assert (
        big.derivation.outputs["tors_per_pod"].m == 2 * small.derivation.outputs["tors_per_pod"].m
    )


def test_port_faster_than_switch_is_an_error():
    with pytest.raises(ValueError, match="radix"):
        network.fabric_size("100 Gbit/s", "400 Gbit/s", 2)


@given(
    st.sampled_from(
        [
            ("12.8 Tbit/s", "12800 Gbit/s"),
            ("25.6 Tbit/s", "25600000 Mbit/s"),
            ("51.2 Tbit/s", "6.4 TB/s"),
        ]
    ),
    st.sampled_from(["100 Gbit/s", "0.1 Tbit/s", "12.5 GB/s"]),
    st.integers(1, 3),
)
def test_fabric_size_ignores_unit_prefixes(bw_pair, port, layers):
    a, b = bw_pair
    ref = network.fabric_size(a, "100 Gbit/s", layers).value.m
    assert network.fabric_size(b, port, layers).value.m == ref


@given(st.integers(1, 4), st.sampled_from([100, 200, 400, 800]))
def test_more_layers_or_smaller_ports_never_shrink_the_fabric(layers, port):
    q = Q_(51.2, "Tbit/s")
    base = network.fabric_size(q, Q_(port, "Gbit/s"), layers).value.m
    assert network.fabric_size(q, Q_(port, "Gbit/s"), layers + 1).value.m >= base
    assert network.fabric_size(q, Q_(port / 2, "Gbit/s"), layers).value.m >= base
