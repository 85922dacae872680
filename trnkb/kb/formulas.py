"""The formula vocabulary of derived-value declarations (:mod:`trnkb.kb.derive`), as data.

Each formula names its inputs, writes them as an expression of the one evaluator
(:mod:`trnkb.kb.expressions`, which claims use too), and says which density or direction
its result has. No Python ``eval``: a declaration can only name one of these (or a
calculator of :mod:`trnkb.calc`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trnkb.units.qtypes import Quantity


@dataclass(frozen=True)
class Formula:
    """A formula of the vocabulary: its parameter names (None: two or more, any names),
    the expression it makes of the input quantities, the text shown in provenance, and the
    density or direction it produces (None: carried over from the inputs)."""

    params: tuple[str, ...] | None
    expression: Callable[[dict[str, Quantity]], Any]
    text: str
    density: str | None = None
    direction: str | None = None
    needs: tuple[str, str] | None = None  # (attribute, value) the single input must have


#: inputs whose name starts with this divide the result (``among_chips: self.domain_size``)
DIVISOR = "among"

FORMULAS: dict[str, Formula] = {
    "product": Formula(None, lambda x: {"product": list(x.values())}, "product of the inputs"),
    "copy": Formula(("of",), lambda x: x["of"], "the same figure"),
    "sum": Formula(None, lambda x: {"sum": list(x.values())}, "sum of the inputs"),
    "ratio": Formula(("numerator", "denominator"),
                     lambda x: {"ratio": [x["numerator"], x["denominator"]]},
                     "numerator / denominator"),
    "per-direction": Formula(("bidirectional",), lambda x: {"ratio": [x["bidirectional"], 2]},
                             "bidirectional / 2 (both directions added, halved)",
                             direction="per-direction", needs=("direction", "bidirectional")),
    "bidirectional": Formula(("per_direction",), lambda x: {"product": [x["per_direction"], 2]},
                             "per_direction x 2 (both directions added)",
                             direction="bidirectional", needs=("direction", "per-direction")),
    "dense-from-sparse": Formula(("sparse",), lambda x: {"ratio": [x["sparse"], 2]},
                                 "sparse / 2 (2:4 structured sparsity doubles the rate)",
                                 density="dense", needs=("density", "sparse")),
    "sparse-from-dense": Formula(("dense",), lambda x: {"product": [x["dense"], 2]},
                                 "dense x 2 (2:4 structured sparsity doubles the rate)",
                                 density="sparse", needs=("density", "dense")),
}
