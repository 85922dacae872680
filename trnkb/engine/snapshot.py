"""What the engine reads from the knowledge base, kept as a small snapshot (no pandas).

:class:`~trnkb.engine.model.NeuronCore` is built from one chip's NeuronCore row of
``specs/cores.yaml`` and a few fields of its ``specs/chips.yaml`` row. :func:`core_inputs`
gathers them from a loaded knowledge base as :class:`CoreInputs`: every value the two rows
have, as the knowledge base prefers it (pint quantities, or text).

The same inputs for every chip with a core are written to ``trnkb/data/cores.json``, each
quantity as its magnitude and unit, keyed by the digest of the spec files (like
``trnkb/data/peaks.json``). :func:`inputs` reads that file when it was built from the same
specs and rebuilds the same quantities, so ``trnkb engine gemm --no-execute`` never imports
pandas, pint-pandas or the spec loader; for other specs, or specs changed since the file
was written, it loads the knowledge base instead (correct, only slower).
``tests/engine/test_snapshot.py`` keeps the file equal to what the knowledge base gives.

Regenerate it after changing the specs::

    python -m trnkb.engine.snapshot
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pint

from trnkb.spec.peaks_format import read_snapshot, specs_digest, specs_dir
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

FORMAT = 1
Value = Quantity | str


@dataclass(frozen=True)
class CoreInputs:
    """One chip's NeuronCore row (``core``) and chip row (``chip_values``): field -> the
    preferred value (a pint quantity, counts dimensionless, or text); fields without a
    value are absent."""

    row: str  # the specs/cores.yaml id, e.g. neuroncore-v4
    name: str
    chip: str
    core: dict[str, Value]
    chip_values: dict[str, Value]


def core_inputs(kb: KnowledgeBase, chip: str) -> CoreInputs:
    """The inputs of ``chip``'s NeuronCore from a loaded knowledge base (KeyError naming the
    chips that have a core when it has none)."""
    from trnkb.spec.schema import TABLES

    cores = kb.table("cores")
    rows = [r for r in cores["id"] if kb.get(r, "chip") == chip]
    if not rows:
        known = sorted({str(kb.get(r, "chip")) for r in cores["id"]})
        raise KeyError(f"no NeuronCore row for chip {chip!r} in specs/cores.yaml; "
                       f"chips with a core: {', '.join(known) or 'none'}")
    rid = rows[0]

    def values(row: str, table: str) -> dict[str, Value]:
        got = {f: kb.get(row, f) for f in TABLES[table].names}
        return {f: v for f, v in got.items() if v is not None}

    return CoreInputs(row=rid, name=str(cores.set_index("id").loc[rid, "name"]), chip=chip,
                      core=values(rid, "cores"), chip_values=values(chip, "chips"))


def _encode(v: Value) -> Any:
    if isinstance(v, str):
        return v
    if not isinstance(v, pint.Quantity) or not isinstance(v.magnitude, int | float):
        raise TypeError(f"cannot keep {v!r} in the engine snapshot")
    return {"magnitude": v.magnitude, "unit": str(v.units)}


def _decode(v: Any) -> Value:
    return v if isinstance(v, str) else Q_(v["magnitude"], v["unit"])


def build(specs: Path | None = None) -> dict[str, Any]:
    """The snapshot document of the specs in ``specs`` (default: the shipped specs): every
    chip with a NeuronCore row, in the order of ``specs/cores.yaml``."""
    from trnkb.kb import load

    root = Path(specs) if specs is not None else specs_dir()
    kb = load(root)
    chips = dict.fromkeys(str(kb.get(r, "chip")) for r in kb.table("cores")["id"])
    cores = []
    for chip in chips:
        c = core_inputs(kb, chip)
        cores.append({"row": c.row, "name": c.name, "chip": c.chip,
                      "core": {f: _encode(v) for f, v in c.core.items()},
                      "chip_values": {f: _encode(v) for f, v in c.chip_values.items()}})
    return {"format": FORMAT, "specs_digest": specs_digest(root), "cores": cores}


def _shipped() -> Path:
    return Path(str(resources.files("trnkb").joinpath("data", "cores.json")))


def all_inputs(specs: Path | None = None) -> list[CoreInputs]:
    """Every chip's core inputs for ``specs`` (default: the shipped specs): from the shipped
    snapshot when it was built from these specs, else from the knowledge base."""
    root = Path(specs) if specs is not None else specs_dir()
    doc = read_snapshot(_shipped(), FORMAT)
    if doc is None or not root.is_dir() or doc["specs_digest"] != specs_digest(root):
        doc = build(root)  # raises SpecError for a directory that does not load
    return [CoreInputs(row=c["row"], name=c["name"], chip=c["chip"],
                       core={f: _decode(v) for f, v in c["core"].items()},
                       chip_values={f: _decode(v) for f, v in c["chip_values"].items()})
            for c in doc["cores"]]


def main(argv: list[str] | None = None) -> None:
    """``python -m trnkb.engine.snapshot [OUT]``: regenerate the shipped snapshot."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else _shipped()
    doc = build()
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}: {', '.join(c['chip'] for c in doc['cores'])}")


if __name__ == "__main__":
    main()
