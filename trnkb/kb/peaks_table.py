"""Build the peak-rate table that :mod:`trnkb.peaks` reads (imports the knowledge base).

The table is a small JSON document: per chip row its labels and the *preferred* value of
every dense FLOP/s field, HBM bandwidth and capacity, TDP and clock, in SI units (FLOP/s,
B/s, B, W, Hz) with source, kind, locator, density and qualifier; and the device strings of
``specs/devices.yaml``. It is keyed by a digest of the spec files, so a table built from
other specs is never used for these.

Regenerate the shipped copy after changing the specs (the resolver stays correct without
it, only slower on first use)::

    python -m trnkb.kb.peaks_table
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trnkb.spec.peaks_format import FORMAT, UNITS, shipped_table, specs_digest

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase


def _entry(kb: KnowledgeBase, row: str, field: str) -> dict[str, Any] | None:
    q = kb.get(row, field)
    if q is None:
        return None
    prov = kb.provenance(row, field)
    out: dict[str, Any] = {"value": float(q.to(UNITS[field]).magnitude), "unit": UNITS[field]}
    for key in ("source", "kind", "locator", "density", "qualifier", "note"):
        if prov.get(key):
            out[key] = prov[key]
    return out


def build_table(specs: Path | None = None) -> dict[str, Any]:
    """The peak-rate table of the specs in ``specs`` (default: the shipped specs)."""
    from trnkb.kb import default_specs_dir, load

    root = Path(specs) if specs is not None else default_specs_dir()
    kb = load(root)
    chips: dict[str, Any] = {}
    wide = kb.table("chips")
    for rec in wide.to_dict("records"):
        row = str(rec["id"])
        labels = {k: str(rec[k]) for k in ("name", "vendor", "family", "status")
                  if isinstance(rec.get(k), str) and rec[k]}
        values = {f: e for f in UNITS if (e := _entry(kb, row, f)) is not None}
        chips[row] = {**labels, "values": values}
    devices = []
    if "devices" in kb.tables:
        for rec in kb.table("devices").to_dict("records"):
            rid = str(rec["id"])
            prov = kb.provenance(rid, "device_string")
            devices.append({
                "id": rid,
                "string": str(kb.value(rid, "device_string")),
                "chip": str(kb.value(rid, "chip")),
                "reported_by": str(kb.get(rid, "reported_by", "")),
                "source": prov["source"],
                "locator": prov["locator"],
            })
    return {"format": FORMAT, "specs_digest": specs_digest(root), "chips": chips,
            "devices": devices}


def write_table(path: Path, specs: Path | None = None) -> dict[str, Any]:
    """Build the table and write it to ``path`` (sorted keys, one stable text)."""
    table = build_table(specs)
    path.write_text(json.dumps(table, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return table


def main(argv: list[str] | None = None) -> None:
    """``python -m trnkb.kb.peaks_table [OUT]``: regenerate the shipped table."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else Path(str(shipped_table()))
    table = write_table(out)
    print(f"wrote {out}: {len(table['chips'])} chips, {len(table['devices'])} device strings")


if __name__ == "__main__":
    main()
