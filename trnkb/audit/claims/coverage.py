"""Seed coverage: for each seed document and section, the statements found and the
claims that test them, with their verdicts.

``specs/claims/coverage.yaml`` records, per seed file and section, how many statements a
reader going through the section end to end found (testable or not)::

    seeds:
      - file: 004_406711927e432c17.txt
        source: semianalysis-trn3
        sections:
          - {section: "Trainium3 Server Types and Specifications Overview", statements: 16}

A claim belongs to the section whose name its ``locator`` starts with (the longest such
name wins, case-insensitive). :func:`coverage_table` counts claims and verdicts per
section from the evaluated registry; :func:`coverage_markdown` renders it for the
claims page. Claims of a seed source whose locator matches no section are reported
under ``(no section)`` so a gap cannot hide.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from trnkb.audit.claims.core import VERDICTS, Claim
from trnkb.spec.specfile import SpecError, display_path, item_line, read_yaml, show

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

NO_SECTION = "(no section)"
COLUMNS = ["seed", "source", "section", "statements", "claims", *VERDICTS]


def coverage_path(kb: KnowledgeBase) -> Path:
    return Path(kb.path) / "claims" / "coverage.yaml"


def read_coverage(path: Path) -> list[dict[str, Any]]:
    """The seeds with their sections. Raises :class:`~trnkb.specfile.SpecError` (one
    ``file:line: field: problem`` per problem) on a malformed file; the file is read by
    the spec loader's rules (regular file only, no aliases, bounded size and depth)."""
    name = display_path(Path(path))
    data = read_yaml(Path(path))
    errors: list[str] = []
    seeds = data.get("seeds") if isinstance(data, dict) else None
    if not isinstance(seeds, list):
        raise SpecError([f"{name}:1: seeds: expected 'seeds:' with a list"])
    for i, s in enumerate(seeds):
        line = item_line(seeds, i)
        if not isinstance(s, dict):
            errors.append(f"{name}:{line}: (seed): expected a mapping, got {show(s)}")
            continue
        where = str(s.get("file", "(seed)"))[:80]
        for key in s:
            if key not in ("file", "source", "sections"):
                errors.append(f"{name}:{line}: {where}.{key}: unknown key")
        for key in ("file", "source"):
            if not isinstance(s.get(key), str) or not s[key]:
                errors.append(f"{name}:{line}: {where}.{key}: missing (text)")
        sections = s.get("sections")
        if not isinstance(sections, list):
            errors.append(f"{name}:{line}: {where}.sections: expected a list")
            continue
        for j, sec in enumerate(sections):
            sline = item_line(sections, j, line)
            if not isinstance(sec, dict) or not isinstance(sec.get("section"), str):
                errors.append(f"{name}:{sline}: {where}.sections: expected "
                              f"{{section: TEXT, statements: COUNT}}, got {show(sec)}")
                continue
            n = sec.get("statements")
            if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 100_000:
                errors.append(f"{name}:{sline}: {where}.statements: expected a count from 0 "
                              f"to 100000, got {show(n)}")
    if errors:
        raise SpecError(errors)
    return seeds


def section_of(locator: str, sections: list[str]) -> str:
    """The section a locator belongs to: the longest section name it starts with."""
    loc = locator.strip().lower()
    hits = [s for s in sections if loc.startswith(s.lower())]
    return max(hits, key=len) if hits else NO_SECTION


def coverage_table(claims: list[Claim], path: Path) -> pd.DataFrame:
    """One row per seed section: statements found, claims, and claims per verdict."""
    rows = []
    for seed in read_coverage(path):
        names = [s["section"] for s in seed["sections"]]
        mine = [c for c in claims if c.source == seed["source"]]
        by: dict[str, list[Claim]] = {n: [] for n in [*names, NO_SECTION]}
        for c in mine:
            by[section_of(c.locator, names)].append(c)
        found = {s["section"]: s["statements"] for s in seed["sections"]}
        for name in [*names, NO_SECTION]:
            cs = by[name]
            if name == NO_SECTION and not cs:
                continue
            rows.append({"seed": seed["file"], "source": seed["source"], "section": name,
                         "statements": found.get(name, 0), "claims": len(cs),
                         **{v: sum(c.verdict == v for c in cs) for v in VERDICTS}})
    return pd.DataFrame(rows, columns=COLUMNS)


def coverage_markdown(claims: list[Claim], path: Path) -> str:
    """The coverage table as Markdown: a summary per seed, then one table per seed."""
    df = coverage_table(claims, path)
    out = ["## Seed coverage", "",
           "Each seed document read section by section: the statements found (testable or "
           "not), the claims that test them, and their verdicts. A section with statements "
           "and no claims would show 0 claims.", "",
           "| seed | sections | statements | claims | " + " | ".join(VERDICTS) + " |",
           "|---|---:|---:|---:|" + "---:|" * len(VERDICTS)]
    for seed, g in df.groupby("seed", sort=False):
        out.append(f"| `{seed}` | {len(g)} | {g.statements.sum()} | {g.claims.sum()} | "
                   + " | ".join(str(g[v].sum()) for v in VERDICTS) + " |")
    for seed, g in df.groupby("seed", sort=False):
        out += ["", f"### `{seed}`", "",
                "| section | statements | claims | " + " | ".join(VERDICTS) + " |",
                "|---|---:|---:|" + "---:|" * len(VERDICTS)]
        for r in g.itertuples():
            out.append(f"| {r.section} | {r.statements} | {r.claims} | "
                       + " | ".join(str(getattr(r, v)) for v in VERDICTS) + " |")
    return "\n".join(out) + "\n"
