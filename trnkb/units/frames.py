"""pint-pandas bound to the project registry: import this module before making a
``pint[...]`` column (``pd.array(mags, dtype="pint[TB/s][Float64]")``) or using the
``.pint`` accessor on one.

It is separate from :mod:`trnkb.units` so that scalar quantities do not import pandas
(about 0.25 s of a cold start): :mod:`trnkb.kb.tables`, which builds the knowledge base's
wide tables, imports it, so every ``pint[...]`` column the package makes uses
:data:`trnkb.units.ureg`.

May import: :mod:`trnkb.units`.
"""

from __future__ import annotations

import pint_pandas

from trnkb.units import ureg

pint_pandas.PintType.ureg = ureg

