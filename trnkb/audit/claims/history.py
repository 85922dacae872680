"""Verdicts over time: each claim's verdict recorded per trnkb release.

``specs/claims/history.yaml`` holds one entry per release::

    releases:
      - version: 0.1.0
        commit: cc65f25...           # the commit the verdicts were computed from
        verdicts: {claim-id: supported, ...}

A verdict changes when a source, a KB value or a calculator changes.
:func:`changes_since` compares the current verdicts with a recorded release and lists
what moved (including claims added or removed since); :func:`record_release` adds or
replaces the entry for a release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from trnkb.audit.claims.core import VERDICTS, Claim
from trnkb.spec.specfile import SpecError, display_path, item_line, read_yaml, show

if TYPE_CHECKING:
    import pandas as pd

    from trnkb.kb import KnowledgeBase

ADDED, REMOVED = "(new)", "(removed)"


@dataclass(frozen=True)
class Change:
    """One claim whose verdict differs between a release and now."""

    id: str
    before: str   # a verdict, or "(new)" when the claim did not exist in the release
    after: str    # a verdict, or "(removed)" when the claim no longer exists
    statement: str = ""


def history_path(kb: KnowledgeBase) -> Path:
    return Path(kb.path) / "claims" / "history.yaml"


def read_history(path: Path) -> list[dict[str, Any]]:
    """The recorded releases, oldest first (none when the file does not exist). Raises
    :class:`~trnkb.specfile.SpecError` (``file:line: field: problem``) on a malformed
    file; the file is read by the spec loader's rules (regular file only, no aliases)."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return []
    name = display_path(path)
    data = read_yaml(path)
    rels = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(rels, list):
        raise SpecError([f"{name}:1: releases: expected 'releases:' with a list of releases"])
    errors: list[str] = []
    for i, r in enumerate(rels):
        line = item_line(rels, i)
        if not isinstance(r, dict) or not isinstance(r.get("version"), str) or not isinstance(
                r.get("verdicts"), dict):
            errors.append(f"{name}:{line}: release #{i + 1}: needs version (text) and verdicts "
                          f"(claim id -> verdict)")
            continue
        for cid, v in r["verdicts"].items():
            if v not in VERDICTS:
                errors.append(f"{name}:{line}: {r['version'][:40]}.{str(cid)[:80]}: unknown "
                              f"verdict {show(v)}; verdicts are {', '.join(VERDICTS)}")
    if errors:
        raise SpecError(errors)
    return rels


def releases(path: Path) -> list[str]:
    return [str(r["version"]) for r in read_history(path)]


def changes_since(version: str, claims: list[Claim], path: Path) -> list[Change]:
    """Claims whose verdict moved since ``version`` (added and removed claims included),
    in registry order, removed ones last. Raises KeyError for an unrecorded version."""
    rels = {str(r["version"]): r for r in read_history(path)}
    if str(version) not in rels:
        known = ", ".join(rels) or "none"
        raise KeyError(f"no recorded release {version!r} (recorded: {known})")
    old = {str(k): str(v) for k, v in rels[str(version)]["verdicts"].items()}
    out = [Change(c.id, old.get(c.id, ADDED), c.verdict, c.statement) for c in claims
           if old.get(c.id) != c.verdict]
    now = {c.id for c in claims}
    out += [Change(cid, v, REMOVED) for cid, v in old.items() if cid not in now]
    return out


def _plain(obj: Any) -> Any:
    """Plain dicts and lists (YAML dumps no line-keeping subclasses)."""
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


_VERSION = re.compile(r"\d{1,4}(\.\d{1,4}){1,3}((a|b|rc)\d{1,3})?")


def record_release(version: str, claims: list[Claim], path: Path,
                   commit: str | None = None) -> None:
    """Write the current verdicts as release ``version`` (replacing an existing entry).

    ``version`` is a release number such as ``0.2.0`` or ``1.0.0rc1``; anything else is a
    ``ValueError`` (the history is a file of the repository, not a scratch pad).
    """
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        shown = str(version)[:40] + ("..." if len(str(version)) > 40 else "")
        raise ValueError(f"--record: {shown!r} is not a release number (e.g. 0.2.0)")
    rels = [_plain(r) for r in read_history(path) if str(r["version"]) != str(version)]
    entry: dict[str, Any] = {"version": str(version)}
    if commit:
        entry["commit"] = commit
    entry["verdicts"] = {c.id: c.verdict for c in claims}
    rels.append(entry)
    header = ("# Verdict history per trnkb release (trnkb/audit/claims/history.py). Each release\n"
              "# maps claim id -> verdict as computed from that release's registry and KB.\n"
              "# Record one with `trnkb claims --record VERSION`.\n")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(path).with_suffix(".yaml.tmp")
    tmp.write_text(header + yaml.safe_dump({"releases": rels}, sort_keys=False, width=100))
    tmp.replace(path)


def history_table(claims: list[Claim], path: Path) -> pd.DataFrame:
    """A DataFrame: one row per claim, one column per recorded release plus ``current``
    (missing where the claim did not exist)."""
    import pandas as pd

    rels = read_history(path)
    ids = [c.id for c in claims]
    ids += [cid for r in rels for cid in r["verdicts"] if cid not in set(ids)]
    ids = list(dict.fromkeys(ids))
    cols = {str(r["version"]): [r["verdicts"].get(i) for i in ids] for r in rels}
    now = {c.id: c.verdict for c in claims}
    cols["current"] = [now.get(i) for i in ids]
    return pd.DataFrame(cols, index=pd.Index(ids, name="id"))


def changes_markdown(claims: list[Claim], path: Path) -> str:
    """Markdown for the claims page: per recorded release, the claims whose verdict moved
    since (statements in full)."""
    rels = read_history(path)
    out = ["## Verdicts over time", "",
           "Each claim's verdict is recorded per trnkb release "
           "(`specs/claims/history.yaml`); a verdict moves when a source, a KB value or a "
           "calculator changes. `trnkb claims --changed-since VERSION` lists the same.", ""]
    for r in reversed(rels):
        moved = changes_since(str(r["version"]), claims, path)
        kinds = {"(new)": sum(m.before == ADDED for m in moved),
                 "(removed)": sum(m.after == REMOVED for m in moved)}
        changed = [m for m in moved if m.before != ADDED and m.after != REMOVED]
        out += [f"### Since {r['version']}", "",
                f"{len(changed)} verdict(s) changed, {kinds['(new)']} claim(s) added, "
                f"{kinds['(removed)']} removed.", ""]
        if changed:
            out += ["| claim | before | now | statement |", "|---|---|---|---|"]
            out += [f"| `{m.id}` | {m.before} | {m.after} | {m.statement} |" for m in changed]
            out.append("")
    return "\n".join(out) + "\n"
