"""A minimal Chrome DevTools Protocol client for the browser test (tests/test_site_browser.py).

Playwright would serve, but it downloads its browsers from the internet at install time,
which the machines that run these tests cannot reach; this client drives the system's
headless ``chromium`` over the DevTools websocket (websocket-client) instead: start the
browser, open a page and wait for its load event, evaluate JavaScript, and list what went
wrong on the way (:func:`problems`). Nothing else in the repository talks to a browser.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import websocket

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "about:blank",
]


class Browser:
    """One headless Chromium with one page session, driven over its DevTools websocket;
    events that arrive while waiting for a reply are collected."""

    def __init__(self, tmp: Path, chromium: str):
        """Start ``chromium`` with its profile in ``tmp`` and open a blank page."""
        self.proc = subprocess.Popen(
            [chromium, f"--user-data-dir={tmp}", *FLAGS], stderr=subprocess.PIPE, text=True
        )
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
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
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
    urls = {
        e["params"]["requestId"]: e["params"]["request"]["url"]
        for e in events
        if e.get("method") == "Network.requestWillBeSent"
    }
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Network.loadingFailed" and not p.get("canceled"):
            out.append(f"failed request {urls.get(p['requestId'], '?')}: {p.get('errorText')}")
        elif m == "Network.requestWillBeSent" and not p["request"]["url"].startswith(
            ("file:", "data:", "about:")
        ):
            out.append(f"network request {p['request']['url']}")
        elif m == "Runtime.exceptionThrown":
            out.append(f"exception {p['exceptionDetails'].get('text')}")
        elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
            out.append(f"console error {p['entry'].get('text')}")
    return out
