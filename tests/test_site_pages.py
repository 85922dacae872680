"""Generated pages read as an analyst writes numbers. Expected strings are written by hand."""

import re

from trnkb.kb import load
from trnkb.site.pages import claims_page, conflicts_page, data_dictionary, readable


def test_claim_values_lose_the_exponent_and_gain_separators_but_no_digits():
    # the claims page showed "8.58993e+11 B/s" and "11132.6 GB"
    assert readable("8.58993e+11 B/s") == "858.993 GB/s"
    assert readable("4.59e+14 FLOP/s") == "459 TFLOP/s"
    assert readable("11132.6 GB") == "11,132.6 GB"
    assert readable("3119.93 GiB/s") == "3,119.93 GiB/s"  # a binary unit is kept
    assert readable("1.93764") == "1.93764"
    assert readable("0 1/s to 10031.3 1/s") == "0 1/s to 10,031.3 1/s"
    assert readable('"TSMC N3P"') == '"TSMC N3P"'


def test_claims_page_says_what_each_comparison_asks_in_words():
    text = claims_page(load())
    # no claimed or computed cell in exponent form (statements may quote a tool verbatim)
    assert not re.search(r"<td>-?[0-9.]+e[+-][0-9]+( [^<]*)?</td>", text)
    for symbol in ("(==)", "(~)", "(<)", "(>)"):
        assert symbol not in text, symbol
    assert "must be equal" in text and "must agree within" in text


def test_conflicting_values_are_written_with_separators():
    # the conflicts page showed "2517 TFLOP/s" and "1899.9560928 TB"
    text = conflicts_page(load())
    cells = re.findall(r"<td>(-?[0-9][0-9.]*) ([^<]+)</td>", text)
    assert cells
    long = [f"{n} {u}" for n, u in cells if re.match(r"^[0-9]{4,}", n)]
    assert long == [], long[:5]  # 4+ integer digits always carry a thousands separator


def test_data_dictionary_ranges_have_no_exponent_and_years_stay_years():
    # the dictionary showed "0.1 to 1e+06 MiB" and would show "2,010" for a year
    text = data_dictionary()
    assert not re.search(r"\de[+-]\d", text)
    assert "<td>0.1 to 1,000,000 MiB</td>" in text  # schema: sram, 0.1 to 1e6 MiB
    assert "<td>2010 to 2035</td>" in text  # schema: year, 2010 to 2035


def test_source_ids_in_running_text_are_linked_but_not_inside_links_or_code():
    # notebook 02's "What the FP8 ranking rests on" named aws-neuron-trainium3 as plain text
    from collections import Counter

    from trnkb.site.htmltree import Page
    from trnkb.site.post import _prose

    ids = {"aws-neuron-trainium3": "aws-neuron-trainium3", "klockwood-b200": "klockwood-b200"}
    page = Page('<title>aws-neuron-trainium3</title><article><p>2,517 TFLOP/s from '
                'aws-neuron-trainium3 (Compute); <a href="x">klockwood-b200</a>, '
                '<code>klockwood-b200</code>, <!-- klockwood-b200 --> klockwood-b200x.</p>'
                '</article>')
    _prose(page, ids, "../", Counter())
    out = page.result()
    assert out.count('href="../sources.html#src-aws-neuron-trainium3"') == 1
    assert "<title>aws-neuron-trainium3</title>" in out  # outside the article: untouched
    assert 'src-klockwood-b200"' not in out  # in a link, in code, or part of a longer word


def test_finishing_passes_rewrite_only_what_they_name_and_keep_every_other_byte():
    # expected markup written by hand from the passes' rules (trnkb.site.post docstring)
    from collections import Counter
    from pathlib import Path

    from trnkb.site.post import _page
    from trnkb.views.display import MISSING

    ids = {"s1": "s1", "004_x.txt": "seed-x"}
    cell = '<td class="x">NaN</td><td> None </td><td>s1 + 004_x.txt</td><td>s1 and more</td>'
    code = ('<pre><span class="n">x</span><span class="o">=</span><span class="kc">None</span>'
            '\n<span class="k">return</span> <span class="kc">None</span></pre>')
    lit = '<code class="docutils literal notranslate"><span class="pre">s1;</span></code>'
    sig = ('<span class="o"><span class="pre">=</span></span><span class="default_value">'
           '<span class="pre">None</span></span> <span class="pre">|</span> '
           '<span class="pre">None</span> <em>int | </em><em>None</em> '
           '<a href="#id3"><span class="problematic" id="id3">`x</span></a> '
           '<a class="reference external" href="file:line">file:line</a> '
           '<a class="reference external" href="https://x.org">x</a>')
    page = f"<html><body><article><table><tr>{cell}</tr></table>{code}<p>{lit}</p>{sig}"
    page += "</article></body></html>"
    stats: Counter[str] = Counter()
    out = _page(page, Path("/site/nb/p.html"), Path("/site"), ids, stats)
    link = '<a class="trnkb-source" href="../sources.html#src-{}">{}</a>'
    assert (f'<td class="x">{MISSING}</td><td>{MISSING}</td><td>{link.format("s1", "s1")} + '
            f'{link.format("seed-x", "004_x.txt")}</td><td>s1 and more</td>') in out
    assert ('<span class="o">=None</span>\n<span class="k">return None</span>') in out
    assert f'<code class="docutils literal notranslate">{link.format("s1", "s1")};</code>' in out
    assert sig in out  # the signature fixes are for the API page only
    assert stats == Counter({"missing cells": 2, "source links": 2})
    api = _page(page, Path("/site/api.html"), Path("/site"), ids, Counter())
    assert ('<span class="default_value"><span class="pre">=None</span></span> '
            '<span class="pre">| None</span> <em>int | None</em> '
            '<span class="problematic" id="id3">`x</span> file:line '
            '<a class="reference external" href="https://x.org">x</a>') in api
    assert lit in api  # no source links in API docstrings
