"""Open every page of the built site in headless Chromium, offline, from disk.

Checks that each page loads with no failed request, no console error and no uncaught
exception, that every image loads, and that every chart (a Vega SVG, inline or as an
image file) has drawn marks. Talks to Chromium over the DevTools protocol
(websocket-client). Skipped when ``chromium`` is not on PATH, except under CI (``CI=true``),
where a missing browser is a failure: .ci/run installs it.

Beyond loading, the pages are read as an analyst would: no ``NaN``/``<NA>``/``None`` cell,
no truncated URL, no source id that is not a link; the explorer sorts, filters and shows
provenance; a notebook shows its answer before any code; a download link resolves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from sitebuild import built_site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
if CHROMIUM is None and IN_CI:
    raise RuntimeError("CI=true but chromium is not on PATH: the browser test must run in CI")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not on PATH")
if not IN_CI:
    pytest.importorskip("websocket")
from devtools import Browser, problems  # noqa: E402 (after the skip: it needs websocket)

# Counted per Vega chart: data marks the browser laid out with a size (bars need an
# area; points and lines a width or a height). Axes and legends are not data marks.
MARKS_JS = """
(() => {
  const charts = [...document.querySelectorAll('svg')].filter(s => s.querySelector('.role-mark'));
  return charts.map(svg => [...svg.querySelectorAll(
        '.role-mark path, .role-mark rect, .role-mark circle, .role-mark line')]
      .filter(e => {
        const b = e.getBBox();
        return e.closest('.mark-rect') ? b.width > 0 && b.height > 0 : b.width > 0 || b.height > 0;
      }).length);
})()
"""
# Cells an analyst would read as pandas leaking through, links whose text is a cut URL,
# and source ids shown as plain text (``ids`` is injected as a JSON list).
READING_JS = """
((ids) => {
  const known = new Set(ids), out = [];
  for (const td of document.querySelectorAll('td, th')) {
    const t = td.textContent.trim();
    if (['NaN', 'nan', '<NA>', 'None', 'NaT'].includes(t)) out.push('raw missing cell: ' + t);
  }
  for (const a of document.querySelectorAll('a[href^="http"]')) {
    const t = a.textContent.trim();
    if (/^https?:/.test(t)
        && (t.endsWith('…') || t.endsWith('...') || t !== a.getAttribute('href')))
      out.push('truncated URL: ' + t);
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest('a, script, style, pre, .highlight, #ex-data, title, dt.sig')) continue;
    const t = n.textContent.trim();
    if (t && known.has(t) && (el.closest('td, th, code, p, li')))
      out.push('unlinked source id: ' + t);
  }
  return out;
})
"""
IMAGES_JS = """
[...document.images].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0}))
"""


@pytest.fixture(scope="module")
def browser():
    with tempfile.TemporaryDirectory(prefix="trnkb-chromium-", ignore_cleanup_errors=True) as tmp:
        b = Browser(Path(tmp), CHROMIUM)
        try:
            yield b
        finally:
            b.close()


def source_ids(out: Path) -> list[str]:
    return re.findall(r'<tr id="src-([^"]+)">', (out / "sources.html").read_text())


def test_every_page_loads_offline_and_every_chart_has_marks(browser):
    out = built_site()
    ids = json.dumps(source_ids(out))
    pages = sorted(p for p in out.rglob("*.html") if "_static" not in p.parts)
    assert len(pages) >= 8
    failures, charts, svg_files = [], 0, set()
    for page in pages:
        name = page.relative_to(out)
        failures += [f"{name}: {p}" for p in problems(browser.open(page.as_uri()))]
        if name.name not in ("api.html", "genindex.html", "search.html", "py-modindex.html"):
            failures += [f"{name}: {p}" for p in browser.eval(f"{READING_JS}({ids})") or []]
        for n in browser.eval(MARKS_JS) or []:
            charts += 1
            if n == 0:
                failures.append(f"{name}: an inline chart has no drawn marks")
        for img in browser.eval(IMAGES_JS) or []:
            if not img["ok"]:
                failures.append(f"{name}: image did not load: {img['src']}")
            elif img["src"].endswith(".svg"):
                svg_files.add(img["src"])
    for src in sorted(svg_files):
        failures += [f"{src}: {p}" for p in problems(browser.open(src))]
        marks = browser.eval(MARKS_JS) or []
        charts += len(marks)
        failures += [f"{src}: chart has no drawn marks" for n in marks if n == 0]
    assert not failures, "\n".join(failures)
    assert charts >= 1, "no chart found on any page"


def test_landing_page_shows_headline_version_and_citation(browser):
    out = built_site()
    assert not problems(browser.open((out / "index.html").as_uri()))
    text = browser.eval("document.body.innerText")
    assert "Version" in text and "How to cite" in text
    headline = browser.eval(
        "[...document.querySelectorAll('table.trnkb-table td')].map(t => t.textContent)"
    )
    assert any("Trainium3" in h for h in headline), headline
    assert browser.eval("[...document.images].some(i => i.src.endsWith('headline-fp8.svg'))")


def test_notebook_page_opens_with_question_and_answer_before_code(browser):
    out = built_site()
    browser.open((out / "notebooks" / "02-chips-compared.html").as_uri())
    order = browser.eval("""(() => {
      const body = document.querySelector('article') || document.body;
      const text = body.innerText;
      const code = body.querySelector('div.highlight, .cell_input');
      const ans = [...body.querySelectorAll('p')].find(p => p.textContent.startsWith('Answer.'));
      if (!ans) return 'no answer';
      if (!code) return 'ok';
      return (ans.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_FOLLOWING)
        ? 'ok' : 'code first';
    })()""")
    assert order == "ok"


def test_explorer_sorts_filters_and_shows_provenance(browser):
    out = built_site()
    assert not problems(browser.open((out / "explorer.html").as_uri()))
    rows = "document.querySelectorAll('#ex-table tbody tr').length"
    total = browser.eval(rows)
    assert total >= 10
    # sort by dense FP8, highest first: the column's numbers must come out descending
    browser.eval("document.querySelector('th[data-field=dense_fp8]').click()")
    values = browser.eval("""[...document.querySelectorAll('#ex-table td[data-field=dense_fp8]')]
        .map(td => (td.firstChild ? td.firstChild.textContent : '').replace(/[^0-9.]/g, ''))
        .filter(t => t).map(Number)""")  # the value only: not the qualifier or badge after it
    assert len(values) >= 5 and values == sorted(values, reverse=True), values
    # filter by vendor: fewer rows, every one NVIDIA, and the fragment records it
    browser.eval("""(() => { const s = document.getElementById('ex-vendor'); s.value = 'NVIDIA';
        s.dispatchEvent(new Event('change')); })()""")
    vendors = browser.eval(
        "[...document.querySelectorAll('#ex-table td[data-field=vendor]')].map(t => t.textContent)"
    )
    assert vendors and set(vendors) == {"NVIDIA"} and len(vendors) < total
    assert "vendor=NVIDIA" in browser.eval("location.hash")
    # a tooltip names the source; a click shows it as a link to the sources page
    tip = browser.eval(
        "document.querySelector('#ex-table td[data-field=dense_fp8]:not(.ex-missing)').title"
    )
    assert tip.startswith("source: ")
    browser.eval(
        "document.querySelector('#ex-table td[data-field=dense_fp8]:not(.ex-missing)').click()"
    )
    href = browser.eval("document.querySelector('#ex-detail a.trnkb-source').getAttribute('href')")
    assert href.startswith("sources.html#src-") and href.split("#src-")[1] in source_ids(out)
    # unit toggle: GiB shows the same capacity 1e9 / 2**30 times as large a number
    cap = ("document.querySelector('#ex-table tbody tr td[data-field=hbm_capacity]"
           ":not(.ex-missing)').textContent")
    gb = float(browser.eval(cap).split()[0].replace(",", ""))
    browser.eval("""(() => { const s = document.getElementById('ex-mem'); s.value = 'GiB';
        s.dispatchEvent(new Event('change')); })()""")
    gib = float(browser.eval(cap).split()[0].replace(",", ""))
    assert gib == pytest.approx(gb * 1e9 / 2**30, rel=1e-3)
    assert "(GiB)" in browser.eval(
        "document.querySelector('th[data-field=hbm_capacity]').textContent"
    )
    # scale-up domains are a view of their own
    browser.eval("""(() => { const s = document.getElementById('ex-view'); s.value = 'domains';
        s.dispatchEvent(new Event('change')); })()""")
    assert (
        browser.eval("document.querySelectorAll('#ex-table td[data-field=domain_size]').length")
        >= 5
    )
    # the permalink reproduces the filtered view (a fresh load, not a fragment change)
    browser.open((out / "index.html").as_uri())
    browser.open((out / "explorer.html").as_uri() + "#view=chips&vendor=AMD&sort=tdp&dir=-1")
    vendors = browser.eval(
        "[...document.querySelectorAll('#ex-table td[data-field=vendor]')].map(t => t.textContent)"
    )
    assert vendors and set(vendors) == {"AMD"}


def test_claims_page_puts_contradicted_first_with_reasons(browser):
    out = built_site()
    assert not problems(browser.open((out / "claims.html").as_uri()))
    heads = browser.eval("[...document.querySelectorAll('article h2')].map(h => h.textContent)")
    assert heads and heads[0].startswith("Contradicted"), heads
    assert browser.eval("[...document.querySelectorAll('th')].some(t => t.textContent === 'why')")


def test_download_links_resolve(browser):
    out = built_site()
    browser.open((out / "downloads.html").as_uri())
    hrefs = browser.eval(
        "[...document.querySelectorAll('article a[href^=\"data/\"]')].map(a => a.href)"
    )
    assert any(h.endswith("datapackage.json") for h in hrefs) and any(
        h.endswith("chips.csv") for h in hrefs
    )
    for h in hrefs:
        assert Path(h.removeprefix("file://")).is_file(), h
    assert not problems(browser.open(next(h for h in hrefs if h.endswith("datapackage.json"))))


def test_phone_width_keeps_tables_and_charts_legible(browser):
    # At 420 px, source ids broken letter by letter made each landing-table row ~260 px
    # tall and the headline chart shrank to 6 px labels; tables and charts now scroll.
    out = built_site()
    browser.call("Emulation.setDeviceMetricsOverride", session=True, width=420, height=900,
                 deviceScaleFactor=1, mobile=True)
    try:
        assert not problems(browser.open((out / "index.html").as_uri()))
        rows = browser.eval("""[...document.querySelectorAll('article table.trnkb-table')][0]
            ? [...[...document.querySelectorAll('article table.trnkb-table')][0]
                .querySelectorAll('tbody tr')].map(r => r.getBoundingClientRect().height) : []""")
        assert rows and max(rows) < 150, rows  # five lines at most (broken ids: ~260 px)
        chart = browser.eval("""(() => { const i = [...document.images]
              .find(i => i.src.endsWith('headline-fp8.svg'));
            return i && [i.getBoundingClientRect().width, i.naturalWidth]; })()""")
        assert chart and chart[0] >= 0.99 * chart[1], chart  # drawn size, not shrunk
        page = browser.eval("[document.documentElement.scrollWidth, window.innerWidth]")
        assert page[0] <= page[1] + 1, page  # the page itself does not scroll sideways
        browser.open((out / "sources.html").as_uri())
        first = browser.eval("""document.querySelector('table.trnkb-sources tbody tr')
            .getBoundingClientRect().height""")
        assert first < 110, first
        # text columns keep a readable width (8rem) and the table scrolls instead
        browser.open((out / "claims.html").as_uri())
        narrow = browser.eval("""Math.min(...[...document.querySelectorAll(
            'table.trnkb-table td:not(.num)')].map(td => td.getBoundingClientRect().width))""")
        assert narrow >= 127, narrow
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride", session=True)


def test_explorer_numeric_columns_align_their_dashes_with_their_numbers(browser):
    # a missing value sat at the left edge of a right-aligned column of numbers
    out = built_site()
    assert not problems(browser.open((out / "explorer.html").as_uri()))
    aligns = browser.eval("""(() => {
      const out = {};
      for (const f of ['dense_bf16', 'dense_fp8', 'tdp']) {
        const tds = [...document.querySelectorAll('#ex-table td[data-field=' + f + ']')];
        out[f] = [...new Set(tds.map(td => getComputedStyle(td).textAlign))];
        out[f + ':missing'] = tds.some(td => td.classList.contains('ex-missing'));
      }
      return out; })()""")
    for f in ("dense_bf16", "dense_fp8", "tdp"):
        assert aligns[f + ":missing"], f  # the column has a dash to align
        assert aligns[f] == ["right"], (f, aligns[f])


CONTRAST_JS = """
((sel) => {
  const lum = c => { const v = c.match(/[0-9.]+/g).slice(0, 3).map(Number).map(x => x / 255)
      .map(x => x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4));
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const el = document.querySelector(sel), st = getComputedStyle(el);
  const a = lum(st.color), b = lum(st.backgroundColor);
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
})
"""


def test_explorer_provenance_panel_is_readable_in_the_dark_theme(browser):
    # the panel kept a fixed light background under the theme's light dark-mode text
    out = built_site()
    assert not problems(browser.open((out / "explorer.html").as_uri()))
    browser.eval("document.documentElement.dataset.theme = 'dark'")
    browser.eval(
        "document.querySelector('#ex-table td[data-field=dense_fp8]:not(.ex-missing)').click()"
    )
    ratio = browser.eval(f"{CONTRAST_JS}('#ex-detail')")
    assert ratio >= 4.5, ratio  # WCAG AA for body text


KEYS = {"Tab": 9, "Enter": 13, " ": 32, "ArrowDown": 40, "ArrowUp": 38, "ArrowRight": 39,
        "ArrowLeft": 37}


def press(browser, key: str, shift: bool = False) -> None:
    """One key press through the DevTools input domain (what a keyboard sends)."""
    code = {"Enter": "Enter", " ": "Space", "Tab": "Tab"}.get(key, key)
    text = {"Enter": "\r", " ": " "}.get(key)
    down = {"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": KEYS[key],
            "nativeVirtualKeyCode": KEYS[key], "modifiers": 8 if shift else 0}
    if text:
        down["text"] = text
    browser.call("Input.dispatchKeyEvent", session=True, **down)
    browser.call("Input.dispatchKeyEvent", session=True, type="keyUp", key=key, code=code,
                 windowsVirtualKeyCode=KEYS[key], modifiers=8 if shift else 0)


def tab_to(browser, selector: str) -> None:
    """Press Tab (or Shift+Tab when the target comes earlier) until ``selector`` has focus.

    Only key presses move the focus; the page is read to know when to stop."""
    sel = json.dumps(selector)
    for _ in range(400):
        where = browser.eval(f"""(() => {{ const t = document.querySelector({sel});
            if (!t) return 'missing';
            if (document.activeElement === t) return 'here';
            const a = document.activeElement;
            if (!a || a === document.body) return 'after';
            return (a.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_PRECEDING)
              ? 'before' : 'after'; }})()""")
        assert where != "missing", selector
        if where == "here":
            return
        press(browser, "Tab", shift=where == "before")
    raise AssertionError(f"Tab never reached {selector}")


def choose(browser, select: str, value: str) -> None:
    """With a <select> focused by Tab, press arrow keys until it reads ``value``."""
    tab_to(browser, select)
    sel = json.dumps(select)
    for key in ["ArrowUp"] * 30 + ["ArrowDown"] * 60:
        if browser.eval(f"document.querySelector({sel}).value") == value:
            return
        press(browser, key)
    raise AssertionError(f"{select} never read {value!r}")


def test_explorer_works_with_the_keyboard_only(browser, tmp_path):
    out = built_site()
    browser.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(tmp_path))
    assert not problems(browser.open((out / "explorer.html").as_uri()))
    rows = "document.querySelectorAll('#ex-table tbody tr').length"
    total = browser.eval(rows)
    # filter: vendor NVIDIA, chosen with arrow keys on the focused select
    choose(browser, "#ex-vendor", "NVIDIA")
    vendors = browser.eval(
        "[...document.querySelectorAll('#ex-table td[data-field=vendor]')].map(t => t.textContent)")
    assert vendors and set(vendors) == {"NVIDIA"} and len(vendors) < total
    # toggle: memory in GiB
    choose(browser, "#ex-mem", "GiB")
    assert "(GiB)" in browser.eval(
        "document.querySelector('th[data-field=hbm_capacity]').textContent")
    # choose columns: open the chooser with Enter, add bytes per FLOP, drop TDP (Space)
    tab_to(browser, "#ex-columns > summary")
    press(browser, "Enter")
    assert browser.eval("document.getElementById('ex-columns').open")
    for field in ("bytes_per_flop", "tdp"):
        before = browser.eval(f"!!document.querySelector('th[data-field={field}]')")
        tab_to(browser, f"#ex-colboxes input[data-col={field}]")
        press(browser, " ")
        after = browser.eval(f"!!document.querySelector('th[data-field={field}]')")
        assert after is (not before), field
    assert "cols=" in browser.eval("location.hash")
    # sort: Enter on the dense FP8 header, highest first
    tab_to(browser, "#ex-table button.ex-sortbtn[data-field=dense_fp8]")
    press(browser, "Enter")
    values = browser.eval("""[...document.querySelectorAll('#ex-table td[data-field=dense_fp8]')]
        .map(td => (td.firstChild ? td.firstChild.textContent : '').replace(/[^0-9.]/g, ''))
        .filter(t => t).map(Number)""")
    assert len(values) >= 3 and values == sorted(values, reverse=True), values
    # arrow keys in the table, Enter shows the cell's source
    tab_to(browser, "#ex-table tbody [tabindex='0']")
    press(browser, "ArrowRight")
    press(browser, "ArrowDown")
    focused = browser.eval("document.activeElement.dataset.field || ''")
    assert focused, "arrow keys did not move into a data cell"
    press(browser, "Enter")
    assert browser.eval("document.getElementById('ex-detail').textContent").startswith(
        browser.eval("document.activeElement.parentNode.querySelector('th').textContent"))
    # download this view: the CSV holds exactly the rows and columns shown, units in headers
    tab_to(browser, "#ex-download")
    press(browser, "Enter")
    csv_path = tmp_path / "trnkb-explorer-chips.csv"
    for _ in range(100):
        if csv_path.is_file() and csv_path.stat().st_size:
            break
        time.sleep(0.1)
    import csv
    with open(csv_path, encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    shown = browser.eval("""[...document.querySelectorAll('#ex-table thead th')]
        .map(th => th.dataset.field)""")
    assert len(table) == browser.eval(rows)
    assert {r["vendor"] for r in table} == {"NVIDIA"}
    header = list(table[0])
    assert len(header) == len(shown) + 1  # id, name, then the shown columns
    assert "HBM capacity (GiB)" in header and "HBM bytes per BF16 FLOP (B/FLOP)" in header
    assert not any(h.startswith("TDP") for h in header)
    top = [float(r["dense FP8 (TFLOP/s)"]) for r in table if r["dense FP8 (TFLOP/s)"]]
    assert top == sorted(top, reverse=True)


def test_explorer_follows_a_pasted_permalink_and_hides_no_year_silently(browser):
    out = built_site()
    assert not problems(browser.open((out / "explorer.html").as_uri()))
    browser.eval("location.hash = 'view=chips&cls=&vendor=AMD'")
    time.sleep(0.3)
    vendors = browser.eval(
        "[...document.querySelectorAll('#ex-table td[data-field=vendor]')].map(t => t.textContent)")
    assert vendors and set(vendors) == {"AMD"}
    # the domain view opens in PFLOP/s, not TFLOP/s
    browser.eval("location.hash = 'view=domains'")
    time.sleep(0.3)
    assert "(PFLOP/s)" in browser.eval(
        "document.querySelector('th[data-field=domain_bf16]').textContent")
    # a year filter says how many rows it leaves out for having no year
    browser.eval("location.hash = 'view=chips&cls=&year=2025'")
    time.sleep(0.3)
    no_year = browser.eval("""(() => { const d = JSON.parse(
        document.getElementById('ex-data').textContent);
        return d.chips.rows.filter(r => !r.cells.year).length; })()""")
    assert no_year > 0
    assert f"{no_year} rows give no year" in browser.eval(
        "document.getElementById('ex-count').textContent")
    # CPUs are their own kind: the default view shows accelerators only
    browser.eval("location.hash = 'view=chips'")
    time.sleep(0.3)
    names = browser.eval(
        "[...document.querySelectorAll('#ex-table tbody th')].map(t => t.textContent)")
    assert names and not any("Graviton" in n or "Grace" in n for n in names)
    # Trainium3 is highlighted in the scatter
    assert browser.eval("document.querySelectorAll('#ex-scatter .ex-trn3 circle').length") == 1


def test_explorer_marks_estimates_and_computed_cells_and_compares_hbm_physically(browser):
    out = built_site()
    browser.open((out / "index.html").as_uri())  # a fragment change alone fires no load event
    assert not problems(browser.open((out / "explorer.html").as_uri() + "#view=chips&cls="))
    assert browser.eval("document.querySelectorAll('#ex-table td.ex-k-derived sup.ex-mark').length")
    data = browser.eval("JSON.parse(document.getElementById('ex-data').textContent).chips.rows")
    cells = {r["id"]: r["cells"] for r in data}
    # Trainium3 vs GB300 HBM on the physical basis: 4 x 12 x 24 Gbit against 8 x 12 x 24 Gbit
    t3, gb = cells["trainium3"]["hbm_physical"], cells["gb300"]["hbm_physical"]
    assert t3["v"] / gb["v"] == pytest.approx(4 * 12 * 24 / (8 * 12 * 24))
    assert t3["lab"] == "144 GiB" and gb["lab"] == "288 GB"
    td = "#ex-table td[data-row=trainium3][data-field=hbm_physical]"
    assert "(144 GiB)" in browser.eval(f"document.querySelector('{td}').textContent")
    browser.eval(f"document.querySelector('{td}').click()")
    detail = browser.eval("document.getElementById('ex-detail').textContent")
    assert "stacks x dies per stack x die density" in detail and "0.537" in detail


def _cli(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "trnkb", "workload", *args, "--json"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _shown(browser, table: str, metric: str, column: str = "td.pl-central") -> float:
    text = browser.eval(f"""document.querySelector(
        '#pl-{table}-table tr[data-metric={metric}] {column}').textContent""")
    return float(text.replace(",", ""))


def test_planner_answers_match_the_workload_cli(browser):
    out = built_site()
    assert not problems(browser.open((out / "planner.html").as_uri()))
    model, system, prec = "llama-3-1-70b", "gb300-nvl72", "fp8"
    for sel, value in (("#pl-model", model), ("#pl-system", system), ("#pl-precision", prec),
                       ("#pl-lengths", "2048/512"), ("#pl-pricing", "owner"),
                       ("#pl-target", "20"), ("#pl-power", "50"), ("#pl-tokens", "15000000000000"),
                       ("#pl-days", "30")):
        browser.eval(f"""(() => {{ const s = document.querySelector('{sel}'); s.value = '{value}';
            s.dispatchEvent(new Event(s.tagName === 'INPUT' ? 'input' : 'change')); }})()""")
    assert "model=llama-3-1-70b" in browser.eval("location.hash")
    summary = browser.eval("document.getElementById('pl-serve-summary').textContent")
    m = re.search(r"one replica of (\d+) chips .* is (\d+) concurrent clients", summary)
    assert m, summary
    chips, clients = m.group(1), m.group(2)
    common = ["--model", model, "--system", system, "--precision", prec, "--input-len", "2048",
              "--output-len", "512", "--pricing", "owner"]
    # the operating point is one simulator run: the same figures from the command line
    cli = _cli("serve", *common, "--chips", chips, "--concurrency", clients)["metrics"]
    for metric, factor in (("tokens_per_s_per_chip", 1), ("usd_per_million_tokens", 1),
                           ("ttft_p50", 1e3)):
        assert _shown(browser, "serve", metric) == pytest.approx(
            cli[metric]["central"] * factor, rel=5e-3), metric  # 3 figures shown
    # the power budget: racks and fleet tokens/s as plan-fleet gives them
    fleet = _cli("plan-fleet", *common, "--power-mw", "50", "--tokens-per-user", "20")
    assert fleet["replica_chips"] == int(chips) and fleet["load"] == int(clients)
    assert _shown(browser, "power", "racks") == fleet["racks"]["central"]
    assert _shown(browser, "power", "fleet_tokens_per_s") == pytest.approx(
        fleet["fleet_tokens_per_s"]["central"], rel=5e-3)
    # the cost ceiling: as cost-target gives it
    browser.eval("""(() => { const s = document.querySelector('#pl-ceiling'); s.value = '1';
        s.dispatchEvent(new Event('input')); })()""")
    cost = _cli("cost-target", *common, "--max-usd-per-mtok", "1")["tokens_per_s_per_user"]
    shown = browser.eval("""document.querySelector(
        '#pl-cost-table tr[data-metric=cost_target] td.pl-central').textContent""")
    assert (shown == "not reachable" if cost["central"] is None
            else float(shown.replace(",", "")) == pytest.approx(cost["central"], rel=5e-3))
    # training 15T tokens in 30 days: chips and days as train-plan gives them
    plan = _cli("train-plan", "--model", model, "--system", system, "--tokens", "15e12",
                "--days", "30", "--precision", "bf16")
    train = browser.eval("document.getElementById('pl-train-summary').textContent")
    assert f"{plan['chips']:,} chips = {plan['racks']} racks" in train, train
    assert _shown(browser, "train", "days") == pytest.approx(plan["days"]["central"], rel=5e-3)
    # the frontier is drawn with its band, and a pasted link restores the choice
    assert browser.eval("document.querySelectorAll('#pl-curve path.pl-band').length") == 1
    link = browser.eval("document.getElementById('pl-permalink').getAttribute('href')")
    assert "power=50" in link and "tokens=15000000000000" in link


def test_pages_carry_version_build_date_and_commit(browser):
    out = built_site()
    browser.open((out / "explorer.html").as_uri())
    stamp = browser.eval("document.querySelector('.trnkb-stamp').textContent")
    assert re.search(r"trnkb \d+\.\d+\.\d+ · built \d{4}-\d\d-\d\dT[\d:]+Z · commit \S+", stamp)
    d = json.loads((out / "data" / "csv" / "datapackage.json").read_text())
    assert {"version", "created"} <= set(d) and d["trnkb"]["commit"]
