"""GEMM planning: orientation, block shape, K grouping, residency and buffers per core.

:func:`plan_gemm` scores candidate tilings by TensorE time against DMA time (the traffic
each one moves, at the DMA rate, less the small-transfer overhead) and, for small
problems, simulates the best few with :func:`~trnkb.engine.gemm_kernel.gemm_program`
and keeps the fastest (as kernels are tuned).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from trnkb.engine.buffers import ITEMSIZE
from trnkb.engine.gemm_kernel import gemm_program
from trnkb.engine.gemm_reference import MX_DTYPES
from trnkb.engine.model import NeuronCore
from trnkb.engine.timeline import Timeline

MAX_STEPS = 4000  # DMA groups per core the cost simulation issues at most (speed bound)
TUNE_STEPS = 128  # below this many K steps x 512-blocks, candidate plans are simulated


@dataclass(frozen=True)
class GemmPlan:
    """How a GEMM of (rows, k, cols) = (M', K, N') is tiled on one core (after orientation)."""

    rows: int
    k: int
    cols: int
    swapped: bool
    pack: int
    k_step: int
    tm: int
    tn: int
    group: int
    resident: bool
    bufs: int
    in_dtype: str
    stat_dtype: str
    mov_dtype: str
    quantize: str  # "" or which operand VectorE quantizes ("stationary"/"moving")
    array_cols: int = 128  # stationary free size limit (core.pe_cols)
    bank_cols: int = 512  # fp32 values per partition in one PSUM bank (core.tile_cols)
    block_store: bool = False  # one store DMA per output block instead of one per tile

    @property
    def tile_m(self) -> int:
        return min(self.array_cols, self.rows)

    @property
    def tile_n(self) -> int:
        return min(self.bank_cols, self.cols)

    @property
    def steps(self) -> int:
        return math.ceil(self.k / self.k_step)

    def describe(self) -> str:
        side = "C^T = B^T A^T (B stationary)" if self.swapped else "C = A B (A^T stationary)"
        return (f"{side}; "
                f"blocks of {self.tm}x{self.tn} tiles of {self.tile_m}x{self.tile_n}, "
                f"K step {self.k_step}, {self.group} step(s) per DMA, {self.bufs} buffers, "
                f"{'resident' if self.resident else 'streamed'} moving slab"
                + ("; one store per block" if self.block_store else "")
                + (f"; {self.quantize} operand quantized to MX on VectorE"
                   if self.quantize else ""))


def _tensor_cycles(core: NeuronCore, rows: int, cols: int, steps: int) -> float:
    """TensorE cycles of a rows x cols output over ``steps`` K steps (full tiles' cost)."""
    tm, tn = min(core.pe_cols, rows), min(core.tile_cols, cols)
    mm = max(min(core.matmul_min_cycles, tm), tn)
    return math.ceil(rows / core.pe_cols) * math.ceil(cols / core.tile_cols) * steps * mm


def plan_gemm(core: NeuronCore, m: int, k: int, n: int, dtype: str = "bf16",
              weight_dtype: str | None = None, quantize_activations: bool | None = None,
              orientation: str = "auto", max_groups: int | None = None,
              tune: bool = True) -> GemmPlan:
    """Choose orientation, block shape, K grouping and residency for C[m, n] = A[m, k] B[k, n].

    ``max_groups`` bounds the DMA groups the simulation issues (default ``MAX_STEPS``);
    ``tune`` simulates the best candidates of small problems and keeps the fastest. Plans
    are cached per core and arguments (as a kernel library keeps its tuned configurations).
    """
    for name, v in (("m", m), ("k", k), ("n", n)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}={v!r}: GEMM sizes must be integers >= 1")
    return _plan_gemm(core, int(m), int(k), int(n), dtype, weight_dtype,
                      bool(quantize_activations), orientation, max_groups, tune)


@lru_cache(maxsize=512)
def _plan_gemm(core: NeuronCore, m: int, k: int, n: int, dtype: str = "bf16",
              weight_dtype: str | None = None, quantize_activations: bool | None = None,
              orientation: str = "auto", max_groups: int | None = None,
              tune: bool = True) -> GemmPlan:
    budget = MAX_STEPS if max_groups is None else max_groups
    mx = dtype in MX_DTYPES
    pack = core.pack(dtype)  # raises for MX on Trainium2
    wdt = weight_dtype or dtype
    if wdt != dtype:
        if not (dtype == "mxfp8" and wdt == "mxfp4"):
            raise ValueError("weight_dtype='mxfp4' needs dtype='mxfp8' (W4A8); "
                             f"got dtype={dtype!r}, weight_dtype={weight_dtype!r}")
        core.pack(wdt)
    quantize_activations = bool(quantize_activations)
    if quantize_activations and mx and not core.quantize_mx_rate:
        raise ValueError(f"{core.chip} has no VectorE quantize_mx; pass quantize_activations=False")
    if core.pe_rows > core.partitions:
        raise ValueError(f"{core.name}: a {core.pe_rows}-row PE array needs {core.pe_rows} "
                         f"SBUF partitions per contraction pass; the core has {core.partitions}")
    k_step = core.pe_rows * pack  # contraction per pass: the array's rows x the packing
    steps = math.ceil(k / k_step)
    if orientation == "auto":
        swapped = _tensor_cycles(core, n, m, steps) < _tensor_cycles(core, m, n, steps)
    else:
        swapped = orientation == "swapped"
    rows, cols = (n, m) if swapped else (m, n)
    a_dt = dtype if mx else ("fp8" if dtype == "fp8" else "bf16")
    stat_dt, mov_dt = (wdt, a_dt) if swapped else (a_dt, wdt)
    quant = ""
    if mx and quantize_activations:
        quant = "moving" if swapped else "stationary"
    part = core.sbuf_capacity.to("B").magnitude / core.partitions
    assert core.dma_min_payload is not None, f"{core.name}: no dma_min_payload"
    payload = core.dma_min_payload.to("B").magnitude
    rate = core.dma_rate.to("B/s").magnitude
    t_tensor = _tensor_cycles(core, rows, cols, steps) / core.tensor_clock.to("Hz").magnitude
    cands: list[tuple[tuple[float, float], GemmPlan]] = []
    for tm, tn in ((4, 1), (2, 2), (1, 4), (2, 1), (1, 2), (1, 1)):
        tm_ = min(tm, math.ceil(rows / core.pe_cols))
        tn_ = min(tn, math.ceil(cols / core.tile_cols))
        mb, nb = tm_ * min(core.pe_cols, rows), tn_ * min(core.tile_cols, cols)
        s_bytes = ITEMSIZE[stat_dt] * (2 if quant == "stationary" else 1)
        m_bytes = ITEMSIZE[mov_dt] * (2 if quant == "moving" else 1)
        slab = steps * pack * nb * m_bytes  # per partition
        resident = slab <= part / 2 and rows > mb
        slabs = slab * ((2 if 2 * slab <= part / 4 else 1) if resident else 0)
        per_step = pack * (mb * s_bytes + (0 if resident else nb * m_bytes))
        avail = 0.75 * part - slabs - 4 * mb * nb * 2 / core.partitions  # less the C tiles
        # steps per DMA: enough for an overhead-free payload, and few enough groups for the
        # simulation budget, within two buffers of the SBUF left
        pay = pack * min(mb, rows) * s_bytes
        blocks = math.ceil(rows / mb) * math.ceil(cols / nb)
        group = max(math.ceil(payload / pay), math.ceil(blocks * steps / budget), 1)
        group = int(max(1, min(group, steps, avail / (2 * per_step))))
        traffic = (rows * k * s_bytes * math.ceil(cols / nb)
                   + k * cols * m_bytes * (1 if resident else math.ceil(rows / mb)))
        eff = min(1.0, pay * group / payload)
        t = max(t_tensor, traffic / rate / eff)
        key = (round(t, 12), traffic)
        # buffers per input stream: enough groups in flight to cover the DMA latency
        t_group = group * _tensor_cycles(core, mb, nb, 1) / core.tensor_clock.to("Hz").magnitude
        t_dma = group * pack * core.partitions * (mb * s_bytes + nb * m_bytes) / rate
        lat = core.dma_fixed_latency.to("s").magnitude
        bufs = math.ceil((lat + t_dma) / t_group) + 1
        bufs = int(max(2, min(bufs, 8, avail / (group * per_step))))
        plan = GemmPlan(rows, k, cols, swapped, pack, k_step, tm_, tn_, group, resident, bufs,
                        a_dt, stat_dt, mov_dt, quant, core.pe_cols, core.tile_cols)
        if plan not in [c for _, c in cands]:
            cands.append((key, plan))
    cands.sort(key=lambda c: c[0])
    big = steps * math.ceil(rows / core.tile_cols) * math.ceil(cols / core.tile_cols) > TUNE_STEPS
    if big:  # large problems: fewer, larger stores (one per block of tiles)
        return replace(cands[0][1], block_store=True)
    if not tune or len(cands) == 1:
        return cands[0][1]
    # small problems: simulate the candidates and keep the fastest (as kernels are tuned)
    timed: list[tuple[float, int, GemmPlan]] = []
    for _, plan in cands[:4]:
        for bufs in sorted({plan.bufs, 6, 8}):
            trial = replace(plan, bufs=bufs)
            tl = Timeline(core, execute=False)
            try:
                for _ in gemm_program(tl, trial):
                    pass
            except ValueError:  # that many buffers do not fit in SBUF
                continue
            timed.append((tl.makespan, trial.bufs, trial))
    return min(timed, key=lambda c: c[:2])[2]
