"""Round trip YAML -> KB -> Parquet/CSV/JSON -> pandas keeps values, units and sources."""

import json

import pandas as pd
import pytest

import trnkb
from trnkb.output.export import export


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_round_trip_keeps_values_units_and_sources(good_specs, tmp_path, fmt):
    out = tmp_path / "out"  # export into a directory of its own
    kb = trnkb.load(good_specs)
    export(kb, out, fmt)
    read = {"parquet": pd.read_parquet, "csv": pd.read_csv,
            "json": lambda p: pd.read_json(p, orient="records")}[fmt]
    facts = read(out / f"facts.{fmt}")
    bw = facts[(facts["id"] == "trainium3") & (facts["field"] == "hbm_bandwidth")]
    assert sorted(bw["value"]) == ["4.7 TB/s", "4.9 TB/s"]  # as the spec writes them
    assert set(bw["source"]) == {"aws-neuron-trn3"}
    chips = read(out / f"chips.{fmt}")
    descriptor = json.loads((out / "datapackage.json").read_text())
    chips_res = next(r for r in descriptor["resources"] if r["name"] == "chips")
    units = {f.get("field", f["name"]): f.get("unit") for f in chips_res["schema"]["fields"]}
    assert units["hbm_capacity"] == "GB"
    assert chips.loc[0, "hbm_capacity (GB)"] == pytest.approx(144.0)
    assert chips.loc[0, "hbm_bandwidth (TB/s)"] == pytest.approx(4.9)


def test_parquet_reads_in_duckdb_without_trnkb(good_specs, tmp_path):
    out = tmp_path / "out"  # export into a directory of its own
    duckdb = pytest.importorskip("duckdb")
    export(trnkb.load(good_specs), out, "parquet")
    rows = duckdb.sql(
        f"select value, source from '{out / 'facts.parquet'}' "
        "where id = 'trainium3' and field = 'dense_bf16'").fetchall()
    assert rows == [("671 TFLOPS", "aws-neuron-trn3")]


def test_frictionless_accepts_the_datapackage(tmp_path):
    frictionless = pytest.importorskip("frictionless")
    path = export(trnkb.load(), tmp_path / "out", "parquet")
    report = frictionless.validate(str(path.name), basepath=str(path.parent))
    assert report.valid, report.flatten(["type", "note"])[:5]
    assert {t.name for t in report.tasks} >= {"chips", "racks", "facts", "sources"}


def test_units_read_back_from_csv_headers_and_parquet_field_metadata(tmp_path):
    import re

    import pyarrow.parquet as pq

    from trnkb.spec.schema import TABLES
    from trnkb.units import format_unit

    kb = trnkb.load()
    for fmt in ("csv", "parquet"):
        export(kb, tmp_path / fmt, fmt)
    headers = pd.read_csv(tmp_path / "csv" / "chips.csv", nrows=0).columns
    from_csv = dict(m.groups() for h in headers if (m := re.fullmatch(r"(\w+) \((.+)\)", h)))
    schema = pq.read_schema(tmp_path / "parquet" / "chips.parquet")
    from_parquet = {f.metadata[b"field"].decode(): f.metadata[b"unit"].decode()
                    for f in schema if f.metadata and b"unit" in f.metadata}
    # the schema's own units, in trnkb's canonical spelling, for every quantity column
    expected = {f.name: format_unit(f.unit) for f in TABLES["chips"].fields
                if f.kind == "quantity"}
    assert {k: v for k, v in from_csv.items() if k in expected} == expected
    assert {k: v for k, v in from_parquet.items() if k in expected} == expected
    assert from_csv["hbm_bandwidth"] == "TB/s" and from_parquet["tdp"] == "W"


def test_datapackage_carries_version_date_and_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01T00:00:00Z
    monkeypatch.setenv("TRNKB_COMMIT", "0123abcd")
    path = export(trnkb.load(), tmp_path / "out", "json")
    d = json.loads(path.read_text())
    assert d["version"] == trnkb.__version__
    assert d["created"] == "2026-01-01T00:00:00Z"
    assert d["trnkb"]["commit"] == "0123abcd"


def test_no_float_noise_and_qualifiers_beside_the_figure(tmp_path):
    kb = trnkb.load()
    export(kb, tmp_path / "csv", "csv")
    text = (tmp_path / "csv" / "chips.csv").read_text()
    # 96 GiB is exactly 103.079215104 GB; its float is 103.07921510400001
    assert "103.079215104," in text and "103.07921510400001" not in text
    chips = pd.read_csv(tmp_path / "csv" / "chips.csv", keep_default_na=False)
    mi455x = chips[chips["id"] == "mi455x"].iloc[0]
    assert float(mi455x["dense_fp8 (TFLOP/s)"]) == 20000
    assert mi455x["dense_fp8 qualifier"] == kb.provenance("mi455x", "dense_fp8")["qualifier"]
    assert mi455x["dense_fp8 qualifier"]  # AMD does not say dense


def test_export_all_writes_every_format_claims_and_a_zip(tmp_path):
    import zipfile

    from trnkb.output.export import FORMATS, export_all

    kb = trnkb.load()
    seed = "004_406711927e432c17.txt"
    results = export_all(kb, tmp_path / "all", seed_urls={seed: "https://example.org/trn3"})
    z = zipfile.ZipFile(results[-1].descriptor)
    names = set(z.namelist())
    for fmt in FORMATS:
        assert f"{fmt}/datapackage.json" in names and f"{fmt}/claims.{fmt}" in names
    claims = pd.read_csv(tmp_path / "all" / "csv" / "claims.csv")
    row = claims[claims["id"] == "s004-hbm-144gb-from-12-high"].iloc[0]
    inputs = json.loads(row["inputs"])
    assert {i["input"] for i in inputs} >= {"trainium3-hbm.stacks"}
    sources = pd.read_csv(tmp_path / "all" / "csv" / "sources.csv", keep_default_na=False)
    semi = sources[sources["id"] == "semianalysis-trn3"].iloc[0]
    assert semi["url"] == "https://example.org/trn3" and semi["seed_file"] == seed
