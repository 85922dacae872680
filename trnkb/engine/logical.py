"""GEMM and attention as a user runs them: on a logical NeuronCore, with the kernel's
padding and the fixed costs outside the instruction schedule.

* **Logical NeuronCores** (``lnc``): AWS groups ``lnc`` physical cores into one logical
  core (LNC=2 is the default on Trainium2 and Trainium3: 4 logical cores per chip, each
  two physical cores sharing one HBM bank). ``lnc=1`` runs the one-core kernel; ``lnc=2``
  shards the GEMM over the two physical cores with the bank's share of HBM bandwidth
  (:meth:`NeuronCore.lnc_hbm_share`). Results are per logical core; ``chip_figures``
  adds the per-chip figures (logical cores per chip x the logical core's).
* **Kernel tiling** (``tiling``): the kernel's padding rule (:mod:`trnkb.engine.tiling`);
  the executed shape is timed, the requested FLOPs are the useful work, and both are in
  ``params`` (``requested_flops``, ``executed_flops``).
* **Fixed costs** (``fixed_costs=True``): kernel launch, start/end and a cost per output
  block, from ``specs/cores.yaml`` (fitted on measured Trainium3 sweeps; see
  :mod:`trnkb.engine.calibration`), added to the makespan and listed in ``stalls``.

:func:`gemm_time` and :func:`attention_time` are the small API for other layers: a time
(a pint Quantity in s) for a shape.
"""

from __future__ import annotations

import math
from typing import Any

from trnkb.engine.attention import attention as _attention_core
from trnkb.engine.chip import chip_attention, chip_gemm
from trnkb.engine.gemm import gemm as _gemm_core
from trnkb.engine.gemm_kernel import Progress
from trnkb.engine.gemm_reference import Operand
from trnkb.engine.model import NeuronCore
from trnkb.engine.result import Result
from trnkb.engine.tiling import Tiling, named_tiling
from trnkb.units.qtypes import Quantity


def _tiling(tiling: Tiling | str | None) -> Tiling | None:
    return named_tiling(tiling) if isinstance(tiling, str) else tiling


def output_blocks(core: NeuronCore, m: int, n: int) -> int:
    """Output blocks of ``output_block_rows`` x ``output_block_cols`` covering C[m, n]."""
    if not core.output_block_rows or not core.output_block_cols:
        return 0
    return math.ceil(m / core.output_block_rows) * math.ceil(n / core.output_block_cols)


def _charge_fixed(res: Result, core: NeuronCore, blocks: int) -> None:
    for name, q in (("kernel launch", core.kernel_launch),
                    ("kernel start/end", core.kernel_start_end)):
        if q is not None:
            res.add_fixed(name, q.to("s").magnitude)
    if core.output_block_cost is not None and blocks:
        res.add_fixed("output blocks", blocks * core.output_block_cost.to("s").magnitude)


def _lnc_figures(res: Result, core: NeuronCore, lnc: int) -> None:
    per_chip = core.logical_cores_per_chip(lnc)
    share = core.lnc_hbm_share(lnc)
    cap = core.lnc_hbm_capacity(lnc)
    res.params["lnc"] = lnc
    f = res.chip_figures
    # a sharded run's figures are of its physical cores and its simulated span: keep the
    # HBM bytes, restate the rest per logical core (fixed costs and padding included)
    for key in ("cores", "makespan_s", "achieved_flops_per_s", "derived_chip_peak_flops_per_s",
                "published_chip_peak_flops_per_s", "utilization_of_derived_peak",
                "hbm_bandwidth_B_per_s", "hbm_utilization"):
        f.pop(key, None)
    f["hbm_bytes"] = res.bytes["hbm"].to("B").magnitude
    f.update({
        "lnc": lnc,
        "physical_cores_per_logical_core": lnc,
        "logical_cores_per_chip": per_chip,
        "hbm_bandwidth_per_logical_core_B_per_s": (share.to("B/s").magnitude
                                                   if share is not None else None),
        "hbm_capacity_per_logical_core_B": cap.to("B").magnitude if cap is not None else None,
        "seconds_per_logical_core": res.seconds.to("s").magnitude,
        "utilization_of_logical_core_peak": res.utilization,
        "chip_flops_per_s": per_chip * res.achieved.to("FLOPS").magnitude,
        "chip_peak_flops_per_s": core.peak_flops(res.dtype, core.cores_per_chip)
        .to("FLOPS").magnitude,
    })
    published = core.published_peak(res.dtype)
    if published is not None:  # the chip's rate (all logical cores) against the chip table
        res.chip_figures["utilization_of_published_peak"] = (
            res.chip_figures["chip_flops_per_s"] / published.to("FLOPS").magnitude)


def gemm(core: NeuronCore, m: int, k: int, n: int, dtype: str = "bf16", execute: bool = True,
         a: Operand = None, b: Operand = None, seed: int = 0, weight_dtype: str | None = None,
         quantize_activations: bool | None = None, orientation: str = "auto",
         progress: Progress = None, reference: bool = True, lnc: int = 1,
         tiling: Tiling | str | None = None, fixed_costs: bool = True) -> Result:
    """C[m, n] = A[m, k] @ B[k, n] on one logical NeuronCore of ``lnc`` physical cores.

    The arguments of :func:`trnkb.engine.gemm.gemm` (the one-core kernel) plus ``lnc``,
    ``tiling`` (a :class:`Tiling` or a published kernel's name: the padded shape is run)
    and ``fixed_costs`` (launch, start/end, per output block, from specs/cores.yaml).
    ``flops`` is the requested 2mnk; with a tiling that pads, ``execute`` is refused
    (the numerics are those of the requested shape; run without ``tiling``).
    """
    core.check_lnc(lnc)
    til = _tiling(tiling)
    me, ke, ne = til.executed(m, k, n) if til is not None else (m, k, n)
    padded = (me, ke, ne) != (m, k, n)
    if padded and execute:
        raise ValueError("execute=True with a tiling that pads: the numerics are those of "
                         "the requested shape; run it without tiling, or cost only")
    if lnc == 1:
        res = _gemm_core(core, me, ke, ne, dtype, execute, a, b, seed, weight_dtype,
                         quantize_activations, orientation, progress, reference)
    else:
        res = chip_gemm(core, me, ke, ne, dtype, execute=execute, a=a, b=b, seed=seed,
                        weight_dtype=weight_dtype, quantize_activations=quantize_activations,
                        lnc=lnc)
    requested, executed = 2.0 * m * n * k, 2.0 * me * ne * ke
    res.flops = res.flops * (requested / executed)
    res.params.update({"m": m, "k": k, "n": n, "requested_flops": requested,
                       "executed_flops": executed,
                       "executed_shape": {"m": me, "k": ke, "n": ne}})
    if til is not None:
        res.params["tiling"] = til.name or f"{til.m}x{til.n}x{til.k}"
        res.notes.append(til.describe() + (f"; executed {me}x{ke}x{ne} "
                                           f"({executed / requested:.3g}x the requested FLOPs)"
                                           if padded else ""))
    if fixed_costs:
        _charge_fixed(res, core, output_blocks(core, me, ne))
    _lnc_figures(res, core, lnc)
    return res


def attention(core: NeuronCore, seq_q: int, seq_kv: int, head_dim: int, heads: int = 1,
              causal: bool = False, dtype: str = "bf16", execute: bool = True,
              lnc: int = 1, fixed_costs: bool = True, **kw: Any) -> Result:
    """Flash-attention forward on one logical NeuronCore of ``lnc`` physical cores.

    ``lnc=1``: :func:`trnkb.engine.attention.attention` (numerics with ``execute``);
    ``lnc > 1``: cost only, sharded like :func:`chip_attention` over the logical core's
    physical cores with its HBM bank share. Fixed costs: launch and start/end.
    """
    core.check_lnc(lnc)
    if lnc == 1:
        res = _attention_core(core, seq_q, seq_kv, head_dim, heads, causal, dtype, execute,
                              **kw)
    else:
        if execute:
            raise ValueError("attention on a logical core of lnc > 1 is cost only "
                             "(execute=False)")
        res = chip_attention(core, seq_q, seq_kv, head_dim, heads, causal, cores=lnc,
                             heads_kv=kw.get("heads_kv"), exp_engine=kw.get("exp_engine"),
                             lnc=lnc)
    if fixed_costs:
        _charge_fixed(res, core, 0)
    _lnc_figures(res, core, lnc)
    return res


def gemm_time(core: NeuronCore, *, m: int, k: int, n: int, dtype: str = "bf16",
              lnc: int | None = None, tiling: Tiling | str | None = None,
              weight_dtype: str | None = None) -> Quantity:
    """Time (s) of C[m, n] = A[m, k] B[k, n] on one logical core (cost only, fixed costs
    included); ``lnc`` defaults to the core's ``lnc_default`` (2 on Trainium2/3)."""
    lnc = core.lnc_default if lnc is None else lnc
    res = gemm(core, m, k, n, dtype, execute=False, weight_dtype=weight_dtype, lnc=lnc,
               tiling=tiling)
    q: Quantity = res.seconds.to("s")
    return q


def attention_time(core: NeuronCore, *, seq_q: int, seq_kv: int, head_dim: int,
                   heads: int = 1, heads_kv: int | None = None, causal: bool = False,
                   lnc: int | None = None) -> Quantity:
    """Time (s) of flash-attention forward on one logical core (cost only, fixed costs
    included); decode is ``seq_q=1`` against a KV cache of ``seq_kv``."""
    lnc = core.lnc_default if lnc is None else lnc
    res = attention(core, seq_q, seq_kv, head_dim, heads, causal, execute=False, lnc=lnc,
                    heads_kv=heads_kv)
    q: Quantity = res.seconds.to("s")
    return q
