"""trnkb: a sourced, unit-checked knowledge base for AI-accelerator specifications.

The public names are imported on first use (PEP 562), so ``import trnkb`` and the
``trnkb --help`` command stay fast; ``trnkb.load()`` imports pandas and pint.
"""

from __future__ import annotations

import importlib

# not `from typing import ...`: typing costs more than the rest of `import trnkb` and
# `import trnkb.peaks` must stay light (bench/peaks_bench.py); mypy knows this spelling.
TYPE_CHECKING = False
if TYPE_CHECKING:  # what type checkers see; at run time the names load on first use
    from typing import Any

    from trnkb.kb import KnowledgeBase, load
    from trnkb.peaks import peaks
    from trnkb.spec.specfile import SpecError
    from trnkb.units import Q_, ureg

__all__ = ["KnowledgeBase", "SpecError", "Q_", "load", "peaks", "ureg"]
__version__ = "0.3.0"

_LAZY = {
    "KnowledgeBase": "trnkb.kb",
    "load": "trnkb.kb",
    "SpecError": "trnkb.spec.specfile",
    "Q_": "trnkb.units",
    "ureg": "trnkb.units",
}


def __getattr__(name: str) -> Any:
    if name == "peaks":  # the module is callable: trnkb.peaks(...) works either way
        return importlib.import_module("trnkb.peaks")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'trnkb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
