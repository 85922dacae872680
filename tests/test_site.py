"""The static site: generated pages, escaping, and no network resources."""

from pathlib import Path

import pytest
from sitebuild import built_site

from trnkb import site
from trnkb.schema import TABLES


@pytest.fixture(scope="module")
def out() -> Path:
    return built_site()


def test_landing_page_links_every_page(out):
    index = (out / "index.html").read_text()
    for page in ("data-dictionary", "sources", "conflicts", "claims", "api", "spec-format",
                 "reading-results", "notebooks/01-trainium3-at-a-glance"):
        assert f'href="{page}.html"' in index, page


def test_data_dictionary_lists_every_table_and_field(out):
    text = (out / "data-dictionary.html").read_text()
    for table in TABLES.values():
        assert f'id="{table.name}"' in text
        for field in table.fields:
            assert f"<td><p>{field.name}</p></td>" in text, field.name


def test_spec_strings_show_as_text(out):
    for page in ("sources.html", "conflicts.html"):
        text = (out / page).read_text()
        assert "&lt;script&gt;alert(" in text, page
    for p in out.rglob("*.html"):
        text = p.read_text()
        assert "<script>alert(" not in text and "<b>bold</b>" not in text, p


def test_built_site_loads_nothing_from_the_network(out):
    assert site.external_resources(out) == []


def test_external_resources_finds_cdn_scripts_and_css_urls(tmp_path):
    (tmp_path / "a.html").write_text(
        '<script src="https://cdn.jsdelivr.net/npm/vega@6"></script>'
        '<link rel="next" href="https://example.org/next">'
        '<a href="https://example.org">fine</a>')
    (tmp_path / "s.css").write_text("@font-face{src:url(//fonts.gstatic.com/x.woff2)}")
    assert site.external_resources(tmp_path) == [
        "a.html: https://cdn.jsdelivr.net/npm/vega@6", "s.css: //fonts.gstatic.com/x.woff2"]
