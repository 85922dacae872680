"""A site built from hostile specs runs none of their text (issue 25 §2).

``tests/sitebuild.py`` adds a chip and a source whose names, notes, locators, qualifiers
and titles hold attribute and element break-outs (quotes, ``<img onerror>``,
``<script>``, ``</td></table>``, template syntax); each would set ``window.__pwned`` if
it ran. Every page that carries one is opened in headless Chromium: no payload runs, no
element gains an event attribute or an ``img src=x``, and the text reads back as text.
(Controls, bidirectional overrides and ``javascript:``/quoted URLs never get this far:
the loader refuses them, see ``tests/data/bad``.)
"""

from __future__ import annotations

import pytest
from sitebuild import built_site
from test_site_browser import CHROMIUM, browser, problems  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not on PATH")

INJECTED_JS = """
(() => ({
  pwned: window.__pwned === undefined ? null : String(window.__pwned),
  handlers: [...document.querySelectorAll('[onerror], [onload], [onmouseover]')]
      .map(e => e.outerHTML.slice(0, 120)),
  images: [...document.querySelectorAll('img[src="x"]')].length,
  text: document.body.innerText,
}))()
"""


def test_no_hostile_text_runs_or_breaks_the_markup(browser):  # noqa: F811
    out = built_site()
    pages = sorted(p for p in out.rglob("*.html") if "_static" not in p.parts
                   and "__pwned" in p.read_text(encoding="utf-8"))
    assert len(pages) >= 2, "the hostile rows should appear on the data pages"
    failures, shown = [], 0
    for page in pages:
        name = page.relative_to(out)
        failures += [f"{name}: {p}" for p in problems(browser.open(page.as_uri()))
                     if "exception" in p]
        got = browser.eval(INJECTED_JS)
        if got["pwned"] is not None:
            failures.append(f"{name}: a payload ran (window.__pwned = {got['pwned']})")
        failures += [f"{name}: injected handler {h}" for h in got["handlers"]]
        if got["images"]:
            failures.append(f"{name}: {got['images']} injected <img src=x>")
        shown += 'onerror="window.__pwned=1"' in got["text"]
    assert not failures, "\n".join(failures)
    assert shown >= 1, "the hostile name should read back as text on some page"


def test_the_explorer_data_is_json_not_markup():
    out = built_site()
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        for bad in ('<img src=x onerror="window.__pwned=1">', "<script>window.__pwned",
                    '<svg onload="window.__pwned'):
            assert bad not in html, f"{page.relative_to(out)} holds raw {bad!r}"
