"""Open every page of the built site in headless Chromium, offline, from disk.

Checks that each page loads with no failed request, no console error and no uncaught
exception, that every image loads, and that every chart (a Vega SVG, inline or as an
image file) has drawn marks. Talks to Chromium over the DevTools protocol
(websocket-client); skipped when ``chromium`` is not on PATH.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from sitebuild import built_site

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not on PATH")
websocket = pytest.importorskip("websocket")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "about:blank"]

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
IMAGES_JS = """
[...document.images].map(i => ({src: i.src, ok: i.complete && i.naturalWidth > 0}))
"""


class Browser:
    """Minimal DevTools client: one page session, events collected while waiting."""

    def __init__(self, tmp: Path):
        self.proc = subprocess.Popen([CHROMIUM, f"--user-data-dir={tmp}", *FLAGS],
                                     stderr=subprocess.PIPE, text=True)
        try:
            self._connect()
        except BaseException:
            self.proc.kill()
            self.proc.wait(timeout=30)
            raise

    def _connect(self) -> None:
        url = None
        deadline = time.time() + 60
        while time.time() < deadline and url is None:
            line = self.proc.stderr.readline()
            m = re.search(r"(ws://\S+)", line)
            url = m.group(1) if m else None
        assert url, "chromium did not start its DevTools endpoint"
        self.ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)

    def call(self, method: str, session: bool = False, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def open(self, url: str) -> list[dict]:
        """Navigate, wait for the load event, return the events seen on the way."""
        self.events = []
        self.call("Page.navigate", session=True, url=url)
        deadline = time.time() + 60
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.time() < deadline, f"{url} did not finish loading"
            self.events.append(json.loads(self.ws.recv()))
        time.sleep(0.2)  # let late scripts report errors
        self.call("Runtime.evaluate", session=True, expression="0")
        return self.events

    def eval(self, expression: str):
        r = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        return r["result"].get("value")

    def close(self):
        self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)


def problems(events: list[dict]) -> list[str]:
    urls = {e["params"]["requestId"]: e["params"]["request"]["url"]
            for e in events if e.get("method") == "Network.requestWillBeSent"}
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Network.loadingFailed" and not p.get("canceled"):
            out.append(f"failed request {urls.get(p['requestId'], '?')}: {p.get('errorText')}")
        elif m == "Network.requestWillBeSent" and not p["request"]["url"].startswith(("file:", "data:", "about:")):
            out.append(f"network request {p['request']['url']}")
        elif m == "Runtime.exceptionThrown":
            out.append(f"exception {p['exceptionDetails'].get('text')}")
        elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
            out.append(f"console error {p['entry'].get('text')}")
    return out


@pytest.fixture(scope="module")
def browser():
    with tempfile.TemporaryDirectory(prefix="trnkb-chromium-", ignore_cleanup_errors=True) as tmp:
        b = Browser(Path(tmp))
        try:
            yield b
        finally:
            b.close()


def test_every_page_loads_offline_and_every_chart_has_marks(browser):
    out = built_site()
    pages = sorted(p for p in out.rglob("*.html") if "_static" not in p.parts)
    assert len(pages) >= 8
    failures, charts, svg_files = [], 0, set()
    for page in pages:
        name = page.relative_to(out)
        failures += [f"{name}: {p}" for p in problems(browser.open(page.as_uri()))]
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
