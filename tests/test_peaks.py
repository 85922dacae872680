"""trnkb.peaks: device strings resolve to their SKU row; peaks equal the KB's preferred values.

Expected values come from the knowledge base (``trnkb.load()``), not from the resolver's
table; candidates of an ambiguous string come from the device rows themselves.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trnkb.cli import app
from trnkb.peaks import AmbiguousDevice, UnknownDevice, peaks
from trnkb.spec.peaks_format import DTYPES

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "pint", "altair", "numpy", "pandera", "yaml")
UNITS = {"hbm_bandwidth": "B/s", "hbm_capacity": "B", "tdp": "W", "clock": "Hz"}


def _light_modules(code: str, env: dict[str, str] | None = None) -> list[str]:
    heavy = ", ".join(repr(m) for m in HEAVY)
    probe = (code + "\nimport sys\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {{{heavy}}}))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, **(env or {})}, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_import_loads_no_pandas_pint_or_altair():
    assert _light_modules("import trnkb.peaks") == []


def test_a_call_with_a_fresh_table_stays_light(tmp_path):
    from trnkb.kb.peaks_table import build_table
    from trnkb.spec.peaks_format import specs_digest, specs_dir

    table = build_table()  # the shipped specs, written where the resolver caches tables
    folder = tmp_path / "trnkb" / "peaks"
    folder.mkdir(parents=True)
    (folder / f"{specs_digest(specs_dir())}.json").write_text(json.dumps(table))
    code = "import trnkb.peaks\nassert trnkb.peaks('TPU7x').chip == 'tpu-v7'"
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    assert _light_modules(code, env) == []


def test_every_device_string_resolves_to_its_row(kb):
    rows = kb.ids("devices")
    assert rows
    for rid in rows:
        assert peaks(kb.value(rid, "device_string")).chip == kb.value(rid, "chip"), rid


def test_each_resolved_peak_equals_the_kb_preferred_value(kb):
    for rid in kb.ids("devices"):
        chip = kb.value(rid, "chip")
        p = peaks(kb.value(rid, "device_string"))
        for dtype, field in DTYPES.items():
            q = kb.get(chip, field)
            if q is None:
                assert dtype not in p.dense and dtype not in p.unstated, (chip, dtype)
                continue
            density = kb.attributes(chip, field)["density"]
            got = (p.dense if density in ("", "dense") else p.unstated)[dtype]
            assert got.density == density
            assert got.value == pytest.approx(q.to("FLOP/s").magnitude, rel=1e-12), (chip, dtype)
            assert got.source == kb.provenance(chip, field)["source"]
            assert got.kind == kb.provenance(chip, field)["kind"]
        for key, unit in UNITS.items():
            q = kb.get(chip, key)
            got = getattr(p, key)
            if q is None:
                assert got is None, (chip, key)
            else:
                assert got.value == pytest.approx(q.to(unit).magnitude, rel=1e-12), (chip, key)
                assert got.source == kb.provenance(chip, key)["source"]


def test_skus_of_one_family_resolve_to_different_rows(kb):
    sxm = peaks("NVIDIA H100 80GB HBM3")
    pcie = peaks("NVIDIA H100 PCIe")
    assert (sxm.chip, pcie.chip) == ("h100", "h100-pcie")
    assert sxm.family == pcie.family == kb.table("chips").set_index("id").loc["h100", "family"]
    assert sxm.tdp.value == kb.value("h100", "tdp").to("W").magnitude
    assert pcie.tdp.value == kb.value("h100-pcie", "tdp").to("W").magnitude
    assert sxm.tdp.value != pcie.tdp.value


def test_an_ambiguous_string_is_refused_with_its_candidates(kb):
    want = sorted({kb.value(r, "chip") for r in kb.ids("devices")
                   if "H100" in kb.value(r, "device_string")})
    assert len(want) > 1
    with pytest.raises(AmbiguousDevice) as e:
        peaks("NVIDIA H100")
    assert e.value.candidates == want
    assert all(c in str(e.value) for c in want)


def test_an_unknown_string_is_refused():
    with pytest.raises(UnknownDevice):
        peaks("Frobnicator 9000")
    with pytest.raises(UnknownDevice):
        peaks("   ")


def test_a_longer_string_resolves_to_the_longest_known_string_inside_it():
    assert peaks("NVIDIA H100 80GB HBM3 MIG 3g.40gb").chip == "h100"
    assert peaks("TPU v5 lite").chip == "tpu-v5e"  # not 'TPU v5' (v5p) inside it
    assert peaks("tpu V5").chip == "tpu-v5p"  # case and spacing ignored


def test_a_chip_id_resolves_to_its_row():
    assert peaks("gb200").chip == "gb200"
    assert peaks("a100").chip == "a100"


def test_a_bare_family_name_is_ambiguous_between_its_skus(kb):
    want = sorted({kb.value(r, "chip") for r in kb.ids("devices")
                   if "A100" in kb.value(r, "device_string")})
    with pytest.raises(AmbiguousDevice) as e:
        peaks("A100")  # not the chip id 'a100': ids match exactly
    assert e.value.candidates == want == ["a100", "a100-pcie"]


def test_a_dtype_without_a_sourced_value_is_an_error_not_a_guess():
    p = peaks("NVIDIA H100 PCIe")
    assert "bf16" not in p.dense
    with pytest.raises(ValueError, match="no sourced dense bf16"):
        p.peak("bf16")
    with pytest.raises(ValueError, match="unknown dtype"):
        p.peak("fp7")


def test_the_module_is_callable_as_trnkb_peaks():
    import trnkb

    assert trnkb.peaks("TPU7x").chip == "tpu-v7"
    assert trnkb.peaks.peaks("TPU7x").chip == "tpu-v7"


def test_changed_specs_rebuild_the_table(good_specs, tmp_path, monkeypatch):
    monkeypatch.setenv("TRNKB_NO_CACHE", "1")
    (good_specs / "devices.yaml").write_text(
        "- id: dev-trn3-test\n  name: test\n  vendor: AWS\n"
        "  chip: {value: trainium3, source: aws-neuron-trn3, locator: x, kind: reported}\n"
        "  device_string: {value: 'Test Trainium3 Device', source: aws-neuron-trn3, locator: x,"
        " kind: reported}\n")
    assert peaks("test trainium3 device", good_specs).dense["bf16"].value == 671e12
    chips = good_specs / "chips.yaml"
    chips.write_text(chips.read_text().replace("671 TFLOPS", "700 TFLOPS"))
    assert peaks("test trainium3 device", good_specs).dense["bf16"].value == 700e12


def _cli(*args):
    return CliRunner().invoke(app, list(args))


def test_cli_json_gives_the_dtype_peak_with_its_source(kb):
    r = _cli("peaks", "NVIDIA H100 80GB HBM3", "--dtype", "bf16", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["chip"] == "h100"
    assert list(out["dense"]) == ["bf16"]
    assert out["dense"]["bf16"]["value"] == kb.value("h100", "dense_bf16").to("FLOP/s").magnitude
    assert out["dense"]["bf16"]["source"] == kb.provenance("h100", "dense_bf16")["source"]
    assert out["tdp"]["unit"] == "W"


def test_cli_refuses_an_ambiguous_string_in_one_line():
    r = subprocess.run([sys.executable, "-m", "trnkb", "peaks", "NVIDIA H100"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "ambiguous" in r.stderr and "h100-pcie" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_list_shows_every_device_string(kb):
    r = _cli("peaks", "--list", "--json")
    assert r.exit_code == 0
    got = {d["string"] for d in json.loads(r.stdout)}
    assert got == {kb.value(rid, "device_string") for rid in kb.ids("devices")}


def test_a_peak_its_source_leaves_dense_or_sparse_open_is_not_a_dense_peak(kb):
    assert kb.attributes("maia-200", "dense_fp4")["density"] == "unstated"
    p = peaks("maia-200")
    assert "fp4" not in p.dense and p.unstated["fp4"].source == "cloudnews-maia-200"
    with pytest.raises(ValueError, match="does not say dense or sparse"):
        p.peak("fp4")


def test_the_shipped_peak_table_matches_the_shipped_specs():
    # a stale table is never wrong, but its first lookup loads the whole knowledge base:
    # after editing specs/, run `python -m trnkb.kb.peaks_table` and commit the JSON
    from trnkb.spec.peaks_format import (
        FORMAT,
        read_snapshot,
        shipped_table,
        specs_digest,
        specs_dir,
    )

    table = read_snapshot(shipped_table(), FORMAT)
    assert table is not None and table["specs_digest"] == specs_digest(specs_dir()), (
        "trnkb/data/peaks.json is stale: run `python -m trnkb.kb.peaks_table`")
