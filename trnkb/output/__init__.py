"""Writing files: data exports (:mod:`~trnkb.output.export`) and the rules every output
directory follows (:mod:`~trnkb.output.outdir`, :mod:`~trnkb.output.exportfs`: atomic,
never overwriting what trnkb did not create).

May import: the models, :mod:`trnkb.audit` and :mod:`trnkb.views`.
"""
