"""The wheel works outside the checkout: built, installed into a clean virtualenv, run elsewhere.

The virtualenv (tests/sitebuild.py, :func:`installed_wheel`) holds only the wheel; its
third-party dependencies are borrowed from the test environment. The shared site build of
the site tests is made by this wheel's ``python -m trnkb.site`` with its packaged docs and
notebooks, so the site is built once per run, not once more here.
"""

import json
from pathlib import Path

import pytest
from sitebuild import ROOT, built_by, built_site, installed_wheel, sh


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    work = tmp_path_factory.mktemp("elsewhere")
    return installed_wheel(), work


def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    bin_, work = installed
    where = sh(
        bin_ / "python",
        "-c",
        "import trnkb, trnkb.kb as k; print(trnkb.__file__); print(k.default_specs_dir())",
        cwd=work,
    ).split()
    assert all(str(ROOT) not in p for p in where), where
    assert Path(where[1], "sources.yaml").is_file()


def test_cli_runs_from_the_packaged_specs(installed):
    bin_, work = installed
    sh(bin_ / "trnkb", "validate", cwd=work)
    shown = json.loads(sh(bin_ / "trnkb", "show", "trainium3", "--json", cwd=work))
    assert shown["hbm_capacity"]["value"] is not None
    sh(bin_ / "trnkb", "export", "--out", work / "out", cwd=work)
    assert (work / "out" / "datapackage.json").is_file()
    gemm = json.loads(
        sh(
            bin_ / "trnkb",
            "engine",
            "gemm",
            "--m",
            "256",
            "--k",
            "256",
            "--n",
            "256",
            "--json",
            cwd=work,
        )
    )
    assert gemm


def test_version_matches_the_checkout(installed):
    bin_, work = installed
    import trnkb

    assert sh(bin_ / "trnkb", "--version", cwd=work).strip() == f"trnkb {trnkb.__version__}"


def test_site_builds_from_the_wheel_with_its_packaged_notebooks(installed):
    bin_, work = installed
    site = built_site()  # `python -m trnkb.site OUT --specs ...` of the wheel, run elsewhere
    by = built_by()
    if by is None:
        pytest.skip("TRNKB_TEST_SITE reuses a site not built here")
    where = sh(by, "-c", "import trnkb, trnkb.site as s; print(trnkb.__file__); "
               "print(s.DOCS); print(s.NOTEBOOKS)", cwd=work).split()
    assert all(str(ROOT) not in p and "site-packages" in p for p in where), where
    index = (site / "index.html").read_text()
    assert "Trainium3" in index
    assert (site / "notebooks" / "01-trainium3-at-a-glance.html").is_file()


def test_notebooks_execute_from_the_wheel(installed, tmp_path):
    bin_, work = installed
    nb = sh(
        bin_ / "python",
        "-c",
        "from trnkb.site import shipped; print(shipped('notebooks'))",
        cwd=work,
    ).strip()
    assert "site-packages" in nb
    copy = work / "nb"
    copy.mkdir()
    src = Path(nb) / "06-datacenter.ipynb"
    (copy / src.name).write_bytes(src.read_bytes())
    sh(
        bin_ / "python",
        "-c",
        f"from trnkb.views.notebooks import execute; execute({str(copy / src.name)!r})",
        cwd=work,
        timeout=600,
    )
