"""Judging: everything that compares the models with what sources state or measured.

The claims registry (:mod:`~trnkb.audit.claims`), derived-vs-reported checks
(:mod:`~trnkb.audit.check`), workload validation and calibration
(:mod:`~trnkb.audit.workload_validation`, :mod:`~trnkb.audit.calibration`), the measured
ledger of published runs (:mod:`~trnkb.audit.ledger`, :mod:`~trnkb.audit.ledger_report`) and
the engine's validation page (:mod:`~trnkb.audit.engine_validation`).

May import: every model layer (units, spec, kb, calc, topology, engine, workload).
Imported by: views, output, site and the CLI only; never by a layer below.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

__all__ = ["validate"]


def validate(path: str | Path | None = None) -> tuple[KnowledgeBase, int]:
    """Load a spec directory with its table schemas, then evaluate its claims once.

    Data errors are reported before any claim is evaluated (loading refuses first).
    Returns the knowledge base and the number of claims evaluated; raises
    :class:`~trnkb.spec.specfile.SpecError` listing every problem.
    """
    from trnkb.audit.claims.core import validate_claims
    from trnkb.kb import load

    kb = load(path, schemas=True)
    if not (Path(kb.path) / "claims.yaml").exists():
        return kb, 0
    return kb, len(validate_claims(kb))
