"""Every malformed spec in tests/data/bad is refused whole with file:line: field: problem."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import trnkb
from trnkb.specfile import SpecError

BAD = Path(__file__).parent / "data" / "bad"
CASES = yaml.safe_load((BAD / "cases.yaml").read_text())


def _spec_dir(good_specs: Path, case: str) -> Path:
    shutil.copy(BAD / case, good_specs / f"{CASES[case]['table']}.yaml")
    return good_specs


def test_every_bad_file_has_a_case():
    files = {p.name for p in BAD.iterdir()} - {"cases.yaml"}
    assert files == set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_load_refuses_bad_spec_with_located_message(good_specs, case):
    specs = _spec_dir(good_specs, case)
    with pytest.raises(SpecError) as info:
        trnkb.load(specs)
    messages = [m.split("specs/", 1)[-1] for m in info.value.errors]
    assert any(m.startswith(CASES[case]["expect"]) for m in messages), messages


@pytest.mark.parametrize("case", ["unknown_unit.yaml", "unsafe_tag.yaml", "non_utf8.yaml"])
def test_cli_validate_exits_1_without_traceback(good_specs, case):
    specs = _spec_dir(good_specs, case)
    proc = subprocess.run([sys.executable, "-m", "trnkb", "validate", str(specs)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert CASES[case]["expect"] in proc.stderr
    assert proc.stdout == ""


def test_unsafe_tag_is_never_executed(good_specs, tmp_path):
    marker = Path("/tmp/trnkb-pwned")
    marker.unlink(missing_ok=True)
    with pytest.raises(SpecError):
        trnkb.load(_spec_dir(good_specs, "unsafe_tag.yaml"))
    assert not marker.exists()


def test_all_problems_in_a_directory_are_reported_together(good_specs):
    text = (good_specs / "chips.yaml").read_text()
    text = text.replace("144 GB,", "144 GBB,").replace("671 TFLOPS", "671")
    (good_specs / "chips.yaml").write_text(text)
    with pytest.raises(SpecError) as info:
        trnkb.load(good_specs)
    assert len(info.value.errors) == 2
