"""Chart builders no other test called (issue 15 §1): encodings, axis titles with units,
sources in the caption, one colour per vendor, and marks that actually render."""

import re

import pandas as pd
import pytest
import vl_convert as vlc

from trnkb.views import charts, palette


def spec(chart) -> dict:
    d = chart.to_dict()
    d.pop("datasets", None)
    return d


def layers(d: dict) -> list[dict]:
    return d.get("layer", [d])


def data_of(chart) -> list[dict]:
    (rows,) = chart.to_dict()["datasets"].values()
    return rows


def test_vendor_color_gives_each_vendor_its_one_colour():
    enc = palette.vendor_color(["NVIDIA", "AWS", "NVIDIA", "Acme"], title="vendor").to_dict()
    dom, rng = enc["scale"]["domain"], enc["scale"]["range"]
    # mapped vendors first in the fixed order of VENDOR_COLORS, unknown ones after, in grey
    assert dom == ["AWS", "NVIDIA", "Acme"]
    assert rng == [palette.VENDOR_COLORS["AWS"], palette.VENDOR_COLORS["NVIDIA"], "#888888"]
    assert len(set(palette.VENDOR_COLORS.values())) == len(palette.VENDOR_COLORS)  # no two alike
    # the same vendor keeps its colour whatever else is on the chart
    other = palette.vendor_color(["AMD", "AWS"]).to_dict()["scale"]
    assert dict(zip(other["domain"], other["range"], strict=True))["AWS"] == rng[0]


def test_scatter_encodes_axes_labels_vendor_colour_and_sources():
    df = pd.DataFrame({"chip": ["trn3", "b200", "twin"], "bw": [4.9, 8.0, 8.0],
                       "fl": [671.0, 2250.0, 2250.0], "vendor": ["AWS", "NVIDIA", "NVIDIA"]})
    c = charts.scatter(df, "bw", "fl", "chip", x_title="HBM bandwidth (TB/s)",
                       y_title="dense BF16 (TFLOP/s)", title="T", sources=["b", "a"],
                       color="vendor")
    d = spec(c)
    points, text = layers(d)
    x = points["encoding"]["x"]
    assert (x["field"], x["title"], x["type"]) == ("bw", "HBM bandwidth (TB/s)", "quantitative")
    assert x["scale"].get("zero") is False or x["scale"]["domain"][0] > 0  # not from zero
    assert points["encoding"]["y"]["title"] == "dense BF16 (TFLOP/s)"
    assert points["encoding"]["color"]["scale"]["range"] == [palette.VENDOR_COLORS["AWS"],
                                                             palette.VENDOR_COLORS["NVIDIA"]]
    assert text["encoding"]["text"]["field"] == "chip"
    assert d["title"]["text"] == "T" and d["title"]["subtitle"] == ["Sources: a; b"]
    # two rows at the same point share one dot labelled with both names
    datasets = c.to_dict()["datasets"]
    name = text.get("data", d.get("data", {})).get("name")
    labels = sorted(r["chip"] for r in datasets[name])
    assert labels == ["b200, twin", "trn3"]


def test_lines_draw_one_line_per_series_in_order():
    df = pd.DataFrame({"chip": ["a", "a", "b", "b"], "x": [1.0, 10.0, 1.0, 10.0],
                       "y": [2.0, 20.0, 3.0, 30.0], "k": [1, 0, 0, 1]})
    d = spec(charts.lines(df, "x", "y", "chip", x_title="intensity (FLOP/B)",
                          y_title="attainable (TFLOP/s)", title="R", sources=["s"], log_x=True,
                          order="k"))
    enc = d["encoding"]
    assert d["mark"]["type"] == "line"
    assert enc["color"]["field"] == "chip" and enc["order"]["field"] == "k"
    assert enc["x"]["scale"] == {"type": "log"} and "scale" not in enc["y"]
    assert enc["x"]["title"] == "intensity (FLOP/B)"
    single = spec(charts.lines(df, "x", "y", None, x_title="a", y_title="b", title="t",
                               sources=[]))
    assert "color" not in single["encoding"]
    assert single["title"]["subtitle"] == ["Sources: none"]


def test_timeline_bars_run_from_start_to_end_per_engine():
    df = pd.DataFrame({"engine": ["tensor", "vector", "tensor"], "t0": [0.0, 1.0, 2.0],
                       "t1": [1.0, 3.0, 4.0]})
    c = charts.timeline(df, "engine", "t0", "t1", time_title="time (us)", title="G",
                        sources=["neuron"])
    d = spec(c)
    assert d["mark"]["type"] == "bar"
    assert d["encoding"]["x"]["field"] == "t0" and d["encoding"]["x2"]["field"] == "t1"
    assert d["encoding"]["x"]["title"] == "time (us)"
    svg = vlc.vegalite_to_svg(c.to_json())
    assert len(re.findall(r'aria-roledescription="bar"', svg)) == 3
    assert "Sources: neuron" in svg


LONG = pd.DataFrame({
    "id": ["trainium3", "b200", "trainium3", "b200"],
    "name": ["Trainium3", "B200", "Trainium3", "B200"],
    "vendor": ["AWS", "NVIDIA", "AWS", "NVIDIA"],
    "field": ["dense_bf16", "dense_bf16", "dense_fp8", "dense_fp8"],
    "unit": ["TFLOP/s"] * 4,
    "magnitude": [671.0, 2250.0, 2517.0, 4500.0],
    "source": ["aws-neuron-trainium3", "nvidia-b200", "aws-neuron-trainium3", "nvidia-b200"],
})


def test_metric_of_one_field_is_vendor_coloured_bars_with_the_unit_in_the_axis():
    c = charts.metric(LONG, "dense_bf16", title="BF16", label="dense BF16")
    d = spec(c)
    enc = layers(d)[0]["encoding"]
    assert enc["x"]["title"] == "dense BF16 (TFLOP/s)"
    assert enc["color"]["scale"]["domain"] == ["AWS", "NVIDIA"]
    assert d["title"]["subtitle"] == ["Sources: aws-neuron-trainium3; nvidia-b200"]
    assert sorted(r["magnitude"] for r in data_of(c)) == [671.0, 2250.0]


def test_metric_of_two_fields_groups_and_refuses_mixed_units():
    d = spec(charts.metric(LONG, ["dense_bf16", "dense_fp8"], title="t"))
    assert "(TFLOP/s)" in str(d)
    mixed = LONG.assign(unit=["TFLOP/s", "TFLOP/s", "PFLOP/s", "PFLOP/s"])
    with pytest.raises(ValueError, match="different units"):
        charts.metric(mixed, ["dense_bf16", "dense_fp8"], title="t")
    with pytest.raises(ValueError, match="no values"):
        charts.metric(LONG, "tdp", title="t")


def test_graph_colours_links_by_medium_and_labels_racks():
    nodes = pd.DataFrame({"name": ["a", "b", "c", "d"], "kind": ["chip", "chip", "chip", "switch"],
                          "rack": ["A", "A", "B", "B"], "x": [0.0, 1.0, 10.0, 11.0],
                          "y": [0.0, 0.0, 0.0, 1.0]})
    edges = pd.DataFrame({"x": [0.0, 1.0], "y": [0.0, 0.0], "x2": [1.0, 10.0], "y2": [0.0, 0.0],
                          "medium": ["pcb", "aec"]})
    c = charts.graph(nodes, edges, title="fabric", sources=["seed-004"])
    d = spec(c)
    rules, points, labels = layers(d)
    scale = rules["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"], strict=True)) == {
        "aec": palette.MEDIUM_COLORS["aec"], "pcb": palette.MEDIUM_COLORS["pcb"]}
    assert rules["encoding"]["x"]["axis"] is None  # a layout, not a measurement
    assert points["encoding"]["shape"]["field"] == "kind"
    assert labels["encoding"]["text"]["field"] == "label"
    svg = vlc.vegalite_to_svg(c.to_json())
    assert "rack A" in svg and "rack B" in svg and "Sources: seed-004" in svg


def test_strip_draws_one_tick_per_value():
    df = pd.DataFrame({"format": ["fp4"] * 3 + ["fp8"] * 2, "v": [0.5, 1.0, 6.0, 0.5, 448.0]})
    c = charts.strip(df, "format", "v", value_title="value", title="codes", sources=[],
                     note="computed from the format definitions", log=True)
    d = spec(c)
    assert d["mark"]["type"] == "tick" and d["encoding"]["x"]["scale"] == {"type": "log"}
    assert d["title"]["subtitle"] == ["computed from the format definitions"]
    svg = vlc.vegalite_to_svg(c.to_json())
    assert len(re.findall(r'aria-roledescription="tick"', svg)) == 5
