"""MLA decode (DeepSeek-style multi-head latent attention) with absorbed weights (cost only).

DeepSeek-V2/V3 cache one latent vector per token: ``kv_lora_rank`` (512) values plus a
shared RoPE key of ``rope_dim`` (64). Decoding with the up-projections absorbed, every
query head attends to that one latent cache (MQA with a key of ``rank + rope`` and a value
of ``rank``), so the cache is read once for all heads:

* absorb in: ``q_lat[h] = W_UK[h]^T q_nope[h]`` (``nope_dim`` -> ``rank`` per head);
* scores: ``s[h, j] = q_lat[h] . c[j] + q_rope[h] . k_rope[j]``, softmax over keys;
* ``o_lat[h] = sum_j p[h, j] c[j]`` (``rank`` values), then absorb out:
  ``o[h] = W_UV[h]^T o_lat[h]`` (``rank`` -> ``v_head_dim``).

The kernel keeps keys on partitions as :mod:`trnkb.engine.attention_decode` does, the
heads of one sequence stacked as query rows (``heads`` <= 128). Per tile of up to 1024
keys:
one DMA of the latent rows ``[keys, rank + rope]`` (read once: HBM bytes = the cache),
TensorE transposes of its ``ceil((rank + rope) / 128)`` column blocks to put the latent
dimension on partitions for the scores (ScalarE evacuates them), S^T = C Q^T in
``ceil((rank + rope) / 128)`` accumulating passes, the online softmax of the decode
kernel, and PV with the latent rows as the stationary operand in ``rank / 128`` blocks.
The absorbed weights ``W_UK`` and ``W_UV`` (``heads x nope_dim x rank`` each, bf16) are
loaded once per core and applied per head in ``rank / 128`` blocks for the core's batch.
Costs are the published per-instruction formulas the other kernels use. The latent's
transposes cost TensorE about as much as the scores themselves, so at DeepSeek-V3's 128
heads the kernel is TensorE-bound (a DMA transpose SBUF to SBUF, at half the DMA copy
rate on Trainium2, would move that work to the DMA queues; not modelled).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Iterator, Sequence

from trnkb.engine import isa
from trnkb.engine.attention_decode import softmax_step
from trnkb.engine.buffers import Tile
from trnkb.engine.chip import _chip_link, _merge, _run
from trnkb.engine.model import NeuronCore
from trnkb.engine.result import Result
from trnkb.engine.timeline import Timeline

WEIGHT_HEADS = 8  # heads of W_UK / W_UV per DMA (1 MiB each at DeepSeek-V3's shapes)


# DeepSeek-V3 (config.json of deepseek-ai/DeepSeek-V3): 128 heads, kv_lora_rank 512,
# qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128
MLA_DEFAULTS = {"heads": 128, "kv_lora_rank": 512, "rope_dim": 64, "nope_dim": 128,
                "v_head_dim": 128}


def mla_flops(batch: int, seq_kv: int, heads: int, kv_lora_rank: int = 512,
              rope_dim: int = 64, nope_dim: int = 128, v_head_dim: int = 128) -> float:
    """FLOPs of one MLA decode step (one query token per sequence), absorbed weights.

    2 x batch x heads x (nope x rank [absorb in] + seq_kv x (rank + rope) [scores]
    + seq_kv x rank [PV] + rank x v_head_dim [absorb out]).
    """
    per_head = (nope_dim * kv_lora_rank + seq_kv * (kv_lora_rank + rope_dim)
                + seq_kv * kv_lora_rank + kv_lora_rank * v_head_dim)
    return 2.0 * batch * heads * per_head


def mla_bytes(batch: int, seq_kv: int, heads: int, kv_lora_rank: int = 512,
              rope_dim: int = 64, nope_dim: int = 128, v_head_dim: int = 128,
              weight_copies: int = 1) -> int:
    """HBM bytes (bf16): the latent cache once, the absorbed weights ``weight_copies``
    times (once per core that runs a share of the batch), the queries and the outputs."""
    cache = batch * seq_kv * (kv_lora_rank + rope_dim) * 2
    weights = heads * kv_lora_rank * (nope_dim + v_head_dim) * 2 * weight_copies
    q_out = batch * heads * (nope_dim + rope_dim + v_head_dim) * 2
    return cache + weights + q_out


def mla_decode_program(tl: Timeline, work: Sequence[tuple[int, int, int]], heads: int,
                       kv_lora_rank: int = 512, rope_dim: int = 64, nope_dim: int = 128,
                       v_head_dim: int = 128, exp_engine: str = "vector"
                       ) -> Generator[None, None, None]:
    """Issue MLA decode for ``work`` = [(sequence, first key, end key), ...] on one core.

    Yields per key tile. The absorbed weights are loaded once; absorption runs for the
    core's distinct sequences (in before the first tile, out after the last).
    """
    core = tl.core
    P = core.partitions
    if not 1 <= heads <= P:
        raise ValueError(f"MLA decode: heads={heads} must be 1..{P} (one sequence's heads "
                         f"are the query rows of one tile)")
    width = kv_lora_rank + rope_dim
    kb, vb = math.ceil(width / P), math.ceil(kv_lora_rank / P)  # column blocks of K, V
    chunks = max(1, min(8, P // heads))
    Bk = chunks * P
    mi = core.instruction_min_cycles
    ls = math.ceil(P / core.ls_speedup)
    lat = tl.tensor_latency
    seqs = sorted({s for s, _, _ in work})
    n_seq = len(seqs)
    total_keys = max(hi for _, _, hi in work)
    cache = tl.hbm("latent cache", (n_seq * total_keys, width), "bf16")
    w_uk = tl.hbm("W_UK", (heads * nope_dim, kv_lora_rank), "bf16")
    w_uv = tl.hbm("W_UV", (heads * kv_lora_rank, v_head_dim), "bf16")
    q_in = tl.hbm("q (nope, rope)", (n_seq * heads, nope_dim + rope_dim), "bf16")
    out = tl.hbm("O", (n_seq * heads, v_head_dim), "bf16")
    # the weights stream through SBUF WEIGHT_HEADS heads per DMA (all 128 heads of both
    # would fill it; one head per DMA would pay the ~1.3 us DMA start latency per head)
    gh = min(WEIGHT_HEADS, heads)
    wkp = tl.sbuf_pool("W_UK[heads]", (nope_dim, gh, kv_lora_rank), "bf16", 3)
    wvp = tl.sbuf_pool("W_UV[heads]", (P, gh * vb, v_head_dim), "bf16", 3)
    qn = tl.sbuf_pool("q^T", (P, n_seq * heads * 2), "bf16").tile()
    isa.dma(tl, qn, q_in)
    # absorb in, per head: W_UK[h] blocks stationary (M = 128 of rank), q_nope^T moving
    # (N = the core's sequences): q_lat^T with the latent dimension on partitions
    ql = tl.sbuf_pool("q_lat^T", (P, kb, n_seq * heads), "bf16").tile()
    # PSUM (8 banks): latent transposes, S^T and S double-buffered (the next tile's are
    # issued before this tile's softmax), P^T and PV; absorption borrows the S^T banks
    ctps = tl.psum_pool("C^T block", (P, Bk), "bf16", 2)
    sts = tl.psum_pool("S^T", (P, chunks * heads), "fp32", 2)
    sps = tl.psum_pool("S", (chunks * heads, P), "fp32", 2)
    pts = tl.psum_pool("P^T", (P, chunks * heads), "bf16", 1)
    pvs = tl.psum_pool("PV", (P, vb * chunks * heads), "fp32", 1)
    for h in range(heads):
        if h % gh == 0:
            n = min(gh, heads - h)
            wk_t = wkp.tile()
            isa.dma(tl, wk_t, w_uk.view((slice(h * nope_dim, (h + n) * nope_dim), slice(None)),
                                        (n * nope_dim, kv_lora_rank), key=h))
        t = sts.tile()
        tl.issue("tensor", "matmul absorb in", vb * (max(min(core.matmul_min_cycles, P),
                                                         n_seq) + ls),
                 (wk_t, qn), (t,), latency=lat)
        tl.issue("scalar", "copy", max(mi, vb * n_seq), (t,), (ql,))
    lpool = tl.sbuf_pool("latent tiles", (P, chunks, width), "bf16", 4)
    ctsb = tl.sbuf_pool("C^T", (P, kb, Bk), "bf16", 2)
    psb = tl.sbuf_pool("P", (chunks * heads, P), "bf16", 2)
    ptsb = tl.sbuf_pool("P^T", (P, chunks * heads), "bf16", 2)
    stat = tl.sbuf_pool("row stats", (chunks * heads, 1), "fp32", 12)
    accp = tl.sbuf_pool("O_lat^T accumulator", (P, vb * chunks * heads), "fp32", 2)
    olat = tl.sbuf_pool("O_lat^T", (P, vb, n_seq * heads), "bf16").tile()
    def front(s: int, j0: int, hi: int) -> tuple[Tile, Tile, int]:
        """Load a latent tile, put its latent dimension on partitions (TensorE transposes,
        ScalarE evacuates), S^T = C Q^T and S = (S^T)^T: (S, latent tile, chunks)."""
        w = min(Bk, hi - j0)
        nch = math.ceil(w / P)
        lt = lpool.tile()
        r0 = seqs.index(s) * total_keys + j0
        isa.dma(tl, lt, cache.view((slice(r0, r0 + w), slice(None)), (w, width), key=(s, j0)))
        ct = ctsb.tile()
        for _b in range(kb):
            blk = ctps.tile()
            tl.issue("tensor", "transpose", nch * max(P, min(64, P)), (lt,), (blk,),
                     latency=lat)
            tl.issue("scalar", "copy", max(mi, nch * P), (blk,), (ct,))
        st = sts.tile()
        tl.issue("tensor", "matmul S^T", nch * kb * (max(min(core.matmul_min_cycles, P),
                                                         heads) + ls),
                 (ct, ql), (st,), latency=lat)
        sc = sps.tile()
        tl.issue("tensor", "transpose", max(P, min(64, nch * heads)), (st,), (sc,),
                 latency=lat)
        return sc, lt, nch

    for s, lo, hi in work:
        acc = accp.tile()
        m_old: Tile | None = None
        l_run: Tile | None = None
        nxt = front(s, lo, hi)
        for j0 in range(lo, hi, Bk):
            sc, lt, nch = nxt
            if j0 + Bk < hi:  # the next tile's TensorE work first: it does not wait on this
                nxt = front(s, j0 + Bk, hi)  # tile's softmax
            m_new, p, lj = softmax_step(tl, sc, m_old, stat, psb, P, exp_engine)
            pt = pts.tile()
            tl.issue("tensor", "transpose", max(P, min(64, nch * heads)), (p,), (pt,),
                     latency=lat)
            ptb = ptsb.tile()
            tl.issue("scalar", "copy", max(mi, nch * heads), (pt,), (ptb,))
            pv = pvs.tile()
            tl.issue("tensor", "matmul PV", nch * vb * (max(min(core.matmul_min_cycles, P),
                                                            heads) + ls),
                     (lt, ptb), (pv,), latency=lat)
            if m_old is None:
                tl.issue("vector", "copy", max(mi, vb * nch * heads), (pv,), (acc,))
                l_run = lj
            else:
                assert l_run is not None
                alpha, l_new = stat.tile(), stat.tile()
                tl.issue("scalar", "activation exp", mi, (m_old, m_new), (alpha,))
                tl.issue("vector", "tensor_scalar", mi, (l_run, alpha, lj), (l_new,))
                tl.issue("vector", "tensor_tensor multiply", max(mi, vb * nch * heads),
                         (acc, alpha), (acc,))
                tl.issue("vector", "tensor_tensor add", max(mi, vb * nch * heads),
                         (acc, pv), (acc,))
                l_run = l_new
            m_old = m_new
            yield
        assert l_run is not None
        tl.issue("vector", "segment merge and normalise", 4 * mi, (acc, l_run), (olat,))
    # absorb out, per head: W_UV[h] blocks stationary (K = 128 of rank, M = v_head_dim),
    # O_lat^T moving (N = the core's sequences), accumulated over the rank / 128 blocks
    ot = tl.sbuf_pool("O^T", (v_head_dim, n_seq * heads), "bf16").tile()
    for h in range(heads):
        if h % gh == 0:
            n = min(gh, heads - h)
            wv_t = wvp.tile()
            isa.dma(tl, wv_t, w_uv.view((slice(h * kv_lora_rank, (h + n) * kv_lora_rank),
                                         slice(None)), (n * kv_lora_rank, v_head_dim), key=h))
        t = sts.tile()
        tl.issue("tensor", "matmul absorb out",
                 vb * (max(min(core.matmul_min_cycles, v_head_dim), n_seq)
                       + math.ceil(v_head_dim / core.ls_speedup)),
                 (wv_t, olat), (t,), latency=lat)
        tl.issue("scalar", "copy", max(mi, n_seq), (t,), (ot,))
    isa.dma(tl, out, ot)


def mla_split(batch: int, seq_kv: int, cores: int) -> list[list[tuple[int, int, int]]]:
    """Per core: [(sequence, first key, end key), ...]. Whole sequences round-robin when
    the batch has at least as many sequences as cores; otherwise each sequence's keys are
    cut into ``cores // batch`` ranges (flash-decoding; the partial results' merge, a few
    vector operations, is not modelled), so every core reads a disjoint part of the cache."""
    if batch >= cores:
        return [[(s, 0, seq_kv) for s in range(c, batch, cores)] for c in range(cores)]
    per = cores // batch
    cuts = [(i * seq_kv // per, (i + 1) * seq_kv // per) for i in range(per)]
    return [[(s, lo, hi)] for s in range(batch) for lo, hi in cuts if hi > lo]


def mla_decode(core: NeuronCore, seq_kv: int, heads: int = 128, batch: int = 1,
               kv_lora_rank: int = 512, rope_dim: int = 64, nope_dim: int = 128,
               v_head_dim: int = 128, cores: int = 1, lnc: int | None = None,
               exp_engine: str | None = None) -> Result:
    """One MLA decode step (one new token per sequence) on ``cores`` NeuronCores (cost only).

    ``heads``: query heads on these cores (a tensor-parallel shard passes its share);
    DeepSeek-V3's shapes are the defaults. The result's ``flops`` are :func:`mla_flops`;
    ``chip_figures['hbm_bytes']`` counts the latent cache once and the absorbed weights
    once per core that runs a share of the batch (:func:`mla_bytes`).
    """
    for name, v in (("seq_kv", seq_kv), ("heads", heads), ("batch", batch),
                    ("kv_lora_rank", kv_lora_rank), ("nope_dim", nope_dim),
                    ("v_head_dim", v_head_dim)):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}={v!r} must be an integer >= 1")
    if not isinstance(rope_dim, int) or rope_dim < 0:
        raise ValueError(f"rope_dim={rope_dim!r} must be an integer >= 0")
    if not 1 <= cores <= core.cores_per_chip:
        raise ValueError(f"cores={cores}: {core.chip} has {core.cores_per_chip} NeuronCores")
    if exp_engine is None:
        exp_engine = "vector" if core.vector_exp_speedup else "scalar"
    hbm = _chip_link(core, lnc)
    tls: list[Timeline] = []
    progs: list[Iterator[object]] = []
    for c, work in enumerate(w for w in mla_split(batch, seq_kv, cores) if w):
        tl = Timeline(core, execute=False, hbm=hbm, core_id=c)
        tls.append(tl)
        progs.append(mla_decode_program(tl, work, heads, kv_lora_rank, rope_dim, nope_dim,
                                        v_head_dim, exp_engine))
    _run(tls, progs)
    dims = (kv_lora_rank, rope_dim, nope_dim, v_head_dim)
    res = _merge(core, tls, "mla_decode", "bf16", mla_flops(batch, seq_kv, heads, *dims), hbm,
                 {"seq_kv": seq_kv, "heads": heads, "batch": batch,
                  "kv_lora_rank": kv_lora_rank, "rope_dim": rope_dim, "nope_dim": nope_dim,
                  "v_head_dim": v_head_dim, "cores": len(tls), "exp_engine": exp_engine,
                  "latent_cache_bytes": batch * seq_kv * (kv_lora_rank + rope_dim) * 2,
                  "weight_bytes_per_core": heads * kv_lora_rank * (nope_dim + v_head_dim) * 2})
    secs = res.seconds.to("s").magnitude
    # the bytes' floor: the HBM link, or the cores' DMA engines where they are slower
    rate = min(hbm.rate, len(tls) * core.dma_bandwidth.to("B/s").magnitude)
    bound = res.chip_figures["hbm_bytes"] / rate
    res.notes.append(
        f"MLA decode on {len(tls)} core(s): latent cache "
        f"{res.params['latent_cache_bytes'] / 1e6:,.1f} MB read once, absorbed weights "
        f"{res.params['weight_bytes_per_core'] / 1e6:,.1f} MB per core; {secs * 1e6:,.1f} us "
        f"= {secs / bound:.2f}x the time to move its bytes at {rate / 1e12:.2f} TB/s "
        f"({bound * 1e6:,.1f} us; the HBM link or the cores' DMA engines, the slower)")
    return res
