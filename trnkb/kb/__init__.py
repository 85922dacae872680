"""The knowledge base: ``specs/*.yaml`` -> facts (long) -> validated wide tables.

A spec value is written with its unit and provenance::

    hbm_capacity:
      - {value: 144 GB, source: semianalysis-trn3, locator: "HBM", kind: reported, preferred: true}
      - {value: 144 GiB, source: neuron-trn3-arch, locator: "Memory", kind: reported}

Modules, one idea each: :mod:`~trnkb.kb.values` (one field's values -> facts),
:mod:`~trnkb.kb.files` (spec files -> labels and facts), :mod:`~trnkb.kb.conflicts`
(where sources disagree), :mod:`~trnkb.kb.tables` (wide views),
:mod:`~trnkb.kb.base` (:class:`KnowledgeBase` and its index) and
:mod:`~trnkb.kb.loading` (the pipeline, :func:`load`).

May import: :mod:`trnkb.calc`, :mod:`trnkb.spec`, :mod:`trnkb.units`; never the judging
layer (loading does not evaluate claims).
"""

from trnkb.kb.base import KnowledgeBase
from trnkb.kb.loading import check_schemas, default_specs_dir, load

__all__ = ["KnowledgeBase", "check_schemas", "default_specs_dir", "load"]
