"""The engine's snapshot of the specs (trnkb/data/cores.json) gives the cores the KB gives.

Expected values come from the knowledge base (``trnkb.load()`` and ``kb.get``), not from
the snapshot; the light path is checked in a fresh process by the modules it imports.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trnkb.engine import NeuronCore
from trnkb.engine.snapshot import FORMAT, _shipped, all_inputs, build
from trnkb.spec.peaks_format import read_snapshot, specs_digest, specs_dir

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "pint_pandas", "altair", "networkx", "yaml", "pandera", "trnkb.kb")


def test_the_shipped_snapshot_is_what_the_shipped_specs_give():
    # a stale snapshot is never used (the KB is loaded instead), but then `trnkb engine`
    # pays the whole load: after editing specs/, run `python -m trnkb.engine.snapshot`
    doc = read_snapshot(_shipped(), FORMAT)
    assert doc is not None and doc["specs_digest"] == specs_digest(specs_dir()), (
        "trnkb/data/cores.json is stale: run `python -m trnkb.engine.snapshot`")
    assert doc == json.loads(json.dumps(build())), (
        "trnkb/data/cores.json differs from the specs: run `python -m trnkb.engine.snapshot`")


def test_every_core_from_the_snapshot_equals_the_core_from_the_kb(kb):
    chips = list(dict.fromkeys(str(kb.get(r, "chip")) for r in kb.table("cores")["id"]))
    assert [c.chip for c in all_inputs()] == chips
    for chip in chips:
        core = NeuronCore.for_chip(chip)
        assert core == NeuronCore.from_kb(kb, chip)
        # quantities stay quantities with their units, equal to the KB's values
        assert core.tensor_clock == kb.get(core_row(kb, chip), "tensor_clock")
        assert str(core.tensor_clock.units) == "gigahertz"
        assert core.hbm_bandwidth == kb.get(chip, "hbm_bandwidth")


def core_row(kb, chip):
    return next(r for r in kb.table("cores")["id"] if kb.get(r, "chip") == chip)


def test_other_specs_are_read_from_their_own_kb(tmp_path):
    # a copy of the shipped specs with one core parameter changed: the snapshot's digest
    # no longer matches, so the value comes from the copy, not from the shipped file
    specs = tmp_path / "specs"
    shutil.copytree(specs_dir(), specs)
    path = specs / "cores.yaml"
    text = path.read_text()
    assert text.count("vector_lanes: {value: 128") == 1  # trainium1's, the first row
    path.write_text(text.replace("vector_lanes: {value: 128", "vector_lanes: {value: 64", 1))
    changed = [NeuronCore.for_chip(c.chip, specs) for c in all_inputs(specs)]
    assert [c.vector_lanes for c in changed][0] == 64
    assert NeuronCore.for_chip(changed[0].chip).vector_lanes == 128  # the shipped specs


def test_an_unknown_chip_is_refused():
    with pytest.raises(KeyError, match="h100"):
        NeuronCore.for_chip("h100")


def test_a_cost_only_gemm_imports_no_pandas_or_spec_loader():
    probe = ("import sys\nfrom trnkb.cli import main\n"
             "try:\n    main(['engine', 'gemm', '--m', '256', '--k', '256', '--n', '256', "
             "'--no-execute', '--json'])\nexcept SystemExit as e:\n    assert not e.code\n"
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}[:-1] "
             "or m.startswith('trnkb.kb')))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ}, check=True)
    assert json.loads(r.stdout.strip().splitlines()[-1].replace("'", '"')) == []
