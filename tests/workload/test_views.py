"""Notebook 10's views: the ranged comparison table, its three-sentence answer, the charts."""

import pytest

from trnkb.views import workload as views


@pytest.fixture(scope="module")
def table(kb):
    return views.perf_per_tco(
        kb,
        systems=("gb300-nvl72", "trn3-nl72x2-switched"),
        models={"dense": "llama-3-1-8b", "moe": "mixtral-8x7b"},
        train_chips=64,
        tokens=1e12,
        serve_chips=8,
        batch=32,
    )


def test_table_holds_every_metric_with_ordered_ranges(table):
    want = {
        "tokens_per_s_per_chip",
        "tokens_per_s_per_rack",
        "tokens_per_s_per_mw",
        "tokens_per_usd",
    }
    for task in ("train", "serve"):
        got = set(table[table["task"] == task]["metric"])
        assert want <= got
    finite = table.dropna(subset=["central"])
    assert (finite["low"] <= finite["central"]).all() and (
        finite["central"] <= finite["high"]
    ).all()


def test_per_rack_is_per_chip_times_the_racks_chips(table, kb):
    t = table[
        (table["task"] == "train") & (table["system"] == "gb300-nvl72") & (table["kind"] == "dense")
    ]
    chip = t[t["metric"] == "tokens_per_s_per_chip"]["central"].item()
    rack = t[t["metric"] == "tokens_per_s_per_rack"]["central"].item()
    assert rack == pytest.approx(chip * kb.value("gb300-nvl72", "chips_per_rack").magnitude)


def test_headline_is_three_computed_sentences(table):
    sentences = views.headline(table)
    assert len(sentences) == 3
    fastest = table[
        (table["task"] == "train") & (table["kind"] == "dense") & (table["metric"] == "days")
    ]
    sid = fastest.sort_values("central")["system"].iloc[0]
    rack_name = {"gb300-nvl72": "NVIDIA GB300 NVL72",  # specs/racks.yaml name column
                 "trn3-nl72x2-switched": "Trainium3 NL72x2 Switched"}[sid]
    assert rack_name in sentences[0] and sid not in sentences[0]
    assert "on 1 trillion tokens" in sentences[0] and "e+" not in " ".join(sentences)


def test_count_in_words_for_sentences():
    assert views.count_in_words(15e12) == "15 trillion"
    assert views.count_in_words(1.5e9) == "1.5 billion"
    assert views.count_in_words(4096) == "4,096"
    assert views.count_in_words(123_456_789.0) == "123,456,789"


def test_settings_table_has_units_not_a_dict(table):
    got = views.settings(table)
    assert list(got.columns) == ["setting", "value", "unit"]
    rows = {r.setting: (r.value, r.unit) for r in got.itertuples()}
    assert rows["training: token budget"] == ("1 trillion", "tokens")
    assert rows["training: chips"] == ("64", "chips")
    assert rows["serving: prompt length"] == ("2,048", "tokens per sequence")


def test_charts_and_summary_label_systems_by_rack_name(table):
    spec = views.range_chart(table, "serve", "tpot_ms", title="t", value_title="ms").to_dict()
    shown = {r["system"] for r in next(iter(spec["datasets"].values()))}
    assert shown == {"NVIDIA GB300 NVL72", "Trainium3 NL72x2 Switched"}
    assert "NVIDIA GB300 NVL72" in views.summary(table, "train").index.get_level_values(0)


def test_range_chart_draws_bars_and_dots(table):
    spec = views.range_chart(table, "serve", "tpot_ms", title="t", value_title="ms").to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rule", "point"]


def test_notes_table_names_systems(table):
    got = views.notes(table)
    assert list(got.columns) == ["system", "note"]
    assert set(got["system"]) <= {"NVIDIA GB300 NVL72", "Trainium3 NL72x2 Switched"}
    assert "scale-up: analytic non-blocking switch (no fabric row in the KB)" in \
        set(got[got["system"] == "NVIDIA GB300 NVL72"]["note"])
