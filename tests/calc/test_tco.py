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


@pytest.mark.parametrize(
    ("field", "bad", "match"),
    [
        ("power_price", "0.1 USD", "power_price"),  # a price per kWh, not a sum
        ("utilization", 0, "utilization"),  # divides the year
        ("lifetime", "4 GB", "lifetime"),
        ("cost_of_capital", -0.1, "negative"),
    ],
)
def test_inputs_that_would_give_a_meaningless_cost_are_refused(field, bad, match):
    args = {
        "capex": "10000 USD",
        "lifetime": "4 year",
        "cost_of_capital": 0,
        "chip_power": "1 kW",
        "power_price": "0.1 USD/kWh",
        "pue": 1.25,
        "utilization": 0.5,
    } | {field: bad}
    with pytest.raises(ValueError, match=match):
        tco.tco(**args)


def test_annuity_at_8_percent_over_5_years_by_hand():
    # annuity factor 0.08 / (1 - 1.08^-5) = 0.250456; 10,000 USD -> 2,504.56 USD/yr
    r = tco.tco("10000 USD", "5 year", 0.08, "0 kW", "0.1 USD/kWh", 1.25, 1.0)
    assert r.derivation.outputs["capital_per_year"].to("USD/year").m == pytest.approx(
        2504.56, abs=0.01
    )


def test_perf_per_dollar_output():
    r = tco.tco("10000 USD", "4 year", 0, "1 kW", "0.1 USD/kWh", 1.25, 0.5, flops="1 PFLOPS")
    per_h = r.value.to("USD/hour").m
    assert r.derivation.outputs["flop_per_usd"].to("FLOP/USD").m == pytest.approx(
        1e15 * 3600 / per_h
    )
