"""TCO from explicit inputs (no defaults): a hand-computed annuity example."""

import pytest

from trnkb.calc import tco


def test_cost_per_chip_hour_by_hand():
    # capex 10,000 USD over 4 years at r = 0 -> 2,500 USD/yr; 1 kW x 1.25 x 8766 h x
    # 0.1 USD/kWh = 1,095.75 USD/yr; total 3,595.75 / (8766 h x 0.5) = 0.82038 USD/h
    r = tco.tco("10000 USD", "4 year", 0, "1 kW", "0.1 USD/kWh", 1.25, 0.5)
    assert r.value.to("USD/hour").m == pytest.approx(3595.75 / (8766 * 0.5), rel=1e-4)


def test_cost_of_capital_raises_cost():
    a = tco.tco("10000 USD", "4 year", 0, "1 kW", "0.1 USD/kWh", 1.25, 0.5).value
    b = tco.tco("10000 USD", "4 year", 0.1, "1 kW", "0.1 USD/kWh", 1.25, 0.5).value
    assert b > a


def test_every_price_input_is_required():
    with pytest.raises(TypeError):
        tco.tco("10000 USD", "4 year", 0.1, "1 kW")


def test_perf_per_dollar_output():
    r = tco.tco("10000 USD", "4 year", 0, "1 kW", "0.1 USD/kWh", 1.25, 0.5, flops="1 PFLOPS")
    per_h = r.value.to("USD/hour").m
    assert r.derivation.outputs["flop_per_usd"].to("FLOP/USD").m == pytest.approx(1e15 * 3600 / per_h)
