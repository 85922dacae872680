"""The claims as one table (the CLI's, the notebooks' and the site's view)."""

from __future__ import annotations

import pandas as pd

from trnkb.audit.claims.core import Claim
from trnkb.audit.claims.text import value_texts


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    """One row per claim: id, kind, source, verdict, claimed and computed (text with
    units, both in the claim's unit, by :func:`trnkb.audit.claims.text.value_texts`), the
    relative difference, the statement, the reason and the tolerance's why."""
    cols = [
        "id",
        "kind",
        "source",
        "locator",
        "verdict",
        "compare",
        "claimed",
        "computed",
        "relative_difference",
        "statement",
        "reason",
        "tolerance",
        "why",
    ]
    texts = [value_texts(c.claimed, c.computed, c.verdict) for c in claims]
    rows = [
        {
            "id": c.id,
            "kind": c.kind,
            "source": c.source,
            "locator": c.locator,
            "verdict": c.verdict,
            "compare": c.compare or "",
            "claimed": claimed,
            "computed": computed,
            "relative_difference": c.relative_difference,
            "statement": c.statement,
            "reason": c.reason,
            "tolerance": c.tolerance,
            "why": c.why,
        }
        for c, (claimed, computed) in zip(claims, texts, strict=True)
    ]
    return pd.DataFrame(rows, columns=cols)
