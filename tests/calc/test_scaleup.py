"""Scale-up math against seed 004 ("Scale Up Networking Architecture", "NL72x2 Switched on
Gen1 Switch Trays"): 144 active PCIe 6.0 lanes at 64 Gb/s per direction about 1.2 TB/s;
64 PCB + 64/16 backplane + 16 cross-rack lanes; 40 + 144 = 184 switches per rack."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnkb.calc import scaleup


def test_144_lanes_at_64g_is_1152_gb_s_per_direction():
    r = scaleup.scaleup_bandwidth(144, "64 Gbit/s")
    assert r.value.to("GB/s").m == pytest.approx(1152)
    assert r.derivation.outputs["bidirectional"].to("GB/s").m == pytest.approx(2304)


def test_lane_budget_of_trainium3():
    out = scaleup.lane_budget(64, 64, 16, 16, "64 Gbit/s").derivation.outputs
    assert out["active_lanes"].m == 144 and out["total_lanes"].m == 160
    assert out["cross_rack_to_backplane"].m == pytest.approx(0.25)


def test_nl72x2_gen1_has_184_switches_per_rack_and_368_per_domain():
    # 72 chips x 80 backplane lanes in x8 ports = 720 ports; 18 of 20 ports used -> 40
    r = scaleup.switches_per_rack(72, 80, 8, 18, tray_switches=144, racks=2)
    assert r.value.m == 184 and r.derivation.outputs["per_domain"].m == 368


def test_nl32x2_needs_16_gen1_or_8_gen2_switches():
    assert scaleup.switches_per_rack(32, 80, 8, 20).value.m == 16
    assert scaleup.switches_per_rack(32, 80, 8, 40).value.m == 8


def test_pex90144_lane_limit_caps_ports_at_x8():
    # 144 lanes / 8 lanes per port = 18 usable of 72 ports
    r = scaleup.switches_per_rack(72, 80, 8, 72, switch_lanes=144)
    assert r.derivation.outputs["usable_ports_per_switch"].m == 18


@given(st.sampled_from(["64 Gbit/s", "64000 Mbit/s", "8 GB/s", "0.064 Tbit/s"]))
def test_scaleup_bandwidth_ignores_prefixes(rate):
    assert scaleup.scaleup_bandwidth(144, rate).value.to("GB/s").m == pytest.approx(1152)


@given(st.integers(1, 500), st.integers(1, 500))
def test_more_lanes_never_less_bandwidth(a, b):
    lo, hi = sorted((a, b))
    assert scaleup.scaleup_bandwidth(lo, "64 Gbit/s").value <= scaleup.scaleup_bandwidth(
        hi, "64 Gbit/s").value
