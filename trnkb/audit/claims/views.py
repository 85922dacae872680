"""Views of the claims registry for the site's claims page and the notebooks.

:func:`page_sections` is what the claims page appends after its per-verdict tables: the
seed coverage table, the verdicts over time and the other tools' scorecard.
:func:`tools_table` and :func:`tools_scorecard` feed notebook 11.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from trnkb.audit.claims.core import VERDICTS, Claim, validate_claims
from trnkb.audit.claims.coverage import coverage_markdown, coverage_path
from trnkb.audit.claims.diagnose import category, diagnose
from trnkb.audit.claims.history import changes_markdown, history_path
from trnkb.audit.claims.text import value_texts

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

TOOL_NAMES = {
    "mlsysim": "MLSys·im",
    "scaling-book": "scaling book",
    "llm-viewer": "LLM-Viewer",
    "genz": "GenZ",
}


def tools_table(claims: list[Claim], kb: KnowledgeBase) -> pd.DataFrame:
    """One row per other-tool constant: tool, version, file, key, KB field, the tool's
    value and the KB's (both in the tool's unit, as :func:`~trnkb.audit.claims.text.value_texts`
    writes them), the signed relative gap, verdict and
    the computed diagnosis."""
    rows = []
    for c in claims:
        if c.kind != "tool":
            continue
        field = next((i["kb"] for i in c.inputs if "kb" in i), c.quantity)
        gap = None
        if c.computed is not None and c.claimed is not None and c.computed.magnitude:
            gap = c.claimed.to(c.computed.units).magnitude / c.computed.magnitude - 1
        name = c.tool.get("name")
        tool_value, kb_value = value_texts(c.claimed, c.computed, c.verdict)
        rows.append(
            {
                "tool": TOOL_NAMES.get(str(name), name),
                "version": str(c.tool.get("version", ""))[:12],
                "file": c.tool.get("file"),
                "key": c.tool.get("key"),
                "kb_field": field,
                "tool_value": tool_value,
                "kb_value": kb_value,
                "gap": gap,
                "verdict": c.verdict,
                "why": diagnose(c, kb) if c.verdict == "contradicted" else c.reason,
                "id": c.id,
            }
        )
    df = pd.DataFrame(rows)
    if not df.empty:
        df["cause"] = [
            category(w) if v == "contradicted" else ""
            for w, v in zip(df["why"], df["verdict"], strict=True)
        ]
    return df


def tools_scorecard(table: pd.DataFrame) -> pd.DataFrame:
    """Per tool: constants checked, per verdict, and the median and largest |gap|."""
    g = table.groupby("tool", sort=False)
    out = pd.DataFrame({"constants": g.size()})
    for v in VERDICTS:
        out[v] = g["verdict"].apply(lambda s, v=v: int((s == v).sum()))  # type: ignore[misc]
    out["median_abs_gap"] = g["gap"].apply(lambda s: s.dropna().abs().median())
    out["max_abs_gap"] = g["gap"].apply(lambda s: s.dropna().abs().max())
    return out.reset_index()


def tools_markdown(claims: list[Claim], kb: KnowledgeBase) -> str:
    t = tools_table(claims, kb)
    if t.empty:
        return ""
    sc = tools_scorecard(t)
    out = [
        "## Other tools' constants",
        "",
        "Hardware constants shipped by other tools (`specs/claims/tools.yaml`, each cited to "
        "its file and version or commit), checked against the KB within 2%. Notebook "
        "[11 other tools](notebooks/11-other-tools.ipynb) explains each disagreement.",
        "",
        "| tool | constants | " + " | ".join(VERDICTS) + " | median gap | largest gap |",
        "|---|---:|" + "---:|" * len(VERDICTS) + "---:|---:|",
    ]
    for r in sc.itertuples():
        out.append(
            f"| {r.tool} | {r.constants} | "
            + " | ".join(str(getattr(r, v)) for v in VERDICTS)
            + f" | {r.median_abs_gap:.1%} | {r.max_abs_gap:.1%} |"
        )
    return "\n".join(out) + "\n"


def page_sections(kb: KnowledgeBase, claims: list[Claim] | None = None) -> str:
    """Markdown sections for the claims page: seed coverage, verdicts over time, other
    tools' scorecard."""
    claims = validate_claims(kb) if claims is None else claims
    parts = [coverage_markdown(claims, coverage_path(kb))]
    if history_path(kb).exists():
        parts.append(changes_markdown(claims, history_path(kb)))
    parts.append(tools_markdown(claims, kb))
    return "\n".join(p for p in parts if p)


VERDICT_ORDER = ("contradicted", "unverifiable", "supported")


POSITIVE = {
    "==": "equals",
    "~": "is within {tol} of",
    "<": "is below",
    ">": "is above",
    "<=": "is at most",
    ">=": "is at least",
    "between": "lies between",
    "is": "is",
    "contains": "contains",
    "lacks": "does not contain",
    "in range": "is in",
}
NEGATIVE = {
    "==": "does not equal",
    "~": "is not within {tol} of",
    "<": "is not below",
    ">": "is not above",
    "<=": "is above",
    ">=": "is below",
    "between": "lies outside",
    "is": "is not",
    "contains": "does not contain",
    "lacks": "contains",
    "in range": "is outside",
}


def _reason(c: Claim) -> str:
    """Why the verdict: the reason given (unverifiable, measured) or the comparison made."""
    if c.verdict == "unverifiable" or (c.kind in ("measured", "tco") and c.reason):
        return c.reason
    words = (POSITIVE if c.verdict == "supported" else NEGATIVE).get(c.compare or "", "?")
    words = words.format(tol=f"{c.tolerance:.0%}" if c.tolerance else "")
    why = f" ({c.why})" if c.why else ""
    claimed, computed = value_texts(c.claimed, c.computed, c.verdict)
    if c.kind == "measured":
        return f"the measurement {claimed} {words} the predicted range {computed}"
    return f"the KB gives {computed}, which {words} the claimed {claimed}{why}"


def audit_table(claims: list[Claim]) -> pd.DataFrame:
    """Every claim, contradicted first, then unverifiable, then supported: verdict, kind,
    the statement in full, source, locator, claimed, computed, relative gap (None when
    undefined, never inf) and the reason for the verdict."""
    rows = []
    for c in claims:
        claimed, computed = value_texts(c.claimed, c.computed, c.verdict)
        rows.append(
            {
                "verdict": c.verdict,
                "kind": c.kind,
                "statement": c.statement,
                "source": c.source,
                "locator": c.locator,
                "claimed": claimed,
                "computed": computed,
                "gap": c.relative_difference,
                "reason": _reason(c),
                "id": c.id,
            }
        )
    df = pd.DataFrame(rows)
    df["_o"] = df["verdict"].map(VERDICT_ORDER.index)
    return df.sort_values("_o", kind="stable").drop(columns="_o").reset_index(drop=True)


def measured_table(claims: list[Claim]) -> pd.DataFrame:
    """Measured evidence: one row per run with system, model, chips, metric, the
    measurement, the workload layer's predicted range, the verdict and the gap or reason."""
    rows = []
    for c in claims:
        if c.kind != "measured":
            continue
        m = c.measured
        measured, predicted = value_texts(c.claimed, c.computed, c.verdict)
        rows.append(
            {
                "system": m.get("system"),
                "model": m.get("model"),
                "chips": m.get("chips"),
                "metric": m.get("metric"),
                "measured": measured,
                "predicted": predicted,
                "verdict": c.verdict,
                "reason": c.reason,
                "source": c.source,
                "id": c.id,
            }
        )
    return pd.DataFrame(rows)
