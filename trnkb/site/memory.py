"""Like-for-like HBM capacity: the physical figure from the stack build beside the vendor's label.

Vendors write HBM capacity in two spellings for the same silicon. AWS, AMD and Google
write GiB (Trainium3: 144 GiB); NVIDIA writes GB (GB300: 288 GB) for the same kind of
stacks (12-high, 24 Gbit dies). Converting the GiB labels to decimal gigabytes gives
154.6 GB beside 288 GB, and a ratio of 0.537 where the hardware differs by exactly two:
four stacks against eight.

The physical basis removes the spelling: ``stacks x stack height x die density``, with the
DRAM maker's die density a binary quantity (a "24 Gbit" die holds 24 x 2**30 bits), so
the product is in GiB. Where the ``hbm`` table sources all three inputs for a chip,
:func:`physical_hbm` gives that figure and the vendor's label as written; comparisons
on the site use the physical figure. :data:`EXPLANATION` says it once, in words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trnkb.kb import KnowledgeBase
from trnkb.units import Q_, format_number

EXPLANATION = (
    "HBM capacity is compared on the physical basis: stacks x DRAM dies per stack x die "
    "density, from the KB's hbm table. DRAM die densities are binary (a 24 Gbit die holds "
    "24 x 2^30 bits), so the physical figure is in GiB. Vendors label the same silicon "
    "differently (AWS writes 144 GiB for Trainium3, NVIDIA 288 GB for GB300, both 12-high "
    "stacks of 24 Gbit dies); converting one label and not the other makes Trainium3 "
    "look like 0.537 of GB300 where the hardware is exactly half (4 stacks against 8). "
    "The vendor's label is kept beside the physical figure.")


@dataclass(frozen=True)
class PhysicalHBM:
    """One chip's HBM on the physical basis.

    ``gib`` is ``stacks * height * density_gbit / 8`` in GiB (None when the KB lacks any of
    the three); ``label`` is the vendor's capacity as the preferred source writes it
    (e.g. ``"144 GiB"``) and ``label_source`` its source id.
    """

    chip: str
    stacks: int | None
    height: int | None
    density_gbit: float | None
    gib: float | None
    label: str
    label_source: str
    build_sources: tuple[str, ...]

    @property
    def build(self) -> str:
        """``"4 x 12 x 24 Gbit"`` or empty when the build is not fully sourced."""
        if self.gib is None:
            return ""
        return f"{self.stacks} x {self.height} x {format_number(self.density_gbit)} Gbit"


def _label(kb: KnowledgeBase, chip: str) -> tuple[str, str]:
    f = kb.facts
    rows = f[(f["id"] == chip) & (f["field"] == "hbm_capacity") & f["preferred"].astype(bool)]
    if rows.empty:
        return "", ""
    r = rows.iloc[0]
    value: Any = Q_(str(r["value"]))  # as the source writes it: "144 gibibyte"
    return f"{format_number(float(value.magnitude))} {r['unit']}", str(r["source"])


def physical_hbm(kb: KnowledgeBase) -> dict[str, PhysicalHBM]:
    """Chip id -> :class:`PhysicalHBM` for every chip with an ``hbm`` row or a capacity."""
    out: dict[str, PhysicalHBM] = {}
    for row in kb.ids("hbm"):
        chip = kb.get(row, "chip")
        if chip is None:
            continue
        chip = str(chip)
        stacks, height, dens = (kb.get(row, f) for f in ("stacks", "stack_height", "die_density"))
        s = int(stacks.magnitude) if stacks is not None else None
        h = int(height.magnitude) if height is not None else None
        d = float(dens.to("Gbit").magnitude) if dens is not None else None
        gib = s * h * d / 8 if s is not None and h is not None and d is not None else None
        srcs = tuple(dict.fromkeys(str(kb.provenance(row, f)["source"])
                                   for f in ("stacks", "stack_height", "die_density")
                                   if kb.get(row, f) is not None))
        label, lsrc = _label(kb, chip)
        out[chip] = PhysicalHBM(chip, s, h, d, gib, label, lsrc, srcs)
    for chip in kb.ids("chips"):
        if chip not in out:
            label, lsrc = _label(kb, chip)
            if label:
                out[chip] = PhysicalHBM(chip, None, None, None, None, label, lsrc, ())
    return out


def hbm_ratio(kb: KnowledgeBase, a: str, b: str) -> float | None:
    """Physical HBM of chip ``a`` over chip ``b`` (None unless both builds are sourced)."""
    phys = physical_hbm(kb)
    pa, pb = phys.get(a), phys.get(b)
    if pa is None or pb is None or pa.gib is None or pb.gib is None:
        return None
    return pa.gib / pb.gib
