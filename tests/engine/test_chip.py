"""The whole chip: 8 cores in one simulation, sharing HBM; chip figures; the layer time.

Figures: Trainium2 HBM 2.9 TB/s and Trainium3 4.9 TB/s (specs/chips.yaml); one core's
DMA engines 16 x 23 B/ns (Trainium2) and 16 x 33 B/ns (Trainium3).
"""

from __future__ import annotations

import numpy as np
import pytest

from trnkb.engine import chip_attention, chip_gemm, gemm, layer_time


def test_chip_gemm_reports_chip_figures_against_both_peaks(kb, trn3):
    r = chip_gemm(trn3, 4096, 2048, 4096, cores=8)
    f = r.chip_figures
    assert f["cores"] == 8
    assert f["derived_chip_peak_flops_per_s"] == pytest.approx(8 * 2 * 128 * 128 * 2.4e9)
    assert f["published_chip_peak_flops_per_s"] == pytest.approx(
        kb.get("trainium3", "dense_bf16").to("FLOPS").magnitude)
    assert 0 < f["utilization_of_derived_peak"] <= 1
    assert 0 < f["hbm_utilization"] <= 1
    # 8 cores beat one, but by at most 8x
    one = gemm(trn3, 4096, 2048, 4096, execute=False).seconds
    assert one / 8 <= r.seconds < one


def test_cores_contend_for_hbm_a_streaming_gemv_is_bound_by_the_chip_link(trn2):
    # GEMV 1 x 8192 x 16384 reads 256 MiB of B: on Trainium2, 8 x 368 GB/s of DMA exceeds
    # the 2.9 TB/s of HBM, so the chip cannot go faster than bytes / 2.9 TB/s
    r = chip_gemm(trn2, 1, 8192, 16384, cores=8)
    assert r.seconds.to("s").magnitude >= 8192 * 16384 * 2 / 2.9e12
    assert r.chip_figures["hbm_utilization"] <= 1 + 1e-9


def test_chip_gemm_numerics_are_the_one_core_numerics(trn3):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((300, 256)), rng.standard_normal((256, 200))
    one = gemm(trn3, 300, 256, 200, a=a, b=b).output
    chip = chip_gemm(trn3, 300, 256, 200, cores=8, execute=True, a=a, b=b).output
    assert np.array_equal(one, chip)


def test_chip_attention_shards_heads_or_query_tiles(trn3):
    by_heads = chip_attention(trn3, 1024, 1024, 128, heads=8, cores=8)
    by_seq = chip_attention(trn3, 1024, 1024, 128, heads=2, cores=8, causal=True)
    assert by_heads.params["split"] == "heads" and by_seq.params["split"] == "query tiles"
    assert set(by_heads.records["core"].tolist()) == set(range(8))
    for r in (by_heads, by_seq):
        assert 0 < r.utilization <= 1


def test_more_cores_than_the_chip_has_are_refused(trn3):
    with pytest.raises(ValueError, match="has 8 NeuronCores"):
        chip_gemm(trn3, 128, 128, 128, cores=9)


def test_layer_time_adds_its_parts_and_reports_mfu(trn3):
    r = layer_time(trn3, 1024, 2048, 16, 4, 128, 8192, cores=8)
    assert r.seconds.to("s").magnitude == pytest.approx(
        sum(p["seconds"] for p in r.parts.values()))
    # FLOPs: 2 x tokens x (q, k, v, o and MLP weights) + attention
    t, h = 1024, 2048
    gemm_flops = 2 * t * (h * (16 + 8) * 128 + 16 * 128 * h + h * 2 * 8192 + 8192 * h)
    att = 4 * 128 * 16 * sum(min(1024, i + 1) for i in range(1024))
    assert r.flops.to("FLOP").magnitude == pytest.approx(gemm_flops + att)
    assert 0 < r.mfu <= 1


def test_a_wait_for_another_cores_hbm_transfer_is_labelled_hbm_on_the_critical_path(trn2):
    # Two cores each move N = 1 MiB over one shared HBM link of B = 100 GB/s; each core's
    # own DMA link runs at 16 x 23 B/ns = 368 GB/s (specs/cores.yaml), so the link is the
    # bottleneck. Core 0 holds the link for N / B; core 1's transfer waits N / B for it,
    # then takes N / 368 GB/s on its own DMA link, then the 1300 ns DMA latency.
    from trnkb.engine import isa
    from trnkb.engine.result import critical_path
    from trnkb.engine.timeline import Link, Timeline

    n_bytes, link_rate, core_rate, latency = 128 * 4096 * 2, 100e9, 16 * 23e9, 1300e-9
    hbm = Link(link_rate)
    recs = []
    for c in range(2):
        tl = Timeline(trn2, execute=False, hbm=hbm, core_id=c)
        src = tl.hbm("x", (128, 4096), "bf16")
        isa.dma(tl, tl.sbuf_pool("x tile", (128, 4096), "bf16").tile(), src)
        recs.append(tl.records())
    merged = {k: (recs[0][k] + recs[1][k] if k == "op" else np.concatenate([r[k] for r in recs]))
              for k in recs[0]}
    crit, stalls = critical_path(merged)
    assert crit["hbm"] == pytest.approx(n_bytes / link_rate, rel=1e-9)
    assert crit["dma"] == pytest.approx(n_bytes / core_rate, rel=1e-9)
    assert stalls == pytest.approx({"dma latency": latency}, rel=1e-9)


def test_mxfp8_layer_at_llama_405b_shapes_fits_the_scale_tiles_in_128_partitions():
    # 405B: hidden 16,384 makes a K group hold more E8M0 scale rows (K/32) than the 128
    # partitions; they fold into the free dimension. MXFP8 runs at 4x the BF16 array rate
    # (Neuron docs, neuroncore_facts.md B.1), so the layer must be faster than in BF16
    # yet never above its own peak.
    import trnkb
    from trnkb.engine import model_layer_time

    kb = trnkb.load()
    mx = model_layer_time(kb, "llama-3-1-405b", "trainium3", 2048, cores=8, dtype="mxfp8")
    bf = model_layer_time(kb, "llama-3-1-405b", "trainium3", 2048, cores=8, dtype="bf16")
    assert mx.seconds < bf.seconds and 0 < mx.mfu <= 1


@pytest.mark.parametrize("heads_kv", [8, 4, 1])
def test_gqa_decode_on_a_whole_chip_moves_k_and_v_once(trn3, heads_kv):
    # decode (one query per head), 64 query heads over heads_kv KV heads, 128k keys, d 128.
    # By hand: K + V = 2 x heads_kv x 131072 x 128 x 2 B; Q and O = 64 x 128 x 2 B each,
    # once per key range when fewer KV heads than cores split each head's keys 8 / heads_kv
    # ways (each range reads its group's queries and writes a partial output)
    r = chip_attention(trn3, 1, 131072, 128, heads=64, heads_kv=heads_kv)
    kv = 2 * heads_kv * 131072 * 128 * 2
    ranges = max(1, 8 // heads_kv)
    assert r.params["gqa_folded"]
    assert r.chip_figures["hbm_bytes"] == kv + 2 * 64 * 128 * 2 * ranges


@pytest.mark.parametrize("heads_kv", [16, 8, 4])
def test_gqa_decode_at_128k_on_a_whole_chip_is_within_1_3x_of_the_hbm_bound(trn3, heads_kv):
    # the bound: K + V bytes (counted by hand) over the chip's 4.9 TB/s (specs/chips.yaml)
    r = chip_attention(trn3, 1, 131072, 128, heads=64, heads_kv=heads_kv)
    bound = 2 * heads_kv * 131072 * 128 * 2 / 4.9e12
    assert bound <= r.seconds.to("s").magnitude <= 1.3 * bound


@pytest.mark.parametrize("heads_kv", [8, 4])
def test_gqa_decode_is_within_15_percent_of_the_dma_engines_floor(trn3, heads_kv):
    # the 8 cores' DMA engines (16 x 33 B/ns = 528 GB/s each, the DMA bandwidth guide) move
    # 4.2 TB/s, under the chip's 4.9 TB/s: the floor is K + V over 8 x 528 GB/s
    r = chip_attention(trn3, 1, 131072, 128, heads=64, heads_kv=heads_kv)
    floor = 2 * heads_kv * 131072 * 128 * 2 / (8 * 528e9)
    assert floor <= r.seconds.to("s").magnitude <= 1.15 * floor
