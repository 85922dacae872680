"""The registry gives bytes and FLOP their own dimensions and keeps prefixes apart."""

import pytest
from pint.errors import DimensionalityError

from trnkb.units import Q_, has_dimension, is_binary_prefixed


def test_gb_and_gib_differ_by_the_binary_factor():
    # 1 GiB = 2**30 B, 1 GB = 1e9 B: 144 GiB = 154.6 GB
    assert Q_("144 GiB").to("GB").magnitude == pytest.approx(144 * 2**30 / 1e9)
    assert Q_("144 GB") != Q_("144 GiB")


def test_bandwidth_cannot_become_a_frequency():
    # trnkb's registry, not pint's: in pint's defaults bytes are dimensionless, so the
    # same conversion succeeds there (TB/s -> 1/s). The test fails if trnkb's definitions
    # fall back to pint's.
    import pint

    assert pint.UnitRegistry().Quantity("1 TB/s").to("GHz").magnitude == pytest.approx(8000)
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


def test_bit_rates_parse_and_convert_to_byte_rates():
    # 1.6T Ethernet: 1600 Gbit/s / 8 bit per byte = 200 GB/s (hand arithmetic), through
    # trnkb's parse and written back with trnkb's unit spelling
    from trnkb.units import format_unit, parse

    q = parse("1600 Gbit/s").to("GB/s")
    assert q.magnitude == pytest.approx(200)
    assert format_unit(q) == "GB/s"


def test_binary_prefix_detection():
    assert is_binary_prefixed(Q_("1 GiB").units)
    assert not is_binary_prefixed(Q_("1 GB").units)


# --- the registry is built from the shipped data file; bits are never dimensionless ---

import pint  # noqa: E402

from trnkb.units import (  # noqa: E402
    QuantityError,
    format_number,
    format_quantity,
    format_unit,
    parse,
    ureg,
)


def test_bits_have_the_information_dimension():
    # If the shipped definitions ever lose "bit = [information]", bits become
    # dimensionless again (pint's default) and this fails.
    assert not ureg.bit.dimensionless
    assert str(ureg.bit.dimensionality) == "[information]"
    assert parse("1 Gbit/s").dimensionality == parse("1 GB/s").dimensionality
    with pytest.raises(DimensionalityError):
        parse("1 Gbit/s").to("Hz")


def test_registry_is_built_from_the_packaged_file():
    from importlib import resources

    text = resources.files("trnkb").joinpath("data", "units_en.txt").read_text(encoding="utf-8")
    assert "\nbit = [information] = b" in text
    assert "\nFLOP = [compute]" in text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1600 Gbit/s", "Gbit/s"),
        ("12.8 Tbit/s", "Tbit/s"),
        ("24 Gbit", "Gbit"),
        ("9 bit", "bit"),
        ("4.9 TB/s", "TB/s"),
        ("144 GiB", "GiB"),
        ("2517 TFLOPS", "TFLOP/s"),
        ("1 FLOP/B", "FLOP/B"),
        ("1.2 GHz", "GHz"),
        ("1 kW", "kW"),
        ("3 W/m**2", "W/m**2"),
        ("8", ""),
        ("5 USD/year", "USD/year"),
        ("3 lanes", "lane"),
    ],
)
def test_format_unit_writes_one_unambiguous_spelling(text, expected):
    assert format_unit(parse(text)) == expected


@pytest.mark.parametrize("text", ["1600 Gbit/s", "12.8 Tbit/s", "24 Gbit", "800 Mbit/s", "1 kbit"])
def test_bit_units_read_back_as_bits_by_pints_default_registry(text):
    q = parse(text)
    written = f"{q.magnitude} {format_unit(q)}"
    default = pint.UnitRegistry()  # pint's own registry: bits are dimensionless there
    back = default.Quantity(written)
    # 1600 Gbit/s = 1.6e12 bit/s; a gilbert would not convert to bit at all
    assert back.to(str(q.to_base_units().units)).magnitude == pytest.approx(
        q.to_base_units().magnitude
    )
    assert "gilbert" not in str(back.units)
    assert parse(written) == q  # and trnkb's registry reads it back identically


def test_pint_short_bit_symbol_is_the_gilbert_trap():
    # why format_unit never writes "Gb": pint reads it as gigagilbert
    assert "gilbert" in str(pint.UnitRegistry().parse_units("Gb"))


@pytest.mark.parametrize(
    "x, expected",
    [
        (2517.0, "2,517"),
        (4.9, "4.9"),
        (20000, "20,000"),
        (123456.7, "123,457"),
        (0.00012346, "0.0001235"),
        (128.00000000000003, "128"),
        (1.7725, "1.772"),
        (0.0, "0"),
        (-1536.0, "-1,536"),
        (float("nan"), "nan"),
    ],
)
def test_format_number(x, expected):
    # expected strings written by hand from the rule: 4 significant digits, separators,
    # integer digits never replaced by zeros (1.7725 rounds half-to-even in binary: 1.772)
    assert format_number(x) == expected


def test_format_quantity():
    assert format_quantity(parse("2517 TFLOPS")) == "2,517 TFLOP/s"
    assert format_quantity(parse("1600 Gbit/s")) == "1,600 Gbit/s"
    assert format_quantity(parse("144 GiB")) == "144 GiB"
    assert format_quantity(parse("72")) == "72"
    assert format_quantity("text stays") == "text stays"


@pytest.mark.parametrize(
    "bad",
    [
        "banana",
        "nan",
        "inf",
        "9**9**9",
        "GB",
        "144 GB*2",
        "1 GB/2",
        "1 foo",
        "1e999 GB",
        "",
        "x" * 500,
        float("nan"),
        True,
    ],
)
def test_parse_refuses_with_quantity_error(bad):
    with pytest.raises(QuantityError):
        parse(bad)
    assert issubclass(QuantityError, ValueError)


def test_scalar_quantities_do_not_import_pandas_and_kb_tables_bind_pint_pandas():
    # issue 23: a command computing with scalars does not pay for pandas; the KB's wide
    # tables (the package's one maker of pint[...] columns) bind pint-pandas to our registry
    import subprocess
    import sys

    code = ("import sys, trnkb.units as u\n"
            "print('pandas' in sys.modules, 'pint_pandas' in sys.modules)\n"
            "import trnkb.kb.tables, pint_pandas\n"
            "print(pint_pandas.PintType.ureg is u.ureg)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False", "True"]
