"""Reading spec files and what a spec table is.

Holds the safe YAML reader with line numbers (:mod:`~trnkb.spec.specfile`), its parse
cache (:mod:`~trnkb.spec.cache`), the field dictionary and table schemas
(:mod:`~trnkb.spec.schema`, with :mod:`~trnkb.spec.fields`, :mod:`~trnkb.spec.hardware`
and :mod:`~trnkb.spec.systems`), the written preference rule (:mod:`~trnkb.spec.prefer`)
and value attributes (:mod:`~trnkb.spec.attributes`).

May import: :mod:`trnkb.units` only.
"""
