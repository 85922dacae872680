"""What changed between two versions of the knowledge base: values, sources, conflicts, verdicts.

A version is a spec directory or a git revision (a release tag or commit of a trnkb
checkout). A revision is read with *its own* code, so specs written in an older format
still load: :func:`snapshot` runs a small, version-tolerant script in a subprocess over a
``git archive`` of that revision. Quantities are compared in SI base units, so ``144 GB``
and ``144000 MB`` are the same value and a changed unit spelling is not a change.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Runs inside the version being read; uses only API every release has had
# (load, facts, sources, conflicts, claims.evaluate_claims).
_SNAPSHOT = r"""
import json, sys
import trnkb
kb = trnkb.load(sys.argv[1])
values = {}
for f in kb.facts.to_dict("records"):
    v = f["value"]
    # one source may give a field twice (a reported figure and one derived from its other
    # figures, or two qualified figures): kind and qualifier tell them apart, then order
    q = f.get("qualifier")
    tags = [f["source"]] + ["derived"] * (f["kind"] == "derived") + [q] * (isinstance(q, str)
                                                                          and q != "")
    key = f'{f["table"]}/{f["id"]}.{f["field"]} [{", ".join(tags)}]'
    n = 2
    while key in values:
        key, n = f'{key.rsplit(" #", 1)[0]} #{n}', n + 1
    try:
        base = v.to_base_units()
        values[key] = {"text": f"{v.magnitude!r} {v.units}".strip(), "base": float(base.magnitude),
                       "dim": str(base.dimensionality), "kind": f["kind"]}
    except AttributeError:
        values[key] = {"text": str(v), "base": None, "dim": "", "kind": f["kind"]}
sources = {s["id"]: {k: str(s[k]) for k in s if k != "id"} for s in kb.sources.to_dict("records")}
conflicts = sorted(f'{c["table"]}/{c["id"]}.{c["field"]}: ' + " vs ".join(sorted(
                       (c["preferred_source"], c["other_source"])))
                   for c in kb.conflicts.to_dict("records"))
verdicts = {}
try:
    from trnkb.audit.claims import evaluate_claims
    out = evaluate_claims(kb)
    claims = out[0] if isinstance(out, tuple) else out
    verdicts = {c.id: c.verdict for c in claims}
except Exception as e:  # an old release without claims, or claims that no longer evaluate
    verdicts = {"(claims)": f"not evaluated: {type(e).__name__}"}
json.dump({"values": values, "sources": sources, "conflicts": conflicts, "verdicts": verdicts},
          sys.stdout)
"""


class DiffError(ValueError):
    """A version that is neither a spec directory nor a git revision, or that fails to load."""


@dataclass(frozen=True)
class Change:
    """One difference: ``what`` (value, source, conflict, verdict), a key, old and new text."""

    what: str
    key: str
    old: str | None
    new: str | None

    @property
    def status(self) -> str:
        return "added" if self.old is None else "removed" if self.new is None else "changed"


@dataclass
class _Version:
    label: str
    specs: Path
    code: Path | None = None  # None: this process's trnkb
    tmp: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60)


def _resolve(spec: str, repo: Path) -> _Version:
    path = Path(spec)
    if path.is_dir():
        specs = path / "specs" if (path / "specs" / "sources.yaml").is_file() else path
        if not (specs / "sources.yaml").is_file():
            raise DiffError(f"{spec}: a directory without sources.yaml (not a spec directory)")
        return _Version(spec, specs)
    if path.exists():
        raise DiffError(f"{spec}: a file, not a spec directory or a git revision")
    rev = _git(["rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"], repo)
    if rev.returncode != 0:
        raise DiffError(f"{spec}: neither a spec directory nor a git revision of {repo}")
    tmp = tempfile.TemporaryDirectory(prefix="trnkb-diff-")
    archive = _git(["archive", "--format=tar", rev.stdout.decode().strip()], repo)
    if archive.returncode != 0:
        tmp.cleanup()
        raise DiffError(f"{spec}: git archive failed: {archive.stderr.decode().strip()}")
    tar_path = Path(tmp.name) / "rev.tar"
    tar_path.write_bytes(archive.stdout)
    root = Path(tmp.name) / "tree"
    with tarfile.open(tar_path) as tar:
        tar.extractall(root, filter="data")
    if not (root / "specs" / "sources.yaml").is_file() or not (root / "trnkb").is_dir():
        tmp.cleanup()
        raise DiffError(f"{spec}: that revision has no specs/ and trnkb/")
    return _Version(spec, root / "specs", root, tmp)


def snapshot(version: _Version) -> dict[str, Any]:
    """Values, sources, conflicts and verdicts of one version, as plain JSON data."""
    env = dict(os.environ)
    if version.code is not None:
        env["PYTHONPATH"] = str(version.code)
    else:
        env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    proc = subprocess.run(
        [sys.executable, "-c", _SNAPSHOT, str(version.specs)],
        env=env,
        capture_output=True,
        timeout=600,
        cwd=version.code or Path.cwd(),
    )
    if proc.returncode != 0:
        last = (proc.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        raise DiffError(f"{version.label}: does not load: {last[:300]}")
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def _same_value(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a["kind"] != b["kind"]:
        return False
    if a["base"] is None or b["base"] is None:
        return bool(a["text"] == b["text"])
    return bool(a["dim"] == b["dim"]) and math.isclose(
        a["base"], b["base"], rel_tol=1e-9, abs_tol=0
    )


def _value_text(v: dict[str, Any] | None) -> str | None:
    return None if v is None else f"{v['text']} ({v['kind']})"


def _compare(
    what: str,
    old: dict[str, Any],
    new: dict[str, Any],
    same: Callable[[Any, Any], bool],
    text: Callable[[Any], str | None],
) -> list[Change]:
    out = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a is not None and b is not None and same(a, b):
            continue
        out.append(Change(what, key, text(a), text(b)))
    return out


def diff(old: str, new: str, repo: str | Path = ".") -> list[Change]:
    """Every change from ``old`` to ``new`` (spec directories or git revisions of ``repo``)."""
    repo = Path(repo)
    versions = [_resolve(old, repo), _resolve(new, repo)]
    try:
        same = versions[0].code is None and versions[1].code is None and \
            versions[0].specs.resolve() == versions[1].specs.resolve()
        if same:  # one directory twice: load it once
            a = b = snapshot(versions[0])
        else:  # two loads in two processes, side by side
            with ThreadPoolExecutor(max_workers=2) as pool:
                a, b = pool.map(snapshot, versions)
    finally:
        for v in versions:
            if v.tmp is not None:
                v.tmp.cleanup()
    changes = _compare("value", a["values"], b["values"], _same_value, _value_text)

    def source_text(s: dict[str, str] | None) -> str | None:
        return (
            None if s is None else f"{s.get('title', '')} [{s.get('kind', '')}] {s.get('url', '')}"
        )

    changes += _compare("source", a["sources"], b["sources"], lambda x, y: x == y, source_text)
    changes += _compare(
        "conflict",
        dict.fromkeys(a["conflicts"], ""),
        dict.fromkeys(b["conflicts"], ""),
        lambda x, y: True,
        lambda c: None if c is None else "conflict",
    )
    changes += _compare("verdict", a["verdicts"], b["verdicts"], lambda x, y: x == y, lambda v: v)
    return changes
