"""Chart builders: refuse inputs that would draw nothing, draw marks for good input."""

import re

import pandas as pd
import pytest
import vl_convert as vlc

import trnkb.units.frames  # registers the pint[...] dtypes with the project's registry
from trnkb.views import charts, palette


def test_caption_splits_derived_sources_and_sorts():
    assert charts.caption(["b", "a + c", "a"]) == ["Sources: a; b; c"]


def test_long_captions_wrap():
    lines = charts.caption([f"source-{i:02d}" for i in range(20)], width=40)
    assert len(lines) > 1 and all(len(x) <= 40 for x in lines)
    assert " ".join(lines).count("source-") == 20


def test_bars_render_to_svg_with_one_bar_per_row():
    df = pd.DataFrame({"chip": ["A", "B", "C"], "bw": [1.0, 2.0, 3.0]})
    chart = charts.bars(
        df, "chip", "bw", value_title="HBM bandwidth (TB/s)", title="t", sources=["s"]
    )
    svg = vlc.vegalite_to_svg(chart.to_json())
    rect_marks = svg.split('class="mark-rect role-mark')[1].split("</g>")[0]
    assert rect_marks.count("<path") == 3
    assert "HBM bandwidth (TB/s)" in svg and "Sources: s" in svg


def test_pint_columns_are_refused():
    df = pd.DataFrame({"chip": ["A"], "bw": pd.Series([1.0], dtype="pint[TB/s]")})
    # the column really is a pint column of the project's registry (bytes carry
    # [information]; in pint's default registry they are dimensionless)
    assert str(df["bw"].pint.units.dimensionality) == "[information] / [time]"
    assert trnkb.units.ureg.Quantity(1.0, "TB/s") == df["bw"].pint.quantity[0]
    with pytest.raises(TypeError, match="'bw' holds pint quantities; pass magnitudes"):
        charts.bars(df, "chip", "bw", value_title="x", title="t", sources=[])


def test_dotted_column_names_are_refused():
    df = pd.DataFrame({"chip": ["A"], "bw [TB/s]": [1.0]})
    with pytest.raises(ValueError, match="nested"):
        charts.bars(df, "chip", "bw [TB/s]", value_title="x", title="t", sources=[])


def test_log_scaled_grouped_bars_draw_every_bar_with_length():
    df = pd.DataFrame(
        {
            "chip": ["A", "A", "B"],
            "precision": ["bf16", "fp8", "bf16"],
            "flops": [10.0, 1000.0, 100.0],
        }
    )
    chart = charts.grouped_bars(
        df,
        "chip",
        "flops",
        "precision",
        value_title="x (TFLOPS)",
        title="t",
        sources=["s"],
        log=True,
    )
    svg = vlc.vegalite_to_svg(chart.to_json())
    bars = re.findall(r'aria-roledescription="bar" d="M[^h]*h([-0-9.]+)', svg)
    assert len(bars) == 3 and all(abs(float(w)) > 0 for w in bars)


def test_roofs_turn_at_the_ridge_point():
    # 1000 TFLOP/s over 4 TB/s: the roof turns at 250 FLOP/byte (hand arithmetic)
    peaks = pd.DataFrame({"chip": ["x"], "peak": [1000.0], "bw": [4.0]})
    r = charts.roofs(peaks, "chip", "peak", "bw", 10, 1000)
    assert list(r["intensity"]) == [10, 250, 1000]
    assert list(r["attainable"]) == [40, 1000, 1000]


def test_roofline_draws_roofs_and_points():
    pts = pd.DataFrame({"i": [50.0, 500.0], "a": [150.0, 900.0], "chip": ["x", "x"]})
    peaks = pd.DataFrame({"chip": ["x"], "peak": [1000.0], "bw": [4.0]})
    spec = charts.roofline(
        pts,
        peaks,
        "i",
        "a",
        "chip",
        peak="peak",
        bandwidth="bw",
        x_title="I",
        y_title="A",
        title="t",
        sources=["s"],
    ).to_dict()
    marks = [
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in spec["layer"]
    ]
    assert marks == ["line", "line"]


def test_labels_of_crowded_points_do_not_overlap():
    # five points within a few pixels of each other: every label box must be clear
    df = pd.DataFrame(
        {
            "x": [8.0, 8.05, 7.3, 8.0, 2.9, 23.3],
            "y": [5000.0, 4500, 4614, 4550, 1299, 20000],
            "name": [
                "NVIDIA GB200",
                "NVIDIA B200",
                "Google TPU7x",
                "AMD Instinct MI355X",
                "AWS Trainium2",
                "AMD Instinct MI455X",
            ],
        }
    )
    spots = charts.place_labels(df, "x", "y", "name")
    (x0, x1), (y0, y1) = spots.attrs["domains"]
    boxes = []
    for i, r in spots.iterrows():
        px = (r["label_x"] - x0) / (x1 - x0) * charts.WIDTH
        py = (1 - (r["label_y"] - y0) / (y1 - y0)) * charts.HEIGHT
        w = charts._CHAR_PX * len(df.at[i, "name"])
        left = px if r["align"] == "left" else px - w
        boxes.append((left, py - 10, left + w, py))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)


def test_verdicts_are_green_red_and_grey_whatever_their_order():
    # notebook 11 drew "supported" in red and "contradicted" in blue (Vega's palette)
    df = pd.DataFrame({"tool": ["x", "x", "x"], "n": [3.0, 2.0, 1.0],
                       "verdict": ["contradicted", "unverifiable", "supported"]})
    chart = charts.grouped_bars(df, "tool", "n", "verdict", value_title="Constants (count)",
                                title="t", sources=["s"],
                                groups=["contradicted", "unverifiable", "supported"])
    svg = vlc.vegalite_to_svg(chart.to_json())
    spec = chart.to_dict()["encoding"]["color"]["scale"]
    assert dict(zip(spec["domain"], spec["range"], strict=True)) == {
        "contradicted": "#c62828", "unverifiable": "#9e9e9e", "supported": "#2e7d32"}
    assert "#2e7d32" in svg and "#c62828" in svg
    other = charts.grouped_bars(df.assign(verdict=["a", "b", "c"]), "tool", "n", "verdict",
                                value_title="v", title="t", sources=["s"])
    assert "scale" not in other.to_dict()["encoding"]["color"]  # other groups: Vega's palette


def test_a_missing_colour_group_is_named_not_null():
    # notebook 03's HBM chart had a legend entry "null" for chips whose HBM generation
    # no source gives
    df = pd.DataFrame({"chip": ["A", "B"], "gb": [1.0, 2.0], "generation": ["HBM3E", None]})
    chart = charts.bars(df, "chip", "gb", value_title="HBM capacity (GB)", title="t",
                        sources=["s"], color="generation")
    svg = vlc.vegalite_to_svg(chart.to_json())
    assert ">null<" not in svg and f">{palette.NOT_STATED}<" in svg
    assert df["generation"].isna().sum() == 1  # the caller's frame is left as it was


def test_long_category_labels_are_not_cut_to_the_same_text():
    # notebook 04: two fabrics differing only at the end of their names read the same
    a = "Trainium3 NL72x2 Switched, Gen1 backup switch trays (trn3-nl72x2-switched-pex90144-x4)"
    df = pd.DataFrame({"fabric": [a, a.replace("x4)", "x8)")], "n": [1.0, 2.0],
                       "hops": ["1", "2"]})
    for chart in (charts.bars(df, "fabric", "n", value_title="v", title="t", sources=["s"]),
                  charts.grouped_bars(df, "fabric", "n", "hops", value_title="v", title="t",
                                      sources=["s"])):
        svg = vlc.vegalite_to_svg(chart.to_json())
        labels = re.findall(r">(Trainium3 NL72x2[^<]*)<", svg)
        assert len(set(labels)) == 2, labels
    assert ">hops<" in svg  # the grouped chart's legend says what its colours are


def test_a_chart_of_several_fields_names_them_as_analysts_write_them():
    # notebook 02's legend read dense_bf16, dense_fp8 under the title "field"
    long = pd.DataFrame({"id": ["a", "a"], "field": ["dense_bf16", "dense_mxfp8"],
                         "unit": ["TFLOP/s", "TFLOP/s"], "magnitude": [1.0, 2.0],
                         "source": ["s", "s"]})
    svg = vlc.vegalite_to_svg(charts.metric(long, ["dense_bf16", "dense_mxfp8"],
                                            title="t", label="Dense peak").to_json())
    assert ">dense BF16<" in svg and ">dense MXFP8<" in svg and ">dense_bf16<" not in svg


def test_the_longest_bar_label_stays_clear_of_the_legend():
    # notebook 02: "1,200" (Trainium3 scale-up bandwidth) was drawn under the legend
    df = pd.DataFrame({"chip": ["A", "B", "C"], "bw": [1200.0, 900.0, 600.0],
                       "vendor": ["AWS", "NVIDIA", "Google"]})
    svg = vlc.vegalite_to_svg(charts.bars(df, "chip", "bw", value_title="v (GB/s)", title="t",
                                          sources=["s"], color="vendor").to_json())
    label_x = float(re.search(r'translate\(([0-9.]+),[0-9.]+\)"[^>]*>1,200<', svg).group(1))
    legend_x = float(re.search(r'role-legend".*?translate\(([0-9.]+),', svg, re.S).group(1))
    assert label_x + 5 * 6 < legend_x  # five characters of about 6 px
