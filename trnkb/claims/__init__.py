"""The claims registry: published statements, other tools' constants and measured results,
each tested against the knowledge base with a verdict.

Modules: :mod:`~trnkb.claims.core` (the registry and its verdicts),
:mod:`~trnkb.claims.operations` (the expression language as a table of operations),
:mod:`~trnkb.claims.measured` (benchmark results against the workload layer),
:mod:`~trnkb.claims.history` (verdicts per release), :mod:`~trnkb.claims.coverage`
(which seed sections were checked), :mod:`~trnkb.claims.diagnose` (why another tool's
constant is off) and :mod:`~trnkb.claims.audit` (the live MLSys·im comparison).
"""

from trnkb.claims.core import (
    COMPARISONS,
    VERDICTS,
    Claim,
    ClaimError,
    evaluate_claims,
    validate_claims,
)
from trnkb.claims.files import claim_files, claim_sources, claims_path
from trnkb.claims.operations import OPERATIONS, evaluate
from trnkb.claims.table import claims_table

__all__ = ["COMPARISONS", "OPERATIONS", "VERDICTS", "Claim", "ClaimError", "claim_files",
           "claim_sources", "claims_path", "claims_table", "evaluate", "evaluate_claims",
           "validate_claims"]
