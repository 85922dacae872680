"""The claims registry: published statements, other tools' constants and measured results,
each tested against the knowledge base with a verdict.

Modules: :mod:`~trnkb.audit.claims.core` (the registry and its verdicts),
:mod:`~trnkb.audit.claims.operations` (the expression language as a table of operations),
:mod:`~trnkb.audit.claims.measured` (benchmark results against the workload layer),
:mod:`~trnkb.audit.claims.history` (verdicts per release), :mod:`~trnkb.audit.claims.coverage`
(which seed sections were checked), :mod:`~trnkb.audit.claims.diagnose` (why another tool's
constant is off) and :mod:`~trnkb.audit.claims.audit` (the live MLSys·im comparison).
"""

from trnkb.audit.claims.core import COMPARISONS, VERDICTS, Claim, evaluate_claims, validate_claims
from trnkb.audit.claims.files import claim_files, claim_sources, claims_path
from trnkb.audit.claims.operations import ClaimError
from trnkb.audit.claims.table import claims_table
from trnkb.kb.expressions import OPERATIONS, evaluate

__all__ = ["COMPARISONS", "OPERATIONS", "VERDICTS", "Claim", "ClaimError", "claim_files",
           "claim_sources", "claims_path", "claims_table", "evaluate", "evaluate_claims",
           "validate_claims"]
