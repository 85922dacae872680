"""The wheel works outside the checkout: built, installed into a clean virtualenv, run elsewhere.

The new virtualenv gets only the wheel; its third-party dependencies are borrowed from the
test environment's site-packages through a path file (installing them again would take
minutes), whose own path files (the editable install of this checkout) are not processed.
"""

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def sh(*args, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing from the checkout
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
    assert proc.returncode == 0, f"{args}: {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    sh(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        tmp / "dist",
        ROOT,
        cwd=tmp,
    )
    wheel = next((tmp / "dist").glob("trnkb-*.whl"))
    env = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    purelib = Path(
        sh(
            env / "bin" / "python",
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            cwd=tmp,
        ).strip()
    )
    deps = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (purelib / "_trnkb_test_deps.pth").write_text("\n".join(deps) + "\n")
    sh(
        sys.executable,
        "-m",
        "pip",
        "--python",
        env / "bin" / "python",
        "install",
        "--no-deps",
        "--no-index",
        "-q",
        wheel,
        cwd=tmp,
    )
    work = tmp / "elsewhere"
    work.mkdir()
    return env / "bin", work


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
    sh(bin_ / "python", "-m", "trnkb.site", work / "site", cwd=work, timeout=600)
    index = (work / "site" / "index.html").read_text()
    assert "Trainium3" in index
    assert (work / "site" / "notebooks" / "01-trainium3-at-a-glance.html").is_file()


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
