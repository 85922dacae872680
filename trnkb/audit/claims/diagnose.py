"""Why another tool's constant disagrees with the knowledge base, computed not written.

:func:`diagnose` tests, in order, the explanations that account for most hand-typed
hardware constants that are wrong, and returns the first that fits:

1. another source in the KB reports the tool's figure (a conflicting or older figure);
2. rounding: the KB value rounded to the (two or more) digits the tool wrote;
3. unit confusion (bytes only): off by a binary/decimal prefix factor (GiB vs GB:
   1.0737; MiB vs MB: 1.0486; KiB vs kB: 1.024);
4. a factor of two: for bandwidth, per direction vs both directions; for throughput,
   dense vs sparse (or the next precision);
5. the value of another field of the same row (a precision or field mix-up);
6. the value of the same field for another chip of the same vendor, possibly with a
   GiB/GB mix-up (a stale generation or a wrong row); for a rack, N x another chip's
   per-chip figure;
7. otherwise "unexplained", with the relative gap.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pint

from trnkb.audit.claims.core import Claim
from trnkb.units import Q_

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

MATCH = 0.005  # relative: two figures "match" within 0.5%
FACTORS = (  # (ratio tool / KB, label)
    (2**30 / 1e9, "unit confusion: GiB read as GB (or GB as GiB), a factor of 1.074"),
    (2**20 / 1e6, "unit confusion: MiB vs MB, a factor of 1.049"),
    (1.024, "unit confusion: KiB vs kB, a factor of 1.024"),
)


def _sig_digits(v: float) -> int:
    """Significant digits a figure was written with (1.6e12 -> 2, 3072 -> 4)."""
    from decimal import Decimal

    if v == 0 or not math.isfinite(v):
        return 0
    digits = Decimal(repr(float(v))).normalize().as_tuple().digits
    return len(digits)


def _close(a: float, b: float, tol: float = MATCH) -> bool:
    return b != 0 and abs(a / b - 1) <= tol


def _kb_row_field(c: Claim) -> tuple[str, str] | None:
    for i in c.inputs:
        if "kb" in i:
            row, _, field = str(i["kb"]).partition(".")
            return row, field
    return None


def _mag(q: Any, unit: Any) -> float | None:
    try:
        return float(q.to(unit).magnitude)
    except (pint.DimensionalityError, AttributeError):
        return None


def diagnose(c: Claim, kb: KnowledgeBase) -> str:
    """One line saying why ``c`` (a contradicted claim with a KB input) is off."""
    if c.verdict != "contradicted" or not isinstance(c.computed, pint.Quantity) \
            or not isinstance(c.claimed, pint.Quantity):
        return ""
    unit = c.computed.units
    x, k = c.claimed.to(unit).magnitude, c.computed.magnitude
    if k == 0:
        return "the KB value is zero"
    rf = _kb_row_field(c)
    if rf:
        row, field = rf
        vals = kb.values(row, field)
        for _, r in vals.iterrows():
            v = _mag(r["value"], unit)
            if v is not None and _close(x, v) and not _close(v, k):
                return f"matches {r['source']}'s figure for {row}.{field} (a conflicting source)"
    ratio = x / k
    n = _sig_digits(c.claimed.magnitude)
    kk = c.computed.to(c.claimed.units).magnitude
    if n >= 2 and float(f"{kk:.{n}g}") == float(f"{c.claimed.magnitude:.{n}g}"):
        return f"the KB value rounded to {n} significant digit(s) ({ratio - 1:+.1%})"
    if c.computed.check("[information]") or c.computed.check("[information]/[time]"):
        for f, label in FACTORS:
            if _close(ratio, f) or _close(ratio, 1 / f):
                return label
    if _close(ratio, 2) or _close(ratio, 0.5):
        rate = "bandwidth" in (rf[1] if rf else "") or c.computed.check("[information]/[time]")
        more = "twice" if ratio > 1 else "half"
        return (f"{more} the KB value: per direction vs both directions" if rate
                else f"{more} the KB value: dense vs sparse, or the next precision")
    if rf:
        row, field = rf
        same = kb.facts[(kb.facts["id"] == row) & (kb.facts["field"] != field)]
        for _, r in same.iterrows():
            v = _mag(r["value"], unit)
            if v is not None and _close(x, v):
                return f"the {r['field']} of {row} (a field or precision mix-up)"
        hit = _other_chip(kb, row, field, x, unit)
        if hit:
            return hit
        hit = _per_chip(kb, row, field, x, unit)
        if hit:
            return hit
    gap = ratio - 1
    return f"unexplained: {gap:+.1%} from the KB" if math.isfinite(gap) else "unexplained"


def _vendor(kb: KnowledgeBase, row: str) -> str:
    """The vendor label of a row (a chip's, or the chip's of a rack/HBM/package row)."""
    try:
        t = kb.table(kb.table_of(row))
    except (KeyError, ValueError):
        return ""
    r = t[t["id"] == row].iloc[0]
    if "vendor" in t.columns and isinstance(r["vendor"], str) and r["vendor"]:
        return r["vendor"]
    if "chip" in t.columns and isinstance(r["chip"], str) and r["chip"] != row:
        return _vendor(kb, r["chip"])
    return ""


def _scales(unit: Any) -> tuple[tuple[float, str], ...]:
    """(factor, words) pairs to try: as is, and read with a binary/decimal prefix mix-up."""
    out = [(1.0, "")]
    one = Q_(1, unit)
    if one.check("[information]") or one.check("[information]/[time]"):
        out += [(2**30 / 1e9, ", read as GiB"), (1e9 / 2**30, ", read as GB")]
    return tuple(out)


def _other_chip(kb: KnowledgeBase, row: str, field: str, x: float, unit: Any) -> str:
    """The same field of another row of the same vendor (a stale generation or wrong row)."""
    vendor = _vendor(kb, row)
    table = kb.facts[(kb.facts["field"] == field) & (kb.facts["id"] != row)]
    for f, words in _scales(unit):
        for _, r in table.iterrows():
            v = _mag(r["value"], unit)
            if v is not None and _close(x, v * f) and vendor and _vendor(kb, r["id"]) == vendor:
                return (f"the {field} of {r['id']}{words} (a stale generation or the wrong "
                        f"row)")
    return ""


PER_CHIP = {"domain_bf16": "dense_bf16", "domain_fp8": "dense_fp8", "domain_fp4": "dense_fp4",
            "domain_hbm_capacity": "hbm_capacity", "domain_hbm_bandwidth": "hbm_bandwidth"}


def _per_chip(kb: KnowledgeBase, row: str, field: str, x: float, unit: Any) -> str:
    """A rack figure that is N x another chip's per-chip figure (N = the rack's world size)."""
    if field not in PER_CHIP:
        return ""
    try:
        n = float(kb.value(row, "domain_size").magnitude)
    except (KeyError, AttributeError):
        return ""
    vendor = _vendor(kb, row)
    chips = kb.facts[kb.facts["field"] == PER_CHIP[field]]
    for f, words in _scales(unit):
        for _, r in chips.iterrows():
            v = _mag(r["value"] * n, unit)
            if v is not None and _close(x, v * f) and _vendor(kb, r["id"]) == vendor:
                return (f"{n:g} x the {PER_CHIP[field]} of {r['id']}{words} (another chip's "
                        f"figure scaled to the rack)")
    return ""


def diagnoses(claims: list[Claim], kb: KnowledgeBase) -> dict[str, str]:
    """Diagnosis of every contradicted claim that has a KB input, by claim id."""
    return {c.id: diagnose(c, kb) for c in claims if c.verdict == "contradicted"
            and _kb_row_field(c) is not None and isinstance(c.claimed, pint.Quantity)}


CATEGORIES = (  # (substring of a diagnosis, category), first match wins
    ("unit confusion", "unit confusion"),
    ("rounded", "rounding"),
    ("per direction vs both", "per direction vs both"),
    ("dense vs sparse", "dense vs sparse"),
    ("conflicting source", "a conflicting source"),
    ("stale generation", "another chip's value"),
    ("scaled to the rack", "another chip's value"),
    ("mix-up", "another field"),
)


def category(diagnosis: str) -> str:
    """The short category of a diagnosis line ("unit confusion", "rounding", ...)."""
    for needle, name in CATEGORIES:
        if needle in diagnosis:
            return name
    return "unexplained" if diagnosis else ""
