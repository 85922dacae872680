"""Property tests (Hypothesis, issue 15 §1): the unit round trip and the spec loader.

The unit list is every unit written in specs/ (``format_unit`` of each shipped fact, at
the time of writing), so the round trip covers what the knowledge base really stores.
"""

import re
import shutil
from pathlib import Path

import pint
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trnkb
from trnkb.spec.specfile import SpecError
from trnkb.units import format_quantity, format_unit, parse, ureg

SPEC_UNITS = ["B", "EFLOP/s", "GB", "GB/s", "GHz", "GW", "Gbit", "Gbit/s", "GiB", "GiB/s",
              "MB", "MiB", "PB", "PB/s", "PFLOP/s", "TB", "TB/s", "TFLOP/s", "Tbit/s", "USD/h",
              "W", "bit", "kW", "ns", "µm"]
BIT_UNITS = [u for u in SPEC_UNITS if "bit" in u]
# units pint's default registry also defines (FLOP and USD are trnkb's own)
PINT_KNOWN = [u for u in SPEC_UNITS if "FLOP" not in u and "USD" not in u]

magnitudes = st.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False)
DEFAULT = pint.UnitRegistry()


def test_bits_are_never_dimensionless():
    # pint's own definitions make bit = [] (dimensionless); trnkb's must not
    assert DEFAULT.bit.dimensionless
    assert not ureg.bit.dimensionless and not ureg.byte.dimensionless
    for u in BIT_UNITS:
        assert not parse(f"1 {u}").dimensionless, u


@given(magnitudes, st.sampled_from(SPEC_UNITS))
def test_format_unit_then_parse_gives_the_same_quantity(m, unit):
    q = ureg.Quantity(m, unit)
    back = parse(f"{m!r} {format_unit(q)}")
    assert back.units == q.units
    assert back.magnitude == m  # repr of a float reads back exactly


@given(magnitudes, st.sampled_from(SPEC_UNITS))
def test_format_quantity_reads_back_to_four_significant_digits(m, unit):
    q = ureg.Quantity(m, unit)
    text = format_quantity(q).replace(",", "")  # thousands separators are display only
    back = parse(text)
    assert back.units == q.units
    assert back.magnitude == pytest.approx(m, rel=5e-4)  # sig=4: half a unit in the 4th digit


@given(magnitudes, st.sampled_from(BIT_UNITS))
def test_bits_stay_bits_through_the_round_trip(m, unit):
    back = parse(f"{m!r} {format_unit(ureg.Quantity(m, unit))}")
    assert "[information]" in str(back.dimensionality)
    base = ureg.Quantity(m, unit).to_base_units()
    assert str(base.units).startswith("bit")  # reduces to bits, not to a pure number
    assert back.to_base_units().magnitude == pytest.approx(base.magnitude)


@given(magnitudes, st.sampled_from(PINT_KNOWN))
def test_pints_default_registry_reads_format_unit_as_the_same_quantity(m, unit):
    q = ureg.Quantity(m, unit)
    theirs = DEFAULT.Quantity(f"{m!r} {format_unit(q)}")
    assert "gilbert" not in str(theirs.units)  # "Gb" would be gigagilbert
    # same dimension once trnkb's [information] is dropped (pint's bits are dimensionless)
    ours = {k: v for k, v in q.dimensionality.items() if k != "[information]"}
    assert dict(theirs.dimensionality.items()) == ours
    # same size: both registries reduce bytes to bits (1 B = 8 bit)
    assert theirs.to_base_units().magnitude == pytest.approx(q.to_base_units().magnitude)


# ---- the spec loader -----------------------------------------------------------------

GOOD = Path(__file__).parent / "data" / "good"
SOURCES = ("semianalysis-trn3", "aws-neuron-trn3")  # tests/data/good/sources.yaml
# field -> (unit, low, high): inside specs' plausible ranges (trnkb/spec/schema.py documents
# 1-10,000 GB, 0.1-100 TB/s, 0.01-100,000 TFLOPS, 0.1-6 GHz), drawn from a narrower band
FIELDS = {"hbm_capacity": ("GB", 1, 5000), "hbm_bandwidth": ("TB/s", 0.2, 50),
          "dense_bf16": ("TFLOPS", 0.1, 50000), "clock": ("GHz", 0.2, 5)}

ids = st.from_regex(r"[a-z][a-z0-9]{1,8}(-[a-z0-9]{1,4})?", fullmatch=True)


@st.composite
def chip_rows(draw):
    names = draw(st.lists(ids, min_size=1, max_size=5, unique=True))
    rows = []
    for i in names:
        row = {"id": i, "name": f"Chip {i}", "vendor": "Test", "status": "announced",
               "cores": {"value": draw(st.integers(1, 256)), "source": SOURCES[0],
                         "locator": "table", "kind": "reported"}}
        for f in draw(st.lists(st.sampled_from(sorted(FIELDS)), min_size=1, unique=True)):
            unit, lo, hi = FIELDS[f]
            x = round(draw(st.floats(lo, hi)), 3)
            row[f] = {"value": f"{x} {unit}", "source": draw(st.sampled_from(SOURCES)),
                      "locator": "p. 1", "kind": draw(st.sampled_from(["reported", "estimate"]))}
        rows.append(row)
    return rows


def _write(root: Path, rows) -> Path:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    shutil.copy(GOOD / "sources.yaml", root / "sources.yaml")
    (root / "chips.yaml").write_text(yaml.safe_dump(rows, sort_keys=False, allow_unicode=True),
                                     encoding="utf-8")
    return root


SLOW = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@SLOW
@given(chip_rows())
def test_random_valid_rows_load_with_every_value(tmp_path, rows):
    kb = trnkb.load(_write(tmp_path / "specs", rows))
    for row in rows:
        assert kb.value(row["id"], "cores").magnitude == row["cores"]["value"]
        for f in FIELDS:
            if f in row:
                assert kb.value(row["id"], f) == parse(row[f]["value"].replace("TFLOPS", "TFLOP/s"))
                assert kb.provenance(row["id"], f)["source"] == row[f]["source"]


CORRUPTIONS = st.sampled_from([
    ("value", "banana"), ("value", "nan TB/s"), ("value", "1e999 GB"), ("value", "-5 GB"),
    ("value", "12 parsecs"), ("value", "3 GHz"), ("value", "9**9**9 GB"), ("value", ""),
    ("value", 1e9), ("source", "no-such-source"), ("kind", "rumour"), ("locator", ""),
])


@SLOW
@given(chip_rows(), CORRUPTIONS, st.data())
def test_one_corrupted_value_is_refused_with_file_and_line(tmp_path, rows, corruption, data):
    row = data.draw(st.sampled_from(rows))
    field = data.draw(st.sampled_from([f for f in FIELDS if f in row]))
    key, bad = corruption
    if key == "value" and bad == "3 GHz" and field == "clock":
        bad = "3 GB"  # a wrong dimension for this field
    row[field] = {**row[field], key: bad}
    root = _write(tmp_path / "specs", rows)
    with pytest.raises(SpecError) as e:
        trnkb.load(root)  # raises: nothing half-loaded is returned
    text = str(e.value)
    assert "Traceback" not in text
    # file:line: with the line of the corrupted row in chips.yaml
    lines = (root / "chips.yaml").read_text(encoding="utf-8").splitlines()
    first = [n for n, line in enumerate(lines, 1) if line == f"- id: {row['id']}"][0]
    found = [(int(n), rest) for n, rest in re.findall(r"chips\.yaml:(\d+): (.*)", text)]
    assert found, text
    assert any(n >= first and (field in rest or row["id"] in rest) for n, rest in found), text


def test_the_cli_refuses_a_corrupted_spec_in_one_line_without_traceback(tmp_path):
    import subprocess
    import sys

    rows = [{"id": "x1", "name": "X", "vendor": "Test", "status": "announced",
             "hbm_capacity": {"value": "banana", "source": SOURCES[0], "locator": "t",
                              "kind": "reported"}}]
    root = _write(tmp_path / "specs", rows)
    p = subprocess.run([sys.executable, "-m", "trnkb", "validate", str(root)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert re.search(r"chips\.yaml:\d+: .*hbm_capacity", p.stderr), p.stderr
