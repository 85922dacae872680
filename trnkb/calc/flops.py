"""Compute: peak FLOP/s from the array, the clock a peak implies, efficiency, run time.

One MAC is two FLOPs (a multiply and an add). ``macs_per_pe`` is how many MACs one
processing element does per cycle for a number format: 1 for BF16 on a NeuronCore, 2 for
FP8 "double row" on Trainium2, 4 for MXFP8/MXFP4 on Trainium3.
"""

from __future__ import annotations

from trnkb.calc._common import fraction, positive_count, quantity, result
from trnkb.calc.derivation import Result
from trnkb.units import Q_
from trnkb.units.qtypes import QuantityLike, Sources

FLOPS_PER_MAC = 2


def peak_flops(
    cores: QuantityLike,
    rows: QuantityLike,
    cols: QuantityLike,
    clock: QuantityLike,
    macs_per_pe: QuantityLike = 1,
    *,
    sources: Sources = None,
) -> Result:
    """Peak dense FLOP/s of a chip built from systolic arrays.

    ``peak = cores x rows x cols x macs_per_pe x 2 FLOP x clock``

    Parameters
    ----------
    cores, rows, cols, macs_per_pe : counts
        Matrix cores per chip, PE array shape, MACs per PE per cycle.
    clock : Quantity [1/time]
        Clock of the matrix engine (e.g. ``2.4 GHz``).

    Returns
    -------
    Result with value in FLOP/s (``TFLOPS``).
    """
    n = positive_count(cores, "cores")
    r = positive_count(rows, "rows")
    c = positive_count(cols, "cols")
    m = positive_count(macs_per_pe, "macs_per_pe")
    f = quantity(clock, "frequency", "clock")
    value = (n * r * c * m * FLOPS_PER_MAC * f * Q_(1, "FLOP")).to("TFLOPS")
    return result(
        "peak-flops",
        "cores x rows x cols x macs_per_pe x 2 FLOP x clock",
        value,
        {"cores": n, "rows": r, "cols": c, "macs_per_pe": m, "clock": f},
        sources,
        {"macs_per_cycle": (n * r * c * m).to("")},
    )


def implied_clock(
    peak: QuantityLike,
    cores: QuantityLike,
    rows: QuantityLike,
    cols: QuantityLike,
    macs_per_pe: QuantityLike = 1,
    *,
    sources: Sources = None,
) -> Result:
    """The clock a reported peak implies for a given array.

    ``clock = peak / (cores x rows x cols x macs_per_pe x 2 FLOP)``, in GHz.
    """
    p = quantity(peak, "compute_rate", "peak")
    n = positive_count(cores, "cores")
    r = positive_count(rows, "rows")
    c = positive_count(cols, "cols")
    m = positive_count(macs_per_pe, "macs_per_pe")
    value = (p / (n * r * c * m * FLOPS_PER_MAC * Q_(1, "FLOP"))).to("GHz")
    return result(
        "implied-clock",
        "peak / (cores x rows x cols x macs_per_pe x 2 FLOP)",
        value,
        {"peak": p, "cores": n, "rows": r, "cols": c, "macs_per_pe": m},
        sources,
    )


def flops_per_watt(flops: QuantityLike, power: QuantityLike, *, sources: Sources = None) -> Result:
    """Energy efficiency ``flops / power`` in TFLOPS per W (= TFLOP per joule)."""
    f = quantity(flops, "compute_rate", "flops")
    p = quantity(power, "power", "power")
    return result(
        "flops-per-watt", "flops / power", (f / p).to("TFLOPS/W"), {"flops": f, "power": p}, sources
    )


def time_for_flops(
    work: QuantityLike, rate: QuantityLike, mfu: QuantityLike, *, sources: Sources = None
) -> Result:
    """Wall time to do ``work`` FLOPs at ``rate`` peak FLOP/s and model FLOP utilization ``mfu``.

    ``time = work / (rate x mfu)``, in days.
    """
    w = quantity(work, "compute", "work")
    r = quantity(rate, "compute_rate", "rate")
    u = fraction(mfu, "mfu")
    return result(
        "time-for-flops",
        "work / (rate x mfu)",
        (w / (r * u)).to("day"),
        {"work": w, "rate": r, "mfu": u},
        sources,
    )


def training_flops(
    params: QuantityLike, tokens: QuantityLike, *, sources: Sources = None
) -> Result:
    """Training compute of a dense transformer, ``6 x N x D`` FLOP (forward + backward)."""
    n = positive_count(params, "params", integer=False)
    d = positive_count(tokens, "tokens", integer=False)
    value = (6 * n * d * Q_(1, "FLOP")).to("FLOP")
    return result(
        "training-flops", "6 x params x tokens FLOP", value, {"params": n, "tokens": d}, sources
    )
