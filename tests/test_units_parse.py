"""units.parse accepts only `<plain decimal number> <unit expression>`; anything else is a
QuantityError with one line, fast (no pint expression evaluation ever runs)."""

import pytest

from trnkb.units import MAX_TEXT, MAX_WORD, QuantityError, parse, ureg


@pytest.mark.parametrize("text, magnitude, unit", [
    ("144 GB", 144, "GB"),
    ("4.9 TB/s", 4.9, "TB/s"),
    ("144GiB", 144, "GiB"),
    ("1e3 W", 1000.0, "W"),
    ("-500 W", -500, "W"),  # sign is the schema's business, not the parser's
    ("3 (GB/s)**2", 3, "GB**2/s**2"),
    ("2 kW*h", 2, "kW*h"),
    ("10 USD/hour", 10, "USD/hour"),
    ("2 µs", 2, "us"),
    ("0.4", 0.4, ""),
    (".5 GHz", 0.5, "GHz"),
    ("865000 / s", 865000, "1/s"),  # a rate: a leading / is a reciprocal unit
])
def test_plain_number_and_unit_expression_parse(text, magnitude, unit):
    q = parse(text)
    assert q.magnitude == pytest.approx(magnitude)
    assert q.units == ureg.parse_units(unit)


@pytest.mark.parametrize("text, why", [
    ("banana", "a unit with no number"),
    ("GB", "a unit with no number"),
    ("(9**9**9) GB", "expected a plain number"),
    ("9**9**9", "'**' takes a whole number"),
    ("1 GB**9**9", "'**' takes a whole number"),
    ("1 GB*3", "a number inside the unit"),
    ("1 GB/1000", "a number inside the unit"),
    ("nan", "not a finite number"),
    ("-inf MB", "not a finite number"),
    ("Infinity", "not a finite number"),
    ("1e400 W", "number out of range"),
    ("1,000 GB", "unexpected ','"),
    ("1 ((((((GB))))))", "parentheses nested deeper"),
    ("1 GB)", "unbalanced ')'"),
    ("1 (GB", "incomplete"),
    ("1 GB/", "incomplete"),
    ("144 GBB", "unknown unit 'GBB'"),
    ("", "empty quantity"),
    ("1 __import__('os')", "unexpected"),
])
def test_anything_else_is_refused_in_one_line(text, why):
    with pytest.raises(QuantityError) as info:
        parse(text)
    assert why in str(info.value)
    assert "\n" not in str(info.value)


def test_length_caps_bound_the_work_and_the_echo():
    with pytest.raises(QuantityError) as info:
        parse("1 " + "x" * 100_000)  # pint's unit lookup is quadratic in the word
    assert f"limit {MAX_TEXT}" in str(info.value) and len(str(info.value)) < 200
    with pytest.raises(QuantityError) as info:
        parse("1 " + "x" * (MAX_WORD + 1))
    assert f"limit {MAX_WORD}" in str(info.value)


@pytest.mark.parametrize("raw", [float("nan"), float("inf"), True, None, [1], {"a": 1}])
def test_non_text_non_finite_and_non_numbers_are_refused(raw):
    with pytest.raises(QuantityError):
        parse(raw)


def test_quantity_error_is_a_value_error():
    assert issubclass(QuantityError, ValueError)
