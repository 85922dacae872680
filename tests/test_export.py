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
    units = {f["name"]: f.get("unit") for f in chips_res["schema"]["fields"]}
    assert units["hbm_capacity"] == "GB"
    assert chips.loc[0, "hbm_capacity"] == pytest.approx(144.0)
    assert chips.loc[0, "hbm_bandwidth"] == pytest.approx(4.9)


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
