"""The claims audit as tables."""

from __future__ import annotations

import pandas as pd

from trnkb.audit import claims
from trnkb.kb import KnowledgeBase


def claims_view(kb: KnowledgeBase) -> pd.DataFrame:
    """Every claim in ``claims.yaml`` evaluated against the KB (:mod:`trnkb.audit.claims`): id,
    source, verdict, compare, claimed, computed, relative_difference, statement, reason."""
    return claims.claims_table(claims.validate_claims(kb))


def verdict_counts(table: pd.DataFrame, by: str = "source") -> pd.DataFrame:
    """Claims per ``by`` value and verdict, long (``by, verdict, claims``), verdicts in
    the order of :data:`trnkb.audit.claims.VERDICTS`, groups by their number of claims."""
    counts = table.groupby([by, "verdict"]).size().rename("claims").reset_index()
    order = table[by].value_counts().index.tolist()
    counts = counts.assign(o=counts[by].map(order.index),
                           v=counts["verdict"].map(claims.VERDICTS.index))
    return counts.sort_values(["o", "v"]).drop(columns=["o", "v"]).reset_index(drop=True)
