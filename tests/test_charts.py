"""Chart builders: refuse inputs that would draw nothing, draw marks for good input."""

import pandas as pd
import pytest
import vl_convert as vlc

import trnkb
from trnkb import charts


def test_caption_splits_derived_sources_and_sorts():
    assert charts.caption(["b", "a + c", "a"]) == ["Sources: a; b; c"]


def test_bars_render_to_svg_with_one_bar_per_row():
    df = pd.DataFrame({"chip": ["A", "B", "C"], "bw": [1.0, 2.0, 3.0]})
    chart = charts.bars(df, "chip", "bw", value_title="HBM bandwidth (TB/s)", title="t",
                        sources=["s"])
    svg = vlc.vegalite_to_svg(chart.to_json())
    rect_marks = svg.split('class="mark-rect role-mark')[1].split("</g>")[0]
    assert rect_marks.count("<path") == 3
    assert "HBM bandwidth (TB/s)" in svg and "Sources: s" in svg


def test_pint_columns_are_refused():
    df = pd.DataFrame({"chip": ["A"], "bw": pd.Series([1.0], dtype="pint[TB/s]")})
    with pytest.raises(TypeError, match="magnitudes"):
        charts.bars(df, "chip", "bw", value_title="x", title="t", sources=[])
    assert trnkb.ureg  # registry in use is the project's


def test_dotted_column_names_are_refused():
    df = pd.DataFrame({"chip": ["A"], "bw [TB/s]": [1.0]})
    with pytest.raises(ValueError, match="nested"):
        charts.bars(df, "chip", "bw [TB/s]", value_title="x", title="t", sources=[])
