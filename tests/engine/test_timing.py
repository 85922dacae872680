"""The scheduler's cost rules, each pinned to the published rule and hand arithmetic.

Figures (specs/cores.yaml, with their sources): DMA 16 engines x 33 B/ns = 528 GB/s per
Trainium3 core, 1300 ns fixed latency per transfer and a 512 B per-partition payload
floor (nki DMA bandwidth guide); Trainium3 HBM 4.9 TB/s over 8 cores = 612.5 GB/s per
core (more than the DMA rate, so the DMA rate binds); TensorE 2.4 GHz, MM cost
max(min(64, M), N) cycles (nki.isa cost), LoadStationary M / 4 cycles (ARCH-v2), fill
and drain 128 + 128 cycles (estimate from the array size).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from trnkb.engine import isa
from trnkb.engine.timeline import Timeline

RATE3 = 16 * 33e9  # B/s, one Trainium3 core's DMA engines
LAT = 1300e-9
F_T = 2.4e9


@pytest.fixture
def trn3(trn3):
    """The Trainium3 core at the published per-instruction rate: the fitted sustained
    TensorE fraction (specs/cores.yaml tensor_sustained) is tested in test_calibration."""
    return replace(trn3, tensor_sustained=1.0)


def test_a_large_transfer_takes_bytes_over_rate_plus_the_fixed_latency(trn3):
    tl = Timeline(trn3, execute=False)
    src = tl.hbm("x", (128, 1024), "bf16")
    dst = tl.sbuf_pool("x", (128, 1024), "bf16").tile()
    done = isa.dma(tl, dst, src)
    assert done == pytest.approx(128 * 1024 * 2 / RATE3 + LAT)
    r = tl.result("dma", "bf16", 1.0)
    assert r.seconds.to("s").magnitude == pytest.approx(done)  # the makespan includes latency


def test_a_small_per_partition_payload_is_charged_as_the_payload_floor(trn3):
    # 128 partitions x 64 bf16 = 128 B each, below the 512 B floor: charged 128 x 512 B
    tl = Timeline(trn3, execute=False)
    src = tl.hbm("x", (128, 64), "bf16")
    dst = tl.sbuf_pool("x", (128, 64), "bf16").tile()
    done = isa.dma(tl, dst, src)
    assert done == pytest.approx(128 * 512 / RATE3 + LAT)


def test_a_transfer_over_few_partitions_uses_as_many_dma_engines(trn3):
    # 4 partitions of 8 KiB: 4 of the 16 engines ("parallelized up to 16 DMA engines")
    tl = Timeline(trn3, execute=False)
    src = tl.hbm("x", (4, 4096), "bf16")
    dst = tl.sbuf_pool("x", (4, 4096), "bf16").tile()
    done = isa.dma(tl, dst, src)
    assert done == pytest.approx(4 * 8192 / (RATE3 * 4 / 16) + LAT)


def test_writes_to_disjoint_regions_of_one_tensor_do_not_wait_for_each_other(trn3):
    tl = Timeline(trn3, execute=False)
    out = tl.hbm("C", (256, 1024), "bf16")
    a = tl.sbuf_pool("a", (128, 1024), "bf16", 2)
    t1, t2 = a.tile(), a.tile()
    d1 = isa.dma(tl, out.view((slice(0, 128), slice(None)), (128, 1024)), t1)
    d2 = isa.dma(tl, out.view((slice(128, 256), slice(None)), (128, 1024)), t2)
    x = 128 * 1024 * 2 / RATE3
    assert d1 == pytest.approx(x + LAT)
    assert d2 == pytest.approx(2 * x + LAT)  # only the link is shared, not the latency


def test_a_second_write_to_the_same_region_waits_for_the_first(trn3):
    tl = Timeline(trn3, execute=False)
    out = tl.hbm("C", (128, 1024), "bf16")
    a = tl.sbuf_pool("a", (128, 1024), "bf16", 2)
    region = (slice(0, 128), slice(None))
    isa.dma(tl, out.view(region, (128, 1024)), a.tile())
    d2 = isa.dma(tl, out.view(region, (128, 1024)), a.tile())
    x = 128 * 1024 * 2 / RATE3
    assert d2 == pytest.approx(2 * (x + LAT) - LAT + LAT)  # starts after the first lands


def _operands(tl, m=128, n=512):
    st = tl.sbuf_pool("st", (128, m), "bf16", 2)
    mv = tl.sbuf_pool("mv", (128, n), "bf16", 2)
    acc = tl.psum_pool("acc", (m, n), "fp32", 2)
    return st, mv, acc


def test_load_stationary_is_exposed_after_idle_and_hidden_in_a_stream(trn3):
    tl = Timeline(trn3, execute=False)
    st, mv, acc = _operands(tl)
    s1, s2, m1 = st.tile(), st.tile(), mv.tile()
    end1 = isa.matmul(tl, acc.tile(), s1, m1)
    ls, mm = 128 / 4 / F_T, 512 / F_T
    assert end1 == pytest.approx(ls + mm)  # LS of the first stationary is exposed
    end2 = isa.matmul(tl, acc.tile(), s2, m1)
    assert end2 == pytest.approx(ls + 2 * mm)  # the second LS ran during the first MM


def test_other_engines_see_a_matmul_result_after_fill_and_drain(trn3):
    tl = Timeline(trn3, execute=False)
    st, mv, acc = _operands(tl)
    a = acc.tile()
    end = isa.matmul(tl, a, st.tile(), mv.tile())
    out = tl.sbuf_pool("o", (128, 512), "bf16").tile()
    copy_end = isa.copy(tl, out, a)
    drain = 256 / F_T
    # VectorE copy PSUM -> SBUF bf16 runs at 2x (one side in PSUM): 512 / 2 cycles at 1.2 GHz
    assert copy_end == pytest.approx(end + drain + 256 / 1.2e9)


def test_accumulating_matmuls_chain_without_the_drain(trn3):
    tl = Timeline(trn3, execute=False)
    st, mv, acc = _operands(tl)
    a = acc.tile()
    isa.matmul(tl, a, st.tile(), mv.tile())
    end2 = isa.matmul(tl, a, st.tile(), mv.tile(), accumulate=True)
    assert end2 == pytest.approx(128 / 4 / F_T + 2 * 512 / F_T)


@pytest.mark.parametrize("m,n,cycles", [(128, 512, 512), (128, 16, 64), (8, 16, 16)])
def test_matmul_cost_is_the_published_formula(trn3, m, n, cycles):
    # nki.isa: max(min(64, N_stationary), N_moving)
    tl = Timeline(trn3, execute=False)
    st, mv, acc = _operands(tl, m, n)
    isa.matmul(tl, acc.tile(), st.tile(), mv.tile())
    assert tl._busy["tensor"] == pytest.approx((cycles + m / 4) / F_T)


def test_critical_path_and_stalls_add_up_to_the_makespan(trn3):
    from trnkb.engine import gemm

    r = gemm(trn3, 512, 1024, 768, execute=False)
    total = sum(r.critical.values()) + sum(r.stalls.values())
    assert total == pytest.approx(r.seconds.to("s").magnitude, rel=1e-6)


def test_sbuf_and_psum_overflow_name_the_pool_and_bytes(trn2):
    tl = Timeline(trn2, execute=False)
    with pytest.raises(ValueError, match=r"SBUF overflow: pool 'big' needs 2 x 200000 B"):
        tl.sbuf_pool("big", (128, 100000), "bf16", 2)
    with pytest.raises(ValueError, match="PSUM overflow: pool 'acc' needs 9 bank"):
        tl.psum_pool("acc", (128, 512), "fp32", 9)


def test_matmul_tile_limits_are_enforced(trn2):
    tl = Timeline(trn2, execute=False)
    st = tl.sbuf_pool("st", (128, 128), "bf16").tile()
    mv = tl.sbuf_pool("mv", (128, 1024), "bf16").tile()
    dst = tl.psum_pool("d", (128, 512), "fp32", 2).tile()
    with pytest.raises(ValueError, match="moving free size 1024 exceeds 512"):
        isa.matmul(tl, dst, st, mv)
