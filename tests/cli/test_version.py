"""`trnkb --version` and the places the version is written agree."""

import re
from pathlib import Path

from typer.testing import CliRunner

import trnkb
from trnkb.cli import app

ROOT = Path(__file__).resolve().parents[2]


def test_version_option_prints_the_package_version():
    r = CliRunner().invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout.strip() == f"trnkb {trnkb.__version__}"


def test_citation_and_changelog_name_the_package_version():
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(r"^version: (\S+)$", cff, re.M).group(1) == trnkb.__version__
    assert f"## [{trnkb.__version__}]" in (ROOT / "CHANGELOG.md").read_text()
