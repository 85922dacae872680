"""Tiled GEMM on a NeuronCore: any M, K, N >= 1, timed per instruction, computed in fp32.

Schedule (:func:`plan_gemm` picks the numbers, :func:`gemm_program` issues them):

* orientation: C = A B with A^T tiles stationary, or C^T = B^T A^T with B tiles
  stationary, whichever keeps TensorE busier (a decode GEMV puts the one-row A on the
  moving side, as the NKI performance guide advises: the short operand moves);
* C is computed in blocks of ``tm`` x ``tn`` tiles of up to 128 x 512 (one PSUM bank
  each), at most 4 banks per block so two blocks are in flight (8 banks); edge tiles
  are partial and charged what they cost (a matmul costs max(min(64, M), N) cycles
  whatever its K);
* K runs in steps of 128 x pack rows, ``group`` steps per DMA; the B slab of a block
  column stays resident in SBUF across block rows when it fits in half of SBUF (and
  is double-buffered when two fit in a quarter, so the next one loads early);
* MX: operands arrive quantized, or (``quantize_activations=True``) activations arrive
  in BF16 (twice the bytes) and VectorE quantizes them (``quantize_mx``, Trainium3);
* after the last K step each tile is evacuated from PSUM (VectorE and ScalarE in turn)
  and written to its own region of C (disjoint writes do not wait for each other).

Numerics (``execute=True``) follow the PSUM accumulation order: inputs rounded or
quantized as they sit in HBM, one float32 matmul per K step accumulated in float32, the
result rounded to BF16 (:func:`gemm_numerics`).

The plan lives in :mod:`trnkb.engine.gemm_plan`, the instruction stream in
:mod:`trnkb.engine.gemm_kernel`, the numerics in :mod:`trnkb.engine.gemm_reference`.
"""

from __future__ import annotations

from trnkb.engine.gemm_kernel import Progress, gemm_program
from trnkb.engine.gemm_plan import GemmPlan, plan_gemm
from trnkb.engine.gemm_reference import Operand, gemm_numerics, gemm_operands
from trnkb.engine.limits import ORIENTATIONS, choice, gemm_limits
from trnkb.engine.model import NeuronCore
from trnkb.engine.numerics_formats import error_stats
from trnkb.engine.result import Result
from trnkb.engine.timeline import Timeline


def gemm(core: NeuronCore, m: int, k: int, n: int, dtype: str = "bf16", execute: bool = True,
         a: Operand = None, b: Operand = None, seed: int = 0, weight_dtype: str | None = None,
         quantize_activations: bool | None = None, orientation: str = "auto",
         progress: Progress = None, reference: bool = True) -> Result:
    """C[m, n] = A[m, k] @ B[k, n] on one NeuronCore: timed, and computed when ``execute``.

    Parameters
    ----------
    m, k, n : any sizes >= 1.
    dtype : ``bf16``, ``fp8`` (per-tensor scaled E4M3; double row where the core has it,
        the BF16 rate on Trainium3), ``mxfp8`` or ``mxfp4`` (OCP MX, blocks of 32 along K;
        Trainium3 only).
    weight_dtype : ``"mxfp4"`` with ``dtype="mxfp8"`` gives W4A8.
    quantize_activations : MX only: A arrives in BF16 and VectorE quantizes it on chip
        (``quantize_mx``, Trainium3). Default False: both operands arrive in the MX format,
        as BF16 operands arrive in BF16 for the BF16 GEMM.
    orientation : ``auto``, ``normal`` or ``swapped`` (C^T = B^T A^T).
    a, b : inputs (default standard normal with ``seed``), or MXTensor (see :func:`gemm_operands`).
    reference : with ``execute``, also compute the float64 product and the error against
        it (``result.error``); False skips that check (it costs more than the GEMM).
        Operands are rounded or quantized one slab of K at a time (:class:`GemmOperands`):
        memory beyond the inputs is the output and one slab of each operand.

    FLOPs = 2 m n k. Peak = the FLOPs calculator's 2 x rows x cols x pack x clock.
    """
    gemm_limits(m, k, n, execute, seed, reference=reference,  # the CLI's limits (ValueError)
                own_operands=a is None and b is None)
    choice(orientation, ORIENTATIONS, "orientation")
    plan = plan_gemm(core, m, k, n, dtype, weight_dtype, quantize_activations, orientation)
    ops = None
    if execute:
        ops = gemm_operands(m, k, n, dtype, weight_dtype, a, b, seed, fast=not reference,
                            on_chip_quantize=bool(plan.quantize))
    tl = Timeline(core, execute=False)
    for _ in gemm_program(tl, plan, ops.scale if ops is not None else 1.0, progress):
        pass
    res = tl.result("gemm", dtype, 2.0 * m * n * k,
                    params={"m": m, "k": k, "n": n, "weight_dtype": weight_dtype})
    res.notes += gemm_notes(core, plan, dtype)
    if ops is not None:
        out = gemm_numerics(ops, plan.k_step)
        res.output = out
        if reference:
            res.error = error_stats(ops.reference(), out)
    return res


def gemm_notes(core: NeuronCore, plan: GemmPlan, dtype: str) -> list[str]:
    notes = [plan.describe() + f"; DMA at {core.dma_rate:.0f~P} per core"]
    if dtype == "fp8" and core.fp8_pack == 1:
        notes.append(fp8_note(core))
    return notes


def fp8_note(core: NeuronCore) -> str:
    """Why plain FP8 runs at the BF16 rate here while AWS's chip table lists a higher FP8 peak."""
    table = core.published_peak("fp8")
    derived = core.chip_peak_flops("fp8")
    text = (f"plain FP8 runs at the BF16 rate on {core.name}: {derived:,.0f~P} per chip derived "
            f"from the 2x128 non-MX input width of AWS's architecture guide")
    if table is not None and core.mx_pack:
        text += (f"; AWS's chip table lists {table:,.0f~P} FP8, equal to the MXFP8 rate "
                 f"({core.chip_peak_flops('mxfp8'):,.0f~P} derived): run mxfp8 to get it")
    return text
