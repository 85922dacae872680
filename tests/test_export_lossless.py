"""Every fact of the shipped KB, exported in every format and read back with pandas (and
DuckDB for Parquet), is the same quantity, value, unit, source and kind."""

import json
import math

import pandas as pd
import pint
import pytest

import trnkb
from trnkb.output.export import FORMATS, write_export
from trnkb.units import parse


@pytest.fixture(scope="module")
def exported(kb, tmp_path_factory):
    out = {}
    for fmt in FORMATS:
        d = tmp_path_factory.mktemp(fmt)
        write_export(kb, d, fmt)
        out[fmt] = d
    return out


def _read_facts(fmt: str, d) -> pd.DataFrame:
    path = d / f"facts.{fmt}"
    if fmt == "csv":  # a data user's call: keep empty strings, not NaN, for text columns
        return pd.read_csv(path, keep_default_na=False, na_values={"magnitude": [""]})
    if fmt == "json":
        return pd.read_json(path, orient="records", dtype=False, precise_float=True)
    return pd.read_parquet(path)


def _same(fact, row) -> None:
    v = fact["value"]
    if isinstance(v, str):
        assert row["value"] == v
        assert math.isnan(float(row["magnitude"])) if row["magnitude"] not in ("", None) else True
    else:
        back = parse(row["value"])
        # the same quantity, digit for digit; a value typed in a spec also keeps its unit
        # object (a derived value is written in the canonical unit: TFLOP/s for TFLOPS)
        assert back.to(v.units).magnitude == v.magnitude, (row["value"], v)
        if fact["kind"] != "derived":
            assert back.units == v.units, (row["value"], v)
        # as typed when in the source's unit; a conversion to 15 digits (no float noise)
        assert float(row["magnitude"]) in (fact["magnitude"], float(f"{fact['magnitude']:.15g}"))
    for col in (
        "unit",
        "canonical_unit",
        "source",
        "kind",
        "id",
        "field",
        "table",
        "locator",
        "derivation",
        "direction",
        "density",
    ):
        assert str(row[col]) == str(fact[col]), col


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_fact_reads_back_identically_with_pandas(kb, exported, fmt):
    back = _read_facts(fmt, exported[fmt])
    assert len(back) == len(kb.facts)
    for (_, fact), (_, row) in zip(kb.facts.iterrows(), back.iterrows(), strict=True):
        _same(fact, row)


def test_every_fact_reads_back_identically_with_duckdb(kb, exported):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    back = con.execute(
        f"select * from read_parquet('{exported['parquet'] / 'facts.parquet'}')"
    ).df()
    assert len(back) == len(kb.facts)
    for (_, fact), (_, row) in zip(kb.facts.iterrows(), back.iterrows(), strict=True):
        _same(fact, row)


@pytest.mark.parametrize("fmt", FORMATS)
def test_bit_units_read_back_as_bits_by_pints_default_registry(kb, exported, fmt):
    back = _read_facts(fmt, exported[fmt])
    bits = back[back["canonical_unit"].str.contains("bit")]
    assert len(bits) > 10  # lane rates, port speeds, die densities in specs/
    default = pint.UnitRegistry()
    for u in set(bits["canonical_unit"]):
        # pint's registry: bit is dimensionless but 1 Gbit/s is 1e9 bit/s, not a gilbert
        q = default.Quantity(1, u)
        assert "gilbert" not in str(q.units)
        assert q.to_base_units().magnitude == pytest.approx(
            parse(f"1 {u}").to_base_units().magnitude
        )


def test_json_magnitudes_keep_more_than_ten_digits(tmp_path, good_specs):
    # 1/3 TB/s has 17 significant digits; pandas' to_json would keep 10
    text = (good_specs / "chips.yaml").read_text().replace("4.7 TB/s", "0.3333333333333333 TB/s")
    (good_specs / "chips.yaml").write_text(text)
    write_export(trnkb.load(good_specs), tmp_path / "o", "json")
    rows = json.loads((tmp_path / "o" / "facts.json").read_text())
    got = [r["magnitude"] for r in rows if r["value"].startswith("0.333")]
    assert got == [0.3333333333333333]


@pytest.mark.parametrize("fmt", FORMATS)
def test_frictionless_validates_every_resource_as_a_table(exported, fmt):
    frictionless = pytest.importorskip("frictionless")
    report = frictionless.validate("datapackage.json", basepath=str(exported[fmt]))
    assert report.valid, report.flatten(["resource", "type", "note"])[:5]
    assert {t.name for t in report.tasks} >= {"chips", "racks", "facts", "sources", "conflicts"}
    assert {t.type for t in report.tasks} == {"table"}


def test_frictionless_checks_json_rows(tmp_path, good_specs):
    out = tmp_path / "out"  # export into a directory of its own
    # a number column holding text must fail: proves the rows are read, not just the file
    frictionless = pytest.importorskip("frictionless")
    write_export(trnkb.load(good_specs), out, "json")
    rows = json.loads((out / "chips.json").read_text())
    rows[0]["hbm_bandwidth (TB/s)"] = "fast"
    (out / "chips.json").write_text(json.dumps(rows))
    report = frictionless.validate("datapackage.json", basepath=str(out))
    assert not report.valid
    assert any(e[0] == "type-error" for e in report.flatten(["type"]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_unit_column_is_what_the_source_wrote(tmp_path, good_specs, fmt):
    out = tmp_path / "out"  # export into a directory of its own
    text = (good_specs / "chips.yaml").read_text().replace("4.7 TB/s", "4.7 Tbit/s")
    (good_specs / "chips.yaml").write_text(text)
    write_export(trnkb.load(good_specs), out, fmt)
    back = _read_facts(fmt, out)
    t3 = back[back["id"] == "trainium3"].set_index(["field", "source", "locator"])
    # tests/data/good/chips.yaml (edited above): exactly the text after the number
    assert t3.loc[("hbm_capacity", "semianalysis-trn3", "HBM"), "unit"] == "GB"
    assert t3.loc[("hbm_capacity", "aws-neuron-trn3", "specs table"), "unit"] == "GiB"
    assert t3.loc[("hbm_bandwidth", "aws-neuron-trn3", "architecture page"), "unit"] == "Tbit/s"
    assert t3.loc[("dense_bf16", "aws-neuron-trn3", "specs table"), "unit"] == "TFLOPS"
    assert t3.loc[("dense_bf16", "aws-neuron-trn3", "specs table"), "canonical_unit"] == "TFLOP/s"
    assert t3.loc[("cores", "semianalysis-trn3", "MicroArchitecture"), "unit"] == ""
