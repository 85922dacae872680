"""Every malformed spec in tests/data/bad is refused whole with file:line: field: problem.

``cases.yaml`` names each case, the file it replaces in a copy of tests/data/good
(``table``, or ``dest`` for a file added beside them), or a file-system object to
``make`` there, and the message the refusal must start with (``loads`` for valid input
that must keep loading: CRLF, byte-order mark, long notes).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import trnkb
from trnkb.audit import validate
from trnkb.cli import main
from trnkb.spec.specfile import MAX_ERRORS, SpecError

BAD = Path(__file__).parent / "data" / "bad"
CASES = yaml.safe_load((BAD / "cases.yaml").read_text())
REFUSED = sorted(c for c in CASES if CASES[c]["expect"] != "loads")
VALID = sorted(c for c in CASES if CASES[c]["expect"] == "loads")
# cases that hung or crashed before issue 10: also run in a subprocess with a time limit
HANGS = [
    "(named pipe)",
    "(coverage named pipe)",
    "coverage_alias_bomb.yaml",
    "(100,000 unknown fields)",
    "(300 derived values in reverse order)",
    "nesting_flow_5000.yaml",
    "alias_bomb.yaml",
    "pint_bomb_value.yaml",
    "claims_pint_bomb.yaml",
    "long_quantity_1000.yaml",
    "claims_divide_by_zero.yaml",
]


_S = 'source: semianalysis-trn3, locator: "L", kind: reported'


def _generated(name: str) -> str:
    """Inputs too large or repetitive to keep as files (``generate:`` in cases.yaml)."""
    if name == "unknown-fields":  # 100,000 unknown fields in one row
        head = "- id: trainium3\n  name: AWS Trainium3\n  vendor: AWS\n  status: shipping\n"
        return head + "".join(f"  bogus_{i}: 1\n" for i in range(100_000))
    if name == "long-duplicate-id":  # the same 100,000-character id twice
        row = f"- id: {'a' * 100_000}\n  name: A\n  vendor: B\n"
        return row + row
    if name == "derive-chain-300":  # r0 <- r1 <- ... <- r299, each declared before its input
        rows = []
        for i in range(300):
            value = (f"{{value: 32, {_S}}}" if i == 299 else
                     f"{{derive: copy, kind: derived, inputs: {{of: r{i + 1}.chips_per_rack}}}}")
            rows.append(f"- id: r{i}\n  name: R{i}\n  vendor: AWS\n"
                        f"  chip: {{value: trainium3, {_S}}}\n  chips_per_rack: {value}\n")
        return "".join(rows)
    raise AssertionError(name)


def _spec_dir(good_specs: Path, case: str) -> Path:
    spec = CASES[case]
    target = good_specs / spec.get("dest", f"{spec['table']}.yaml")
    target.parent.mkdir(parents=True, exist_ok=True)
    if spec.get("with_claims"):
        shutil.copy(BAD / "valid_claims.yaml", good_specs / "claims.yaml")
    if spec.get("generate"):
        target.write_text(_generated(spec["generate"]))
        return good_specs
    make = spec.get("make")
    if make:
        target.unlink(missing_ok=True)
    if make == "directory":
        target.mkdir()
    elif make == "fifo":
        os.mkfifo(target)
    elif make == "symlink-loop":
        target.symlink_to(target.name)
    elif make == "dangling-symlink":
        target.symlink_to("no-such-file.yaml")
    elif make == "unreadable":
        if os.geteuid() == 0:
            pytest.skip("root reads any file")
        shutil.copy(BAD.parent / "good" / "chips.yaml", target)
        target.chmod(0)
    else:
        shutil.copy(BAD / case, target)
    return good_specs


def _messages(errors: list[str]) -> list[str]:
    return [m.split("specs/", 1)[-1] for m in errors]


def test_every_bad_file_has_a_case():
    files = {p.name for p in BAD.iterdir()} - {"cases.yaml"}
    assert files == {c for c in CASES if not CASES[c].get("make") and not CASES[c].get("generate")}


def test_the_corpus_covers_issue_10():
    assert len(REFUSED) >= 40
    assert {"valid_crlf.yaml", "valid_bom.yaml"} <= set(VALID)


@pytest.mark.parametrize("case", REFUSED)
def test_load_refuses_bad_spec_with_located_message(good_specs, case):
    specs = _spec_dir(good_specs, case)
    with pytest.raises(SpecError) as info:
        validate(specs)  # load, then the claims: what `trnkb validate` runs
    messages = _messages(info.value.errors)
    assert any(m.startswith(CASES[case]["expect"]) for m in messages), messages[:5]
    assert len(messages) <= MAX_ERRORS + 1
    for m in messages:  # file:line: field: what is wrong, one line, capped, never line 0
        if m.startswith("... and "):  # the count of problems beyond the listing
            assert m == messages[-1] and len(messages) == MAX_ERRORS + 1, m
            continue
        file, line, rest = m.split(":", 2)
        assert int(line) >= 1 and rest.startswith(" ") and "\n" not in m and len(m) <= 400, m


@pytest.mark.parametrize("case", VALID)
def test_valid_input_keeps_loading(good_specs, case):
    kb, _ = validate(_spec_dir(good_specs, case))
    if CASES[case]["table"] == "chips":
        assert kb.value("trainium3", "cores").magnitude == 8


@pytest.mark.parametrize("case", REFUSED)
def test_cli_validate_exits_1_with_one_line_per_problem(good_specs, case, capsys):
    specs = _spec_dir(good_specs, case)
    with pytest.raises(SystemExit) as info:
        main(["validate", str(specs)])
    out = capsys.readouterr()
    assert info.value.code == 1
    assert out.out == ""
    assert "Traceback" not in out.err
    assert CASES[case]["expect"] in out.err
    assert out.err.splitlines()[-1].endswith("problem(s); nothing loaded.")


@pytest.mark.parametrize("case", HANGS + ["unknown_unit.yaml", "unsafe_tag.yaml", "non_utf8.yaml"])
def test_cli_validate_finishes_without_traceback_in_a_subprocess(good_specs, case):
    specs = _spec_dir(good_specs, case)
    proc = subprocess.run(
        [sys.executable, "-m", "trnkb", "validate", str(specs)],
        capture_output=True,
        text=True,
        preexec_fn=_cpu_limit,  # the guard bounds CPU time (a blocking read uses none:
        timeout=600,  # the wall-clock timeout is only a backstop for that)
    )
    assert "Traceback" not in proc.stderr
    if CASES[case]["expect"] == "loads":
        assert proc.returncode == 0, proc.stderr[-400:]
        return
    assert proc.returncode == 1
    assert CASES[case]["expect"] in proc.stderr
    assert proc.stdout == ""


def _cpu_limit(seconds: int = 60) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))


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


def test_unreadable_file_is_refused_in_one_line(good_specs, monkeypatch):
    # root reads anything, so the permission error is simulated at the os.open boundary
    real_open = os.open

    def deny(path, *args, **kw):
        if str(path).endswith("chips.yaml"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kw)

    monkeypatch.setattr("trnkb.spec.specfile.os.open", deny)
    with pytest.raises(SpecError) as info:
        trnkb.load(good_specs)
    assert _messages(info.value.errors) == ["chips.yaml:1: (file): cannot read (Permission denied)"]


def test_schema_failure_names_file_line_and_row(good_specs, monkeypatch):
    # a check only pandera makes (e.g. on a derived value) must point at the value's line
    import pandera.pandas as pa

    import trnkb.kb.loading as loading

    real = loading.pandera_schema

    def stricter(table, present):
        schema = real(table, present)
        if table.name == "chips":
            schema = schema.update_column("cores", checks=[pa.Check.le(4)])
        return schema

    monkeypatch.setattr(loading, "pandera_schema", stricter)
    with pytest.raises(SpecError) as info:
        trnkb.load(good_specs, schemas=True)
    assert _messages(info.value.errors) == [
        "chips.yaml:5: trainium3.cores: fails less_than_or_equal_to(4) (8)"
    ]
