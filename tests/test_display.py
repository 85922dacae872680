"""The one table style: headers with units, numbers, percentages, years, missing values,
names, source links, splitting and collapsing. Expected strings are written by hand."""

import math

import pandas as pd

from trnkb.units import Q_
from trnkb.views import display


def test_headers_carry_units_and_analysts_words():
    assert display.header("hbm_bandwidth (TB/s)") == "HBM bandwidth (TB/s)"
    assert display.header("capacity_GB") == "capacity (GB)"
    assert display.header("USD_per_hour") == "cost (USD/hour)"
    assert display.header("chips_per_MW") == "chips per MW"
    assert display.header("relative_difference") == "relative difference (%)"
    assert display.header("generation") == "generation"  # "ratio" inside a word is not a ratio


def test_unit_suffix_is_a_whole_word_not_the_end_of_a_word():
    # notebook 01's rack table showed "host cp (µs/rack)": the "us" of "cpus" read as µs
    assert display.header("host_cpus_per_rack") == "host CPUs per rack"
    assert display.header("nics_per_tray") == "NICs per tray"
    assert display.header("tokens_per_usd") == "tokens per USD"  # was "toke (ns/usd)"
    assert display.header("cost_USD_per_hour") == "cost (USD/hour)"
    assert display.header("W_per_chip") == "power (W/chip)"  # not "cost"


def test_cells_numbers_percent_years_missing():
    assert display.fmt_cell(2517.0) == "2,517"
    assert display.fmt_cell(0.0625, percent=True) == "6.25%"
    assert display.fmt_cell(2025.0, year=True) == "2025"
    assert display.fmt_cell(float("nan")) == display.MISSING
    assert display.fmt_cell(pd.NA) == display.MISSING
    assert display.fmt_cell(None) == display.MISSING
    assert "inf" not in display.fmt_cell(math.inf, percent=True)
    assert display.fmt_cell(Q_(2517, "TFLOPS")) == "2,517 TFLOP/s"
    assert display.fmt_cell("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"


def test_table_has_no_index_no_raw_missing_and_links_sources():
    df = pd.DataFrame(
        {
            "id": ["a", "b"],
            "year": [2025, None],
            "share": [0.5, math.inf],
            "source": ["s1 + s2", None],
        },
        index=[7, 8],
    ).set_index("id")
    h = display.table(df).html
    assert ">7<" not in h and ">NaN<" not in h and "inf" not in h
    assert '<td class="num">2025</td>' in h and "50%" in h
    assert (
        'href="../sources.html#src-s1">s1</a> + <a class="trnkb-source" '
        'href="../sources.html#src-s2"'
        in h
    )


def test_wide_tables_split_and_long_tables_collapse():
    wide = pd.DataFrame({f"c{i}": range(30) for i in range(12)})
    h = display.table(wide, max_columns=5).html
    assert h.count("<table") == 3  # 11 columns after the key, 4 per part
    assert h.startswith('<div class="trnkb-tables"><details') and "30 rows" in h


def test_a_dash_in_a_column_of_numbers_is_aligned_with_them():
    h = display.table(pd.DataFrame({"tdp (W)": [1000.0, None], "status": ["x", None]})).html
    assert h.count(f'<td class="num">{display.MISSING}</td>') == 1  # tdp's, not status's
    assert f"<td>{display.MISSING}</td>" in h


def test_wide_table_parts_have_even_widths():
    # notebook 02: key + 8 chips at 8 columns per part showed 7 chips, then 1 alone
    wide = pd.DataFrame({"field": list("abcde"), **{f"chip{i}": [i] * 5 for i in range(8)}})
    h = display.table(wide).html
    assert h.count("<table") == 2
    parts = h.split("<table")[1:]
    assert [p.split("</thead>")[0].count("<th scope") for p in parts] == [5, 5]  # key + 4 chips


def test_id_column_stays_an_id_when_the_table_has_a_name_column():
    import trnkb

    kb = trnkb.load()
    both = pd.DataFrame({"id": ["b200"], "name": ["NVIDIA B200 (HGX)"]})
    h = display.table(both, kb=kb).html
    assert h.count('<th scope="col">name</th>') == 1  # not two "name" columns
    assert '<th scope="col">id</th>' in h and "<td>b200</td>" in h
    only_id = display.table(pd.DataFrame({"id": ["b200"]}), kb=kb).html
    assert '<th scope="col">name</th>' in only_id and ">NVIDIA B200<" in only_id


def test_short_names_drop_the_parenthetical():
    assert display.short_name("NVIDIA B200 (HGX)") == "NVIDIA B200"
    assert display.short_name("AWS Trainium3") == "AWS Trainium3"


def test_labels_are_names_made_unique_by_id():
    import trnkb

    kb = trnkb.load()
    out = display.labels(
        [
            "trainium3",
            "trn3-nl32x2-switched-pex90144-x8",
            "trn3-nl32x2-switched-pex90144-x4",
            "trainium3",
        ],
        kb,
    )
    assert out[0] == out[3] == "AWS Trainium3"
    assert len(set(out[1:3])) == 2 and out[1].endswith("(trn3-nl32x2-switched-pex90144-x8)")


def test_source_cells_link_only_source_ids():
    # "-" (no source) and "none published" are words, not ids: a link there would dangle
    from trnkb.views.display import source_links

    assert source_links("-", "s.html") == "-"
    assert source_links("none published", "s.html") == "none published"
    dated = source_links("inferencex-app-gpu-specs (2026-04-02)", "s.html")
    assert dated == ('<a class="trnkb-source" href="s.html#src-inferencex-app-gpu-specs">'
                     'inferencex-app-gpu-specs</a> (2026-04-02)')
    assert source_links("a + b", "s.html").count("<a ") == 2
