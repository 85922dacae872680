"""The NeuronCore model: parameters from specs/cores.yaml, peaks from the FLOPs calculator."""

from __future__ import annotations

import pytest

from trnkb.calc.flops import peak_flops
from trnkb.engine import NeuronCore, gemm
from trnkb.units import Q_


def test_from_kb_reads_the_sourced_core_parameters(trn2, trn3):
    assert trn2.name == "NeuronCore-v3" and trn3.name == "NeuronCore-v4"
    assert trn2.vector_clock.to("GHz").magnitude == pytest.approx(0.96)  # ARCH-trn2 table
    assert trn3.vector_clock.to("GHz").magnitude == pytest.approx(1.2)  # ARCH-trn3 table
    assert (trn2.mx_pack, trn3.mx_pack) == (0, 4)
    assert trn2.psum_bank_bytes == 2048  # 2 MiB / 128 partitions / 8 banks
    assert trn3.cores_per_chip == 8
    assert trn3.dma_min_payload.to("B").magnitude == 512
    assert trn3.quantize_mx_rate == 4 and trn2.quantize_mx_rate == 0


def test_the_engine_peak_is_the_flops_calculators(trn2, trn3):
    for core, dtype, pack in ((trn2, "bf16", 1), (trn2, "fp8", 2), (trn3, "mxfp8", 4)):
        calc = peak_flops(1, 128, 128, Q_(2.4, "GHz"), pack).value
        assert core.peak_flops(dtype) == calc
    # 2 x 128 x 128 x 2.4 GHz = 78.64 TFLOP/s per core (ARCH-trn2/trn3 quote 79)
    assert trn3.peak_flops("bf16").to("TFLOPS").magnitude == pytest.approx(78.6432)
    assert trn3.chip_peak_flops("mxfp8").to("TFLOPS").magnitude == pytest.approx(8 * 314.5728)


def test_plain_fp8_on_trainium3_runs_at_the_bf16_rate_and_says_why(kb, trn3):
    assert trn3.peak_flops("fp8") == trn3.peak_flops("bf16")  # ARCH-trn3: 2x128 non-MX
    r = gemm(trn3, 1024, 1024, 1024, dtype="fp8", execute=False)
    table = kb.get("trainium3", "dense_fp8").to("TFLOPS").magnitude  # AWS chip table: 2,517
    assert any("BF16 rate" in n and f"{table:,.0f}" in n for n in r.notes)


def test_the_published_chip_peaks_come_from_the_chip_table(kb, trn2):
    assert trn2.published_peak("bf16") == kb.get("trainium2", "dense_bf16")


def test_unknown_chip_names_the_chips_that_have_a_core(kb):
    with pytest.raises(KeyError, match="trainium3"):
        NeuronCore.from_kb(kb, "h100")


@pytest.mark.parametrize("dtype", ["mxfp8", "mxfp4"])
def test_mx_on_trainium2_is_refused_with_the_reason(trn2, dtype):
    with pytest.raises(ValueError, match="no MX matmul.*Trainium3"):
        gemm(trn2, 128, 512, 512, dtype=dtype, execute=False)
