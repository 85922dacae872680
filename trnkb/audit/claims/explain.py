"""A claim that explains itself: statement, locator, formula, inputs, tolerance, note, history.

:func:`explain` gathers, for one evaluated claim, everything a reader needs to check its
verdict by hand: the registry entry's ``compute`` expression written as a formula
(:func:`formula`), each input with its value, unit, source and locator, the tolerance and
why, the note, and the verdict recorded for each release. The claims page
(``claims.html#claim-<id>``), ``trnkb claims --id ID`` and the exported ``claims`` resource
read it.

An unverifiable claim's reason is regenerated from the current state when it is evaluated
(:func:`trnkb.audit.claims.capabilities.reason_now`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from trnkb.audit.claims.core import Claim
from trnkb.audit.claims.files import claim_files, read_claim_file
from trnkb.audit.claims.history import history_path, read_history
from trnkb.audit.claims.text import value_texts

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase


def raw_entries(kb: KnowledgeBase) -> dict[str, dict[str, Any]]:
    """Claim id -> its registry entry as written (compute, claimed, note...)."""
    out: dict[str, dict[str, Any]] = {}
    for p in claim_files(kb):
        if not p.exists():
            continue
        items, _, _ = read_claim_file(p)
        for item in items:
            if isinstance(item, dict) and "id" in item:
                out.setdefault(str(item["id"]), dict(item))
    return out


_INFIX = {"ratio": " / ", "product": " x ", "sum": " + ", "difference": " - "}


def formula(node: Any) -> str:
    """A ``compute`` expression as a formula: ``trainium3.dense_mxfp8 / trainium2.dense_fp8``,
    ``hbm-capacity(stacks=4, stack-height=12, die-density=24 Gbit)``."""
    if not isinstance(node, dict):
        return str(node)
    op = next((k for k in node if k not in ("source", "args", "output")), None)
    arg = node.get(op) if op else None
    if op in ("kb", "text"):
        src = f" [{node['source']}]" if node.get("source") else ""
        return f"{arg}{src}"
    if op in _INFIX and isinstance(arg, list):
        inner = _INFIX[op].join(formula(a) for a in arg)
        return f"({inner})" if len(arg) > 1 else inner
    if op == "calc":
        args = node.get("args") or {}
        body = ", ".join(f"{k}={formula(v)}" for k, v in args.items())
        out = f" -> {node['output']}" if node.get("output") else ""
        return f"{arg}({body}){out}"
    if op == "quantity":
        return str(arg)
    return f"{op}: " + json.dumps(arg, default=str, sort_keys=True)


def _history(kb: KnowledgeBase) -> list[tuple[str, dict[str, str]]]:
    try:
        return [(str(r["version"]), {str(k): str(v) for k, v in r["verdicts"].items()})
                for r in read_history(history_path(kb))]
    except (OSError, ValueError):
        return []


def explain(claim: Claim, kb: KnowledgeBase, raw: dict[str, dict[str, Any]] | None = None,
            history: list[tuple[str, dict[str, str]]] | None = None) -> dict[str, Any]:
    """Everything about one claim, JSON-ready (see the module docstring)."""
    raw = raw_entries(kb) if raw is None else raw
    history = _history(kb) if history is None else history
    entry = raw.get(claim.id, {})
    claimed, computed = value_texts(claim.claimed, claim.computed, claim.verdict)
    compute = entry.get("compute")
    inputs, calcs = [], []
    for i in claim.inputs:
        if "calc" in i:  # a calculator: its own formula joins the claim's
            calcs.append(f"{i['calc']}: {i.get('formula', '')}")
            continue
        name = i.get("kb") or i.get("calc") or i.get("topology") or i.get("dtype") or ""
        value = i.get("value")
        unit = i.get("unit") or ""
        inputs.append({"input": name if isinstance(name, str) else json.dumps(name, default=str),
                       "value": "" if value is None else f"{value:g} {unit}".strip()
                       if isinstance(value, (int, float)) else str(value),
                       "source": str(i.get("source") or ""),
                       "locator": str(i.get("locator") or "")})
    rel = claim.relative_difference
    return {
        "id": claim.id, "kind": claim.kind, "verdict": claim.verdict,
        "statement": claim.statement, "quantity": claim.quantity,
        "source": claim.source, "locator": claim.locator,
        "formula": (formula(compute) + "".join(f"; {c}" for c in calcs)
                    if compute is not None else ""),
        "compare": claim.compare or "", "claimed": claimed, "computed": computed,
        "relative_difference": None if rel is None else round(rel, 6),
        "tolerance": claim.tolerance, "why": claim.why,
        "reason": claim.reason,
        "note": claim.note, "inputs": inputs,
        "history": [{"release": v, "verdict": verdicts.get(claim.id, "(not yet a claim)")}
                    for v, verdicts in history] + [{"release": "current",
                                                     "verdict": claim.verdict}],
        "file": f"{claim.file}:{claim.line}",
    }


def explain_text(e: dict[str, Any]) -> str:
    """:func:`explain`'s record as plain text, one fact a line (``trnkb claims --id``)."""
    lines = [f"{e['id']} [{e['verdict']}] ({e['kind']}, {e['file']})",
             f"  statement: {e['statement']}",
             f"  source:    {e['source']} ({e['locator']})",
             f"  quantity:  {e['quantity']}"]
    if e["formula"]:
        lines.append(f"  formula:   {e['formula']}")
    for i in e["inputs"]:
        lines.append(f"  input:     {i['input']} = {i['value']} ({i['source']}"
                     + (f"; {i['locator']}" if i["locator"] else "") + ")")
    if e["claimed"] or e["computed"]:
        lines.append(f"  claimed:   {e['compare']} {e['claimed']}; computed {e['computed']}")
    if e["tolerance"] is not None:
        lines.append(f"  tolerance: {e['tolerance']:g} ({e['why']})")
    for key in ("reason", "note"):
        if e[key]:
            lines.append(f"  {key + ':':<10} {e[key]}")
    lines.append("  history:   " + ", ".join(f"{h['release']} {h['verdict']}"
                                           for h in e["history"]))
    return "\n".join(lines)
