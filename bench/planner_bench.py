"""The planner page (issue 24): its data size compressed, its time to interactive in Chromium,
and the CPU time of the build-time grid behind it.

- Size: the page's HTML and its embedded grid (``<script id="pl-data">``), raw and gzip-9
  compressed (what a web server or a zip would send); target <= 5 MB compressed.
- Interactive: ``planner.js`` writes ``performance.now()`` (ms from navigation start) into
  ``data-ready-ms`` once the first answer is drawn; headless Chromium loads the page from
  disk (``--dump-dom``) and the figure is read from the DOM. Median of ``--repeat`` loads;
  target < 1000 ms on a laptop. The process start of Chromium is not in it.
- ``--grid``: recompute :func:`trnkb.site.serving_grid.grid` without the cache and print its
  CPU time (minutes; the site build pays it once per change of the KB or the code).

Run after ``make site``: ``python bench/planner_bench.py [--site build/site] [--repeat 5]
[--grid]``.
"""

from __future__ import annotations

import argparse
import gzip
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def sizes(page: Path) -> None:
    html = page.read_bytes()
    m = re.search(rb'<script type="application/json" id="pl-data">(.*?)</script>', html, re.S)
    data = m.group(1) if m else b""
    for what, blob in (("planner.html", html), ("grid JSON in it", data)):
        print(f"{what:<18} {len(blob) / 1e6:7.2f} MB raw  "
              f"{len(gzip.compress(blob, 9)) / 1e6:7.3f} MB gzip (target <= 5 MB)")


def interactive(page: Path, repeat: int) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("interactive: chromium not on PATH, not measured")
        return
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="trnkb-bench-") as tmp:
            out = subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 f"--user-data-dir={tmp}", "--virtual-time-budget=5000", "--dump-dom",
                 page.as_uri()], capture_output=True, text=True, timeout=300)
        m = re.search(r'data-ready-ms="(\d+)"', out.stdout)
        if m:
            times.append(int(m.group(1)))
    if not times:
        print("interactive: the page never reported data-ready-ms")
        return
    print(f"interactive        {statistics.median(times):7.0f} ms median of {len(times)} "
          f"loads (min {min(times)}, max {max(times)}; target < 1000 ms)")


def grid_cpu() -> None:
    from trnkb.kb import load
    from trnkb.site.serving_grid import grid

    kb = load()
    t = time.process_time()
    g = grid(kb)
    cpu = time.process_time() - t
    n = sum(len(v.get(p, {}).get("points", [])) for v in g["serve"].values()
            for p in g["axes"]["pricing"])
    print(f"grid               {cpu:7.1f} s CPU for {len(g['serve'])} serving frontiers "
          f"({n} simulated points) and {len(g['train'])} training plans")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", type=Path, default=Path("build/site"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--grid", action="store_true", help="also time the uncached grid")
    a = ap.parse_args()
    page = a.site / "planner.html"
    if not page.is_file():
        print(f"planner: {page} is not built (run make site first); not measured")
        return
    sizes(page)
    interactive(page.resolve(), a.repeat)
    if a.grid:
        grid_cpu()


if __name__ == "__main__":
    main()
