"""Spec text written into Markdown stays text."""

import pandas as pd
from markdown_it import MarkdownIt

from trnkb.views import markdown as md

render = MarkdownIt("commonmark").enable("table").render


def test_script_tags_render_as_text():
    html = render(md.escape("<script>alert(1)</script>"))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_markup_characters_render_literally():
    for text in ["*bold* _it_ `code`", "[x](http://e.org)", "# title", "- item", "1. item",
                 "&amp; $x$ ~y~", "a\\b"]:
        html = render(md.escape(text))
        assert html == f"<p>{text.replace('&', '&amp;')}</p>\n", text


def test_pipes_in_cells_stay_in_their_cell():
    html = render(md.table(pd.DataFrame({"a": ["x|y"], "b": ["<b>z</b>"]})))
    assert "<td>x|y</td>" in html and "<td>&lt;b&gt;z&lt;/b&gt;</td>" in html


def test_links_only_for_plain_http_urls():
    assert md.link("T", "https://example.org/a") == "[T](<https://example.org/a>)"
    assert md.link("T", "javascript:alert(1)") == "T"
    assert md.link("T", "004_406711927e432c17.txt") == "T"
