"""The static site: generated pages, escaping, links, no raw missing values, no network."""

import html
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from sitebuild import built_site

from trnkb import site
from trnkb.spec.schema import TABLES


@pytest.fixture(scope="module")
def out() -> Path:
    return built_site()


def test_landing_page_links_every_page(out):
    index = (out / "index.html").read_text()
    for page in ("data-dictionary", "sources", "conflicts", "claims", "api", "spec-format",
                 "reading-results", "explorer", "downloads", "notebooks/01-trainium3-at-a-glance"):
        assert f'href="{page}.html"' in index, page


def test_data_dictionary_lists_every_table_and_field(out):
    text = (out / "data-dictionary.html").read_text()
    for table in TABLES.values():
        assert f'id="{table.name}"' in text
        for field in table.fields:
            assert f"<td>{html.escape(field.name)}</td>" in text, field.name


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


def test_no_page_shows_a_raw_missing_value(out):
    # the issue's own check: grep -c -E ">(NaN|<NA>|None)<" build/site/**/*.html
    bad = {str(p.relative_to(out)): len(re.findall(r">(NaN|<NA>|&lt;NA&gt;|None)<", p.read_text()))
           for p in out.rglob("*.html")}
    assert {p: n for p, n in bad.items() if n and p != "api.html"} == {}


_HREF = re.compile(r'\bhref="([^"]+)"')
_ID = re.compile(r'\bid="([^"]+)"')


def test_every_local_link_and_anchor_resolves(out):
    ids: dict[Path, set[str]] = {}
    broken = []
    for page in sorted(out.rglob("*.html")):
        if "_static" in page.parts:
            continue
        for href in _HREF.findall(page.read_text()):
            href = html.unescape(href)
            parts = urlsplit(href)
            if parts.scheme or href.startswith(("//", "mailto:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(out)}: {href}")
            elif parts.fragment and target.suffix == ".html" and "explorer" not in target.name:
                if target not in ids:
                    ids[target] = set(_ID.findall(target.read_text()))
                if unquote(parts.fragment) not in ids[target]:
                    broken.append(f"{page.relative_to(out)}: {href} (no such anchor)")
    assert broken == []


def test_every_source_has_an_anchor_and_a_full_url(out):
    text = (out / "sources.html").read_text()
    for sid in site_kb_source_ids():
        assert f'id="src-{sid}"' in text, sid
    shown = re.findall(r'<a href="(https?://[^"]+)">([^<]+)</a>', text)
    assert shown and all(html.unescape(t) == html.unescape(u) for u, t in shown)
    assert "https://newsletter.semianalysis.com/p/aws-trainium3-deep-dive-a-potential" in text


def site_kb_source_ids() -> list[str]:
    from trnkb.kb import load
    from trnkb.site.pages import all_sources
    return list(all_sources(load())["id"])


def test_every_chart_image_is_shown_at_its_drawn_size_in_a_scrolling_box(out):
    # a chart shrunk to a phone's width has unreadable labels; the box scrolls instead
    charts = unwrapped = 0
    for page in out.rglob("*.html"):
        text = page.read_text()
        for m in re.finditer(r'<img alt="Chart:[^"]*" src="[^"]+\.svg" />', text):
            charts += 1
            unwrapped += not text[: m.start()].endswith('<span class="trnkb-chart">')
    assert charts >= 10 and unwrapped == 0
    css = (out / "_static" / "trnkb.css").read_text()
    assert ".trnkb-chart { display: block; max-width: 100%; overflow-x: auto; }" in css


def test_source_ids_named_in_a_notebooks_prose_link_to_the_sources_page(out):
    text = (out / "notebooks" / "02-chips-compared.html").read_text()
    para = text[text.index("What the FP8 ranking rests on"):]
    para = para[: para.index("</p>")]
    assert 'href="../sources.html#src-aws-neuron-trainium3"' in para


def test_api_page_has_no_link_to_a_made_up_url_scheme(out):
    # a docstring's bare file:line became <a href="file:line">, a link that goes nowhere
    text = (out / "api.html").read_text()
    assert 'href="file:line"' not in text
    assert "file:line" in text  # the text itself stays


def test_api_page_shows_an_entry_for_each_public_name_and_nothing_else(out):
    from test_public_api import public_names

    text = (out / "api.html").read_text()
    ids = {i for i in _ID.findall(text) if i.startswith("trnkb.")}
    public = public_names()
    assert public <= ids
    # members of a public class (methods, attributes) are shown under it; nothing else
    assert {i for i in ids if not any(i == p or i.startswith(p + ".") for p in public)} == set()
