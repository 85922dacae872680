"""Collectives over fabric graphs and analytic fabrics, against hand computations."""

import pytest

from trnkb import topology
from trnkb.workload.collectives import Network


def test_switched_fabric_group_bandwidth_is_injection_and_half_the_group(kb):
    f = topology.fabric("gb200-nvl72", kb=kb)
    gb = f.group_bandwidth(72)
    # GB200: 900 GB/s per direction per GPU (chips table), every GPU one hop from every other
    assert gb["injection"].to("GB/s").magnitude == pytest.approx(900)
    assert gb["bisection"].to("GB/s").magnitude == pytest.approx(36 * 900)
    assert gb["mean_hops"] == pytest.approx(1.0)


def test_torus_group_uses_only_its_own_links(kb):
    f = topology.fabric("trn2-nl16-2d-torus", kb=kb)
    link = f.group_bandwidth(16)["injection"].to("GB/s").magnitude / 4  # four torus links per chip
    # the first 4 chips are one wrap-around ring of the 4x4 torus: 2 links each, cut = 2 links
    g4 = f.group_bandwidth(4)
    assert g4["injection"].to("GB/s").magnitude == pytest.approx(2 * link)
    assert g4["bisection"].to("GB/s").magnitude == pytest.approx(2 * link)


def test_switch_generation_changes_the_pair_bandwidth(kb):
    # Gen1 NL72x2: positions A and B of a tray sit on different switch planes, so a pair
    # only meets through the compute-tray switch; Gen2 puts A and B on one plane
    g1 = topology.fabric("trn3-nl72x2-switched", "gen1", kb).group_bandwidth(2)
    g2 = topology.fabric("trn3-nl72x2-switched", "gen2", kb).group_bandwidth(2)
    assert g1["bisection"] < g2["bisection"]


def test_collective_time_matches_the_ring_formula(kb):
    f = topology.fabric("gb200-nvl72", kb=kb)
    t = f.collective_time("all-reduce", "720 MB", group=72)
    # 2 (g-1)/g B / 900 GB/s
    assert t.to("s").magnitude == pytest.approx(2 * 71 / 72 * 720e6 / 900e9)


def test_analytic_switch_and_hierarchical_scaleout():
    net = Network(domain=8, chip_scaleup=100e9, scaleout=10e9)
    b = 1e9
    assert net.time("all-gather", b, 8) == pytest.approx(7 / 8 * b / 100e9)
    # 16 ranks 8 apart: one per domain, two domains -> ring over the NICs only
    assert net.time("all-reduce", b, 2, stride=8) == pytest.approx(2 * 1 / 2 * b / 10e9)
    # 16 packed ranks: all-reduce in the domain, then across 2 domains on 1/8 of the data
    t = net.time("all-reduce", b, 16)
    assert t == pytest.approx(2 * 7 / 8 * b / 100e9 + 2 * 1 / 2 * (b / 8) / 10e9)


def test_all_to_all_is_bisection_bound_on_a_thin_cut():
    net = Network(domain=16, chip_scaleup=100e9, scaleout=10e9, scaleup_model="torus",
                  torus_dims=(16,), torus_ndim=1)
    b = 1e9
    # ring of 16: injection 2 links = 100 GB/s, cut 2 links = 100 GB/s -> g B / 4 / cut dominates
    assert net.time("all-to-all", b, 16) == pytest.approx(16 * b / 4 / 100e9)


def test_latency_grows_with_log2_of_the_group():
    net = Network(domain=64, chip_scaleup=1e12, scaleout=1e10)
    t8 = net.time("all-reduce", 1.0, 8, step_latency=1e-6)
    t64 = net.time("all-reduce", 1.0, 64, step_latency=1e-6)
    assert t8 == pytest.approx(6e-6, rel=1e-3) and t64 == pytest.approx(12e-6, rel=1e-3)
