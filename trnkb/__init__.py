"""trnkb: a sourced, unit-checked knowledge base for AI-accelerator specifications."""

from trnkb.kb import KnowledgeBase, load
from trnkb.specfile import SpecError
from trnkb.units import Q_, ureg

__all__ = ["KnowledgeBase", "SpecError", "Q_", "load", "ureg"]
__version__ = "0.1.0"
