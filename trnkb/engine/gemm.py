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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from trnkb.engine import isa
from trnkb.engine.model import NeuronCore
from trnkb.engine.numerics import (
    ELEMENTS,
    MXTensor,
    decode_element,
    error_stats,
    quantize_mx,
    round_to,
)
from trnkb.engine.timeline import ITEMSIZE, Timeline

Progress = Callable[[int, int], None] | None
MX_BLOCK = 32
MAX_STEPS = 4000  # DMA groups per core the cost simulation issues at most (speed bound)
TUNE_STEPS = 128  # below this many K steps x 512-blocks, candidate plans are simulated
FP8_MAX = ELEMENTS["e4m3"].max  # OCP E4M3 largest finite value (448)
MX_DTYPES = ("mxfp8", "mxfp4")


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
        return (f"{'C^T = B^T A^T (B stationary)' if self.swapped else 'C = A B (A^T stationary)'}; "
                f"blocks of {self.tm}x{self.tn} tiles of {self.tile_m}x{self.tile_n}, "
                f"K step {self.k_step}, {self.group} step(s) per DMA, {self.bufs} buffers, "
                f"{'resident' if self.resident else 'streamed'} moving slab"
                + ("; one store per block" if self.block_store else "")
                + (f"; {self.quantize} operand quantized to MX on VectorE" if self.quantize else ""))


def _tensor_cycles(core, rows, cols, steps) -> float:
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
    k_step = core.partitions * pack
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
    payload = core.dma_min_payload.to("B").magnitude
    rate = core.dma_rate.to("B/s").magnitude
    t_tensor = _tensor_cycles(core, rows, cols, steps) / core.tensor_clock.to("Hz").magnitude
    cands = []
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
    timed = []
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


def gemm_program(tl: Timeline, plan: GemmPlan, fp8_scale: float = 1.0,
                 progress: Progress = None) -> Iterator[None]:
    """Issue the GEMM of ``plan`` on ``tl`` (cost only); yields after each DMA group."""
    core = tl.core
    P = core.partitions
    R, K, N, pack, K0, G = plan.rows, plan.k, plan.cols, plan.pack, plan.k_step, plan.group
    TM, TN = plan.tile_m, plan.tile_n
    Mb, Nb = plan.tm * TM, plan.tn * TN
    steps = plan.steps
    groups = math.ceil(steps / G)
    mx = plan.pack == 4 and plan.stat_dtype in MX_DTYPES
    q_st, q_mv = plan.quantize == "stationary", plan.quantize == "moving"
    S = tl.hbm("stationary^T", (K, R), "bf16" if q_st else plan.stat_dtype)
    Mv = tl.hbm("moving", (K, N), "bf16" if q_mv else plan.mov_dtype)
    C = tl.hbm("C^T" if plan.swapped else "C", (R, N), "bf16")

    def shape(kp, width):
        return (kp, pack, width) if pack > 1 else (kp, width)

    s_pool = tl.sbuf_pool("stationary tiles", shape(P, G * Mb), plan.stat_dtype, plan.bufs)
    # a resident slab is double-buffered when two fit in a quarter of SBUF: the next block
    # column's slab then loads in the DMA gaps of this one
    slab_bytes = groups * G * pack * Nb * ITEMSIZE[plan.mov_dtype]
    slabs = 2 if 2 * slab_bytes <= tl.sbuf_partition_bytes / 4 else 1
    m_bufs = slabs * groups if plan.resident else plan.bufs
    m_pool = tl.sbuf_pool("moving slab" if plan.resident else "moving tiles",
                          shape(P, G * Nb), plan.mov_dtype, m_bufs)
    if mx:
        ss_pool = tl.sbuf_pool("stationary scales", (G * K0 // MX_BLOCK, Mb), "e8m0", plan.bufs)
        ms_pool = tl.sbuf_pool("moving scales", (G * K0 // MX_BLOCK, Nb), "e8m0", m_bufs)
    if q_st or q_mv:
        raw_pool = tl.sbuf_pool("bf16 activations", shape(P, G * (Mb if q_st else Nb)), "bf16",
                                plan.bufs)
    if plan.block_store:
        out_pool = tl.sbuf_pool("C blocks", (TM, plan.tm * Nb), "bf16", 2)
    else:
        out_pool = tl.sbuf_pool("C tiles", (TM, TN), "bf16", 2 * plan.tm * plan.tn)
    acc_pool = tl.psum_pool("accumulators", (TM, TN), "fp32", 2 * plan.tm * plan.tn)

    def load(pool, src, k0, kk, c0, widths, quantize, scale_pool, scale_src):
        """DMA one group (rows k0:k0+kk, the column tiles ``widths`` from c0) into a new tile.

        Returns (tile, scale tile, region views): with one K step per group each column
        tile is its own DMA into its own region, so its matmuls start as soon as it lands.
        """
        t = pool.tile()
        total = sum(widths)
        sc = None
        if scale_pool is not None:
            sc = scale_pool.tile()
        parts = [(0, total, None)]
        item = ITEMSIZE["bf16" if quantize else pool.dtype] * pack
        if G == 1 and len(widths) > 1 and min(widths) * item >= tl.dma_min_payload:
            parts, o = [], 0
            for i, w in enumerate(widths):
                parts.append((o, w, i))
                o += w
        if scale_pool is not None and not quantize:  # scales first: every region needs them
            isa.dma(tl, sc, scale_src, nbytes=math.ceil(kk / MX_BLOCK) * total)
        regions = []
        raw = raw_pool.tile() if quantize else None
        for o, w, i in parts:
            idx = (slice(None),) * (2 if pack > 1 else 1) + (slice(o, o + w),)
            kp = min(P, math.ceil(kk / pack))
            dst = t if i is None else t.view(idx, shape(kp, w), key=("r", i), disjoint=True)
            nbytes = kk * w * ITEMSIZE[src.dtype]  # inputs are read-only: no region needed
            if quantize:
                rd = raw if i is None else raw.view(idx, shape(kp, w), key=("r", i), disjoint=True)
                isa.dma(tl, rd, src, nbytes)
                isa.quantize_mx(tl, dst, sc, rd)
            else:
                isa.dma(tl, dst, src, nbytes)
            regions.append(dst)
        return t, sc, (regions if len(parts) > 1 else None)

    SS = tl.hbm("stationary scales", (math.ceil(K / MX_BLOCK), R), "e8m0") if mx else None
    MS = tl.hbm("moving scales", (math.ceil(K / MX_BLOCK), N), "e8m0") if mx else None
    blocks = [(r0, c0) for c0 in range(0, N, Nb) for r0 in range(0, R, Mb)]
    slab: list = []
    evict = ("vector", "scalar")
    dt = "bf16" if not mx else ("mxfp4" if "mxfp4" in (plan.stat_dtype, plan.mov_dtype)
                                else "mxfp8")
    if plan.in_dtype == "fp8":
        dt = "fp8"

    def evacuate(accs, tiles_m, tiles_n, r0, c0):
        blk = out_pool.tile() if plan.block_store else None
        for (i, j), acc in accs.items():
            (oi, h), (oj, w) = tiles_m[i], tiles_n[j]
            if blk is not None:
                o = blk.view(None, (h, w), key=(i, j), disjoint=True)
                eng = evict[(i + j) % 2]
                a = acc if (h, w) == (TM, TN) else acc.view(None, (h, w), key="edge")
                if plan.in_dtype == "fp8":
                    isa.tensor_scalar(tl, o, a, "multiply", fp8_scale, engine=eng)
                else:
                    isa.copy(tl, o, a, engine=eng)
                continue
            ot = out_pool.tile()
            cost = {e: tl._free[e] + (1.0 if e == "scalar" and tl.core.scalar_lanes
                                      <= tl.core.partitions else 0.5) * TN / tl.clock_hz[e]
                    for e in evict}
            eng = min(evict, key=cost.get)  # the evacuation engine that finishes first
            a = acc if (h, w) == (TM, TN) else acc.view(None, (h, w), key="edge")
            o = ot if (h, w) == (TM, TN) else ot.view(None, (h, w), key="edge")
            if plan.in_dtype == "fp8":
                isa.tensor_scalar(tl, o, a, "multiply", fp8_scale, engine=eng)
            else:
                isa.copy(tl, o, a, engine=eng)
            rr, cc = r0 + oi, c0 + oj
            isa.dma(tl, C.view((slice(rr, rr + h), slice(cc, cc + w)), (h, w), key=(rr, cc)), o)
        if blk is not None:
            mb, nb = sum(h for _, h in tiles_m), sum(w for _, w in tiles_n)
            isa.dma(tl, C.view((slice(r0, r0 + mb), slice(c0, c0 + nb)), (mb, nb), key=(r0, c0)),
                    blk, nbytes=mb * nb * ITEMSIZE["bf16"])

    pending = None  # the previous block's evacuation, issued after this block's first group
    for bi, (r0, c0) in enumerate(blocks):
        mb, nb = min(Mb, R - r0), min(Nb, N - c0)
        tiles_m = [(i * TM, min(TM, mb - i * TM)) for i in range(math.ceil(mb / TM))]
        tiles_n = [(j * TN, min(TN, nb - j * TN)) for j in range(math.ceil(nb / TN))]
        wm, wn = [w for _, w in tiles_m], [w for _, w in tiles_n]
        accs = {(i, j): acc_pool.tile() for i in range(len(tiles_m)) for j in range(len(tiles_n))}
        if r0 == 0 or not plan.resident:
            slab = []
        for g in range(groups):
            k0 = g * G * K0
            kk = min(G * K0, K - k0)
            st, sts, st_regions = load(s_pool, S, k0, kk, r0, wm, q_st,
                                       ss_pool if mx else None, SS)
            if len(slab) <= g:
                slab.append(load(m_pool, Mv, k0, kk, c0, wn, q_mv, ms_pool if mx else None, MS))
            mv, mvs, mv_regions = slab[g]
            kp = min(P, math.ceil(min(K0, kk) / pack))
            st_parts = st_regions or [st] * len(wm)
            mv_parts = mv_regions or [mv] * len(wn)
            grid = [[accs[i, j] for j in range(len(wn))] for i in range(len(wm))]
            isa.matmul_block(tl, grid, st_parts, mv_parts, math.ceil(kk / K0), wm, wn, kp, dt,
                             (sts, mvs) if mx else (), accumulate=g > 0)
            if g == 0 and pending is not None:
                evacuate(*pending)
                pending = None
            yield
        pending = (accs, tiles_m, tiles_n, r0, c0)
        if progress is not None:
            progress(bi + 1, len(blocks))
    if pending is not None:
        evacuate(*pending)


# ---- numerics -------------------------------------------------------------------------
def _pad_k(x: np.ndarray, k_to: int) -> np.ndarray:
    """Zero-pad the last axis to ``k_to`` (MX blocks of 32; zeros change no block's amax)."""
    if x.shape[-1] == k_to:
        return x
    out = np.zeros((*x.shape[:-1], k_to), x.dtype)
    out[..., : x.shape[-1]] = x
    return out


@lru_cache(maxsize=16)
def _lut32(element) -> np.ndarray:
    """Every code of an element format (2**bits of them) decoded to float32 (exact)."""
    return decode_element(np.arange(2 ** element.bits, dtype=np.uint8),
                          element).astype(np.float32)


def mx_values(q: MXTensor) -> np.ndarray:
    """The values of an MX tensor in float32: element x 2**(scale - 127), NaN for scale 0xFF.

    Exact in float32 (a power-of-two multiple of an element) unless the scale exceeds
    2**120 or so and the product overflows float32's range, which no real tensor does.
    """
    vals = _lut32(q.element)[q.codes]
    s = q.scales.astype(np.int32)
    f = np.ldexp(np.float32(1.0), s - 127).astype(np.float32)
    f = np.where(s == 255, np.float32(np.nan), f)
    blocks = vals.reshape(*q.scales.shape, q.block)
    return (blocks * f[..., None]).reshape(q.codes.shape)


def gemm_inputs(m, k, n, dtype, weight_dtype, a, b, seed, fast: bool = False,
                on_chip_quantize: bool = False):
    """The inputs as float64 references and as the values TensorE multiplies.

    Returns ``(a64, b64, aq, bq, scale)``: bf16-rounded, fp8 per-tensor scaled
    (s = amax / 448, applied at PSUM evacuation) or MX-dequantized (blocks of 32 along K,
    K zero-padded to a multiple of 32). ``a`` (m, k) and ``b`` (k, n) may be given as
    :class:`MXTensor` (quantized along K; ``b`` then has shape (n, k)); their scale bytes
    are used as they are. ``fast`` keeps the reference inputs in float32 (no float64 copy).
    ``on_chip_quantize``: A is quantized by Trainium3's ``quantize_mx`` rule (a scale twice
    the OCP one; the Neuron docs state it for MXFP8), not the OCP FLOOR rule.
    """
    rng = np.random.default_rng(seed)
    mx = dtype in MX_DTYPES
    kp = math.ceil(k / MX_BLOCK) * MX_BLOCK
    a_mx, b_mx = isinstance(a, MXTensor), isinstance(b, MXTensor)
    if a_mx or b_mx:
        if not mx:
            raise ValueError("MXTensor inputs need an MX dtype")
    if a is None:
        a = rng.standard_normal((m, k))
    if b is None:
        b = rng.standard_normal((k, n))
    # float64 only for the reference; the engine's own inputs are rounded from float32
    a64 = a.dequantize()[:, :k] if a_mx else np.asarray(a, np.float32 if fast else np.float64)
    b64 = b.dequantize()[:, :k].T if b_mx else np.asarray(b, np.float32 if fast else np.float64)
    if a64.shape != (m, k) or b64.shape != (k, n):
        raise ValueError(f"a must be {(m, k)} and b {(k, n)}; got {a64.shape} and {b64.shape}")
    scale = 1.0
    if dtype == "bf16":
        aq, bq = round_to(a64, "bf16"), round_to(b64, "bf16")
    elif dtype == "fp8":
        sa = np.float32(max(np.max(np.abs(a64)), 1e-30) / FP8_MAX)
        sb = np.float32(max(np.max(np.abs(b64)), 1e-30) / FP8_MAX)
        aq, bq = round_to(a64 / sa, "fp8"), round_to(b64 / sb, "fp8")
        scale = float(np.float32(sa * sb))
    else:
        mode = "trn3" if on_chip_quantize and dtype == "mxfp8" else "floor"
        aq = mx_values(a if a_mx else quantize_mx(_pad_k(a64, kp), dtype, scale_mode=mode))
        bt = mx_values(b if b_mx else quantize_mx(_pad_k(np.ascontiguousarray(b64.T), kp),
                                                  weight_dtype or dtype))
        aq, bq = aq[:, :k], bt[:, :k].T
    return a64, b64, aq, bq, scale


NUMERIC_CHUNK = 4096  # K rows per float32 matmul of the numeric path


def gemm_numerics(aq: np.ndarray, bq: np.ndarray, k_step: int, scale: float = 1.0) -> np.ndarray:
    """C = round_bf16(scale x sum over K chunks of aq[:, chunk] @ bq[chunk, :]), in float32.

    Products of the rounded inputs accumulate in float32 as in PSUM: one float32 matmul
    per chunk of ``NUMERIC_CHUNK`` rows of K (a whole number of K steps), the chunks
    added in float32 in K order. The order of the float32 additions inside a chunk is
    the BLAS's; the hardware's order inside the PE array is not published, and any
    order stays within the K x 2**-24 accumulation bound the tests use.
    """
    aq = np.asarray(aq, np.float32)
    bq = np.asarray(bq, np.float32)
    k = aq.shape[1]
    chunk = max(k_step, NUMERIC_CHUNK // k_step * k_step)
    acc = aq[:, :chunk] @ bq[:chunk]
    for k0 in range(chunk, k, chunk):
        acc += aq[:, k0:k0 + chunk] @ bq[k0:k0 + chunk]
    if scale != 1.0:
        acc *= np.float32(scale)
    return round_to(acc, "bf16")


def gemm(core: NeuronCore, m: int, k: int, n: int, dtype: str = "bf16", execute: bool = True,
         a=None, b=None, seed: int = 0, weight_dtype: str | None = None,
         quantize_activations: bool | None = None, orientation: str = "auto",
         progress: Progress = None, reference: bool = True):
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
    a, b : inputs (default standard normal with ``seed``), or MXTensor (see :func:`gemm_inputs`).
    reference : with ``execute``, also compute the float64 product and the error against
        it (``result.error``); False skips that check (it costs more than the GEMM).

    FLOPs = 2 m n k. Peak = the FLOPs calculator's 2 x rows x cols x pack x clock.
    """
    plan = plan_gemm(core, m, k, n, dtype, weight_dtype, quantize_activations, orientation)
    a64 = b64 = aq = bq = None
    scale = 1.0
    if execute:
        a64, b64, aq, bq, scale = gemm_inputs(m, k, n, dtype, weight_dtype, a, b, seed,
                                              fast=not reference,
                                              on_chip_quantize=bool(plan.quantize))
    tl = Timeline(core, execute=False)
    for _ in gemm_program(tl, plan, scale, progress):
        pass
    res = tl.result("gemm", dtype, 2.0 * m * n * k,
                    params={"m": m, "k": k, "n": n, "weight_dtype": weight_dtype})
    res.notes += gemm_notes(core, plan, dtype)
    if execute:
        out = gemm_numerics(aq, bq, plan.k_step, scale)
        res.output = out
        if reference:
            res.error = error_stats(a64 @ b64, out)
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
