"""Screenshots of the built site for the docs' "Reading the results" page.

``python -m trnkb.site.screenshots build/site docs/_static/screenshots`` (or ``make
screenshots``) opens each page of :data:`SHOTS` in headless Chromium and saves a PNG, so
the pictures in the docs always show the current build.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

# (file name, page of the built site, what it shows)
SHOTS = (
    ("landing.png", "index.html", "the landing page: headline chart and table"),
    ("notebook.png", "notebooks/02-chips-compared.html",
     "a notebook page: question and answer first"),
    ("explorer.png", "explorer.html#view=chips&sort=dense_fp8&dir=-1",
     "the explorer, sorted by dense FP8"),
    ("claims.png", "claims.html", "the claims audit: contradicted claims first"),
)
WINDOW = (1280, 900)


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise RuntimeError("chromium is not on PATH (apt-get install chromium)")
    return exe


def screenshots(site: Path, out: Path) -> list[Path]:
    """Save one PNG per entry of :data:`SHOTS` from the site built in ``site``."""
    exe = _chromium()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="trnkb-shots-") as profile:
        for name, page, _ in SHOTS:
            path, _, fragment = page.partition("#")
            target = (site / path).resolve()
            if not target.is_file():
                raise FileNotFoundError(f"{target} is not built")
            url = target.as_uri() + (f"#{fragment}" if fragment else "")
            subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--user-data-dir={profile}", "--disable-background-networking",
                            f"--window-size={WINDOW[0]},{WINDOW[1]}", "--virtual-time-budget=3000",
                            f"--screenshot={out / name}", url],
                           check=True, capture_output=True, timeout=120)
            written.append(out / name)
    return written


@app.command()
def main(
    site: Annotated[Path, typer.Argument(help="Built site.")] = Path("build/site"),
    out: Annotated[Path, typer.Argument(help="Folder for the PNGs.")]
    = Path("docs/_static/screenshots"),
) -> None:
    """Screenshot the built site's key pages into OUT."""
    for p in screenshots(site, out):
        print(f"screenshot: {p}")


if __name__ == "__main__":
    app()
