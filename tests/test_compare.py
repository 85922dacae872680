"""Comparison views on a tiny hand-made spec directory (figures are invented test inputs)."""

import math

import pytest

import trnkb
from trnkb import compare

SOURCES = """
- {id: src-a, title: "A", publisher: P, url: "https://example.org/a", date: 2025, kind: vendor}
- {id: src-b, title: "B", publisher: P, url: "https://example.org/b", date: 2025, kind: analyst}
"""
CHIPS = """
- id: chip-x
  name: Chip X
  vendor: V
  status: shipping
  dense_bf16: {value: 1000 TFLOPS, source: src-a, locator: t1, kind: reported}
  hbm_bandwidth: {value: 4 TB/s, source: src-b, locator: t2, kind: reported}
  tdp: {value: 1000 W, source: src-a, locator: t3, kind: reported}
  hbm_capacity: {value: 144 GB, source: src-a, locator: t4, kind: reported}
- id: chip-y
  name: Chip Y
  vendor: V
  status: announced
  dense_bf16: {value: 2.5 PFLOPS, source: src-a, locator: t1, kind: reported}
  hbm_capacity: {value: 288000 MB, source: src-b, locator: t4, kind: reported}
"""


@pytest.fixture
def kb(tmp_path):
    (tmp_path / "sources.yaml").write_text(SOURCES)
    (tmp_path / "chips.yaml").write_text(CHIPS)
    return trnkb.load(tmp_path)


def test_chip_values_are_in_the_schema_unit_with_their_source(kb):
    v = compare.chip_values(kb)
    y = v[(v["id"] == "chip-y")].set_index("field")
    assert y.loc["dense_bf16", "unit"] == "TFLOP/s"
    assert y.loc["dense_bf16", "magnitude"] == pytest.approx(2500)  # 2.5 PFLOPS
    assert y.loc["hbm_capacity", "magnitude"] == pytest.approx(288)  # 288000 MB
    assert y.loc["hbm_capacity", "source"] == "src-b"


def test_ridge_point_is_peak_over_bandwidth(kb):
    # 1000e12 FLOP/s / 4e12 B/s = 250 FLOP/byte
    assert compare.ridge_point(kb, "chip-x").to("FLOP/byte").magnitude == pytest.approx(250)
    assert compare.ridge_point(kb, "chip-y") is None  # no bandwidth in the KB


def test_derived_rows_name_both_sources_and_skip_missing_inputs(kb):
    c = compare.comparison(kb, precisions=["dense_bf16"])
    d = c[c["kind"] == "derived"].set_index(["id", "field"])
    assert d.loc[("chip-x", "flops_per_watt_bf16"), "magnitude"] == pytest.approx(1.0)
    assert d.loc[("chip-x", "ridge_point_bf16"), "source"] == "src-a + src-b"
    assert ("chip-y", "ridge_point_bf16") not in d.index


def test_wide_has_one_row_per_metric_and_one_column_per_chip(kb):
    w = compare.wide(compare.chip_values(kb))
    assert list(w.columns) == ["chip-x", "chip-y"]
    assert w.loc["hbm_capacity (GB)", "chip-y"] == pytest.approx(288)
    assert math.isnan(w.loc["tdp (W)", "chip-y"])
    assert compare.wide(compare.chip_values(kb), "source").loc["tdp (W)", "chip-x"] == "src-a"


def test_standing_ranks_highest_first(kb):
    s = compare.standing(compare.chip_values(kb), "dense_bf16", "chip-x")
    assert (s["rank"], s["count"], s["top"], s["top_value"]) == (2, 2, "chip-y", 2500)
    assert compare.standing(compare.chip_values(kb), "tdp", "chip-y")["rank"] is None


def test_columns_keeps_chips_with_every_field(kb):
    c = compare.columns(compare.chip_values(kb), ["dense_bf16", "hbm_bandwidth"])
    assert c["id"].tolist() == ["chip-x"]
    assert c.loc[0, "source"] == "src-a + src-b"


def test_magnitudes_replaces_pint_columns_by_named_plain_columns(kb):
    m = compare.magnitudes(kb.table("chips"), {"dense_bf16": "PFLOPS"})
    assert m["dense_bf16 (PFLOPS)"].tolist() == pytest.approx([1.0, 2.5])
    assert "hbm_bandwidth (TB/s)" in m.columns


def test_profile_lists_values_with_units_and_rejects_unknown_ids(kb):
    p = compare.profile(kb, "chip-x").set_index("field")
    assert p.loc["hbm_bandwidth", "value"] == "4 TB/s"
    with pytest.raises(KeyError):
        compare.profile(kb, "no-such-chip")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2.52 PFLOPS", "2.52 PFLOP/s"),
        ("9.6 Gbit/s", "9.6 Gbit/s"),
        ("144 GiB", "144 GiB"),
        ("300 FLOP/byte", "300 FLOP/B"),
        ("20000 TFLOPS", "20,000 TFLOP/s"),
        ("0.00123 W", "0.00123 W"),
        ("4.90 TB/s", "4.9 TB/s"),
        ("513.67 FLOP/byte", "513.7 FLOP/B"),
    ],
)
def test_fmt_writes_units_as_analysts_do(text, expected):
    assert compare.fmt(trnkb.Q_(text)) == expected


QUALIFIED = """
- id: chip-q
  name: Chip Q
  vendor: V
  status: announced
  dense_bf16: {value: 1000 TFLOPS, source: src-a, locator: t1, kind: reported}
  hbm_bandwidth: {value: 4 TB/s, source: src-b, locator: t2, kind: reported}
  dense_fp8:
    - {value: 4 PFLOPS, source: src-a, locator: t5, kind: reported, preferred: true,
       note: "test override", density: unstated, qualifier: "dense or sparse not stated"}
    - {value: 1000 TFLOPS, source: src-b, locator: t6, kind: reported, note: "at the BF16 rate"}
"""


def test_views_carry_the_qualifier_and_say_which_figure_they_rank(tmp_path):
    (tmp_path / "sources.yaml").write_text(SOURCES)
    (tmp_path / "chips.yaml").write_text(QUALIFIED)
    kb = trnkb.load(tmp_path)
    view = compare.comparison(kb, ["chip-q"], precisions=["dense_bf16", "dense_fp8"])
    q = dict(zip(view["field"], view["qualifier"], strict=True))
    assert q["dense_fp8"] == "dense or sparse not stated"
    assert q["dense_bf16"] == ""
    assert q["ridge_point_fp8"] == "dense or sparse not stated"  # inherits its input's
    notes = compare.caveats(kb, view)
    assert len(notes) == 1
    note = notes[0]
    assert "Chip Q dense FP8" in note and "4 PFLOP/s from src-a" in note
    assert "dense or sparse not stated" in note
    assert "src-b gives 1,000 TFLOP/s (at the BF16 rate)" in note
    # BF16 has one unqualified figure: nothing to say
    assert compare.caveats(kb, view, ["dense_bf16"]) == []


def test_shipped_views_show_mi455x_ambiguity_and_the_trainium3_fp8_figure_used():
    from pathlib import Path

    import yaml

    kb = trnkb.load()
    rows = yaml.safe_load((Path(__file__).parents[1] / "specs" / "chips.yaml").read_text())
    mi455x = next(r for r in rows if r["id"] == "mi455x")
    view = compare.chip_values(kb, compare.HEADLINE, ["dense_fp8", "dense_fp4"])
    got = view[view["id"] == "mi455x"].set_index("field")["qualifier"]
    for field in ("dense_fp8", "dense_fp4"):
        block = mi455x[field][0] if isinstance(mi455x[field], list) else mi455x[field]
        assert got[field] == block["qualifier"]
    notes = compare.caveats(kb, view)
    trn3 = [n for n in notes if n.startswith("AWS Trainium3 dense FP8")]
    assert len(trn3) == 1
    # the chip table's figure is the one ranked; the architecture guide's is named with it
    assert "2,517 TFLOP/s from aws-neuron-trainium3" in trn3[0]
    assert "neuron-nki-arch-trn3 gives" in trn3[0] and "trnkb conflicts" in trn3[0]
    c = kb.conflicts
    assert ((c["id"] == "trainium3") & (c["field"] == "dense_fp8")).any()
    assert any("MI455X dense FP8" in n and "dense or sparse not stated" in n for n in notes)


def test_profile_writes_the_qualifier_with_the_value(tmp_path):
    (tmp_path / "sources.yaml").write_text(SOURCES)
    (tmp_path / "chips.yaml").write_text(QUALIFIED)
    kb = trnkb.load(tmp_path)
    p = compare.profile(kb, "chip-q").set_index("field")["value"]
    assert p["dense_fp8"] == "4 PFLOP/s (dense or sparse not stated)"
    assert p["dense_bf16"] == "1,000 TFLOP/s"
