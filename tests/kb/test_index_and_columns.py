"""The knowledge base's index (look-ups never scan the facts) and its plain-column view."""

import math

import altair as alt
import pandas as pd
import pytest
import vl_convert

import trnkb
from trnkb.kb import KnowledgeBase, load  # the public import path survives the split


class _NoScan(pd.DataFrame):
    """A facts frame that fails the test if anyone filters it row by row."""

    def __getitem__(self, key):
        if isinstance(key, (pd.Series, list)) or hasattr(key, "dtype"):
            raise AssertionError("look-up scanned the facts table")
        return super().__getitem__(key)


def test_lookups_use_the_index_not_the_facts_table(good_specs):
    kb = load(good_specs)
    kb.facts = _NoScan(kb.facts)  # the index was built at load; look-ups must not touch this
    assert kb.value("trainium3", "hbm_bandwidth") == trnkb.Q_("4.9 TB/s")
    assert kb.get("trainium3", "dense_bf16") == trnkb.Q_("671 TFLOPS")
    assert kb.get("trainium3", "tdp", "absent") == "absent"
    assert kb.provenance("trainium3", "hbm_capacity")["source"] == "semianalysis-trn3"
    assert kb.table_of("trainium3") == "chips"


def test_trnkb_load_is_the_package_loader():
    assert trnkb.load is load and trnkb.KnowledgeBase is KnowledgeBase


def test_unit_column_keeps_what_the_source_wrote(good_specs):
    f = load(good_specs).facts
    cap = f[(f["id"] == "trainium3") & (f["field"] == "hbm_capacity")]
    assert sorted(cap["unit"]) == ["GB", "GiB"]  # tests/data/good/chips.yaml
    assert list(f[(f["id"] == "trainium3") & (f["field"] == "cores")]["unit"]) == [""]


def test_memo_is_per_knowledge_base(good_specs):
    a, b = load(good_specs), load(good_specs)
    a.memo["x"] = 1
    assert "x" not in b.memo


@pytest.fixture(scope="module")
def chips(kb):
    return kb.table("chips", units="columns")


def test_columns_are_plain_floats_named_with_their_unit(chips):
    assert "dense_bf16 (TFLOP/s)" in chips.columns
    assert "hbm_bandwidth (TB/s)" in chips.columns
    assert chips["dense_bf16 (TFLOP/s)"].dtype == "float64"
    # specs/chips.yaml: Trainium3 HBM bandwidth 4.9 TB/s (AWS)
    row = chips.set_index("id").loc["trainium3"]
    assert row["hbm_bandwidth (TB/s)"] == pytest.approx(4.9)


def test_missing_values_are_nan_never_zero(kb):
    plain = kb.table("chips", units="columns").set_index("id")
    checked = 0
    for col in plain.columns:
        if not col.endswith(")"):
            continue
        field = col.split(" (")[0]
        for rid, x in plain[col].items():
            present = kb.get(rid, field) is not None
            assert present != math.isnan(x), (rid, field)
            checked += 1
    assert checked > 100


def test_plain_columns_work_with_pandas_parquet_and_altair(chips, tmp_path):
    col = "dense_bf16 (TFLOP/s)"
    top = chips.nlargest(3, col)
    assert list(top[col]) == sorted(chips[col].dropna(), reverse=True)[:3]
    assert chips.sort_values(col)[col].is_monotonic_increasing or chips[col].isna().any()
    assert chips[col].describe()["count"] == chips[col].notna().sum()
    chips.to_parquet(tmp_path / "chips.parquet")
    back = pd.read_parquet(tmp_path / "chips.parquet")
    pd.testing.assert_series_equal(back[col], chips[col])
    chart = alt.Chart(chips).mark_bar().encode(x="id:N", y=alt.Y(col, type="quantitative"))
    svg = vl_convert.vegalite_to_svg(chart.to_dict())
    # the y axis spans the data: Vega-Lite read the column (a bracketed name reads as 0 to 0)
    n = chips[col].notna().sum()
    assert f"discrete scale with {n} values" in svg
    assert "linear scale with values from 0 to 0" not in svg


def test_unknown_units_option_is_refused(good_specs):
    with pytest.raises(ValueError, match="units="):
        load(good_specs).table("chips", units="rows")


def test_shipped_specs_pass_the_pandera_schemas_too(kb):
    # the second, independent implementation of the per-value rules (trnkb validate runs it)
    from trnkb.kb import check_schemas

    assert check_schemas(kb) == []


def test_pandera_schemas_catch_what_they_check(good_specs):
    # a value the loader would refuse (1e9 TB/s), put straight into a wide table, is caught
    from trnkb.kb import check_schemas

    kb = load(good_specs)
    chips = kb.table("chips")
    chips["hbm_bandwidth"] = pd.Series(pd.array([1e9], dtype="pint[TB/s][Float64]"))
    kb._tables["chips"] = chips
    assert any("hbm_bandwidth" in e for e in check_schemas(kb))


def test_conflict_values_read_back_exactly(good_specs):
    from trnkb.units import parse

    kb = load(good_specs)
    for _, c in kb.conflicts.iterrows():
        for col, src in (("preferred", "preferred_source"), ("other", "other_source")):
            vals = kb.values(c["id"], c["field"])
            same_source = zip(vals["value"], vals["source"], strict=True)
            assert parse(c[col]) in [v for v, s in same_source if s == c[src]]
    assert set(kb.conflicts["preferred"]) >= {"144 GB"}  # tests/data/good/chips.yaml
