"""Notebook 10's views: the ranged comparison table, its three-sentence answer, the charts."""

import pytest

from trnkb.workload import views


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
    assert fastest.sort_values("central")["system"].iloc[0] in sentences[0]


def test_range_chart_draws_bars_and_dots(table):
    spec = views.range_chart(table, "serve", "tpot_ms", title="t", value_title="ms").to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rule", "point"]
