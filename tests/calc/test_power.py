"""Power math: PUE = facility / IT (seed 004 "Datacenter DLC vs Air Tradeoffs": peak PUE
about 1.2 for air, about 1.5 with chillers)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trnkb.calc import power


def test_1_gw_campus_at_pue_1_2_has_833_mw_it():
    assert power.it_power("1 GW", 1.2).value.to("MW").m == pytest.approx(1000 / 1.2)


def test_pue_1_5_instead_of_1_2_costs_a_fifth_of_it_power():
    a = power.it_power("1 GW", 1.2).value
    b = power.it_power("1 GW", 1.5).value
    assert (b / a).to("").m == pytest.approx(0.8)


def test_pue_below_one_is_refused():
    with pytest.raises(ValueError, match="PUE"):
        power.it_power("1 MW", 0.9)


def test_facility_power_with_rack_overhead():
    # 64 chips x 1 kW + 2 racks x 10 kW = 84 kW IT; x 1.2 = 100.8 kW
    r = power.facility_power(64, "1 kW", 1.2, rack_overhead="10 kW", chips_per_rack=32)
    assert r.value.to("kW").m == pytest.approx(100.8)


def test_chips_per_mw_and_rack_density():
    assert power.chips_per_mw("1 kW").value.m == pytest.approx(1000)
    assert power.rack_power_density(72, "1 kW", "20 kW").value.to("kW").m == pytest.approx(92)


def test_training_energy():
    # 1e24 FLOP / (1e18 FLOP/s x 0.5) = 2e6 s; x 10 MW = 2e7 MJ = 5555.6 MWh
    r = power.training_energy("1e24 FLOP", "1 EFLOPS", 0.5, "10 MW")
    assert r.value.to("MWh").m == pytest.approx(2e6 * 10 / 3600)


@given(st.sampled_from(["1 GW", "1000 MW", "1000000 kW", "1e9 W"]), st.floats(1, 3))
def test_it_power_ignores_prefixes(p, pue):
    assert power.it_power(p, pue).value.to("MW").m == pytest.approx(1000 / pue)


@given(st.floats(1, 3), st.floats(1, 3))
def test_higher_pue_means_less_it_power(a, b):
    lo, hi = sorted((a, b))
    assert power.it_power("1 GW", hi).value <= power.it_power("1 GW", lo).value
