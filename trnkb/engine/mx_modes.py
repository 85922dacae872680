"""MX scale modes compared on the same data: error, and how often the scales differ.

FLOOR (OCP MX v1.0) takes the block scale from the largest power of two at or below the
block's largest magnitude, so the largest values of a block can saturate (E4M3 holds
up to 1.75 x 2**8 where FLOOR maps the block maximum to [2**8, 2**9)). RCEIL (NVIDIA)
rounds ``amax / max_elem`` up to a power of two: nothing saturates, but whenever it picks
a larger scale than FLOOR every element of the block loses one bit of resolution. TRN3
(AWS ``nisa.quantize_mx``) always takes twice the FLOOR scale. See
:class:`trnkb.engine.numerics.ScaleMode`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from trnkb.engine.numerics import ScaleMode, quantize_mx
from trnkb.engine.numerics_formats import error_stats


def scale_mode_errors(x: np.ndarray, fmt: str,
                      modes: Iterable[str | ScaleMode] = ("floor", "rceil")
                      ) -> list[dict[str, Any]]:
    """Quantize ``x`` to ``fmt`` in each scale mode and compare with FLOOR.

    Returns one dict per mode: ``mode``, ``rel_rms`` / ``max_rel`` / ``max_abs``
    (:func:`~trnkb.engine.numerics.error_stats`, dimensionless / same unit as ``x``),
    ``blocks_differing`` (fraction of blocks whose scale differs from FLOOR's) and
    ``saturated`` (fraction of elements whose magnitude exceeds what their block can hold,
    ``max_elem * scale``, so the quantizer clamps them).
    """
    floor = quantize_mx(x, fmt, scale_mode="floor")
    x = np.asarray(x, dtype=np.float32)
    out = []
    for mode in modes:
        q = floor if ScaleMode(mode) is ScaleMode.FLOOR else quantize_mx(x, fmt, scale_mode=mode)
        limit = q.element.max * q.scale_values()[..., None]
        blocks = np.abs(x.astype(np.float64)).reshape(*q.scales.shape, q.block)
        out.append({
            "mode": ScaleMode(mode).value,
            **error_stats(x, q.dequantize()),
            "blocks_differing": float(np.mean(q.scales != floor.scales)),
            "saturated": float(np.mean(blocks > limit)),
        })
    return out
