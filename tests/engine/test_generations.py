"""Generations as data: a new NeuronCore is one YAML row; Trainium1 against its tutorial.

Trainium4 figures: AWS announced at least 6x the FP4 and 3x the FP8 compute of Trainium3
(chips.yaml trainium4 notes; nand-research-trn3). The row below keeps NeuronCore-v4's
array and clock and writes that as packing: MXFP8 3 x 4 = 12 and MXFP4 6 x 4 = 24 K
elements per PE per cycle (an estimate made for this test, not a spec).
NKI matmul tutorial (aws-neuron-sdk nki/tutorials/matrix_multiplication.rst, commit
7c165a3e): [4096, 8192] @ [8192, 8192] BF16 on Trn1.32xlarge, fully optimized kernel,
6.97 ms, HFU 85.24%.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import trnkb
from trnkb.engine import NeuronCore, gemm


@pytest.fixture(scope="module")
def trn4(tmp_path_factory):
    specs = Path(__file__).resolve().parents[2] / "specs"
    dst = tmp_path_factory.mktemp("specs")
    shutil.copytree(specs, dst, dirs_exist_ok=True)
    text = (dst / "cores.yaml").read_text()
    v4 = text[text.index("- id: neuroncore-v4"):text.index("# -------- end of ENGINE")]
    row = (v4.replace("- id: neuroncore-v4", "- id: neuroncore-t4")
           .replace("name: NeuronCore-v4", "name: NeuronCore-T4 (test estimate)")
           .replace("chip: {value: trainium3,", "chip: {value: trainium4,"))
    row += ('  mxfp8_pack: {value: 12, source: nand-research-trn3, locator: "3x FP8", '
            'kind: estimate}\n'
            '  mxfp4_pack: {value: 24, source: nand-research-trn3, locator: "6x FP4", '
            'kind: estimate}\n\n')
    end = text.index("# -------- end of ENGINE")
    (dst / "cores.yaml").write_text(text[:end] + row + text[end:])
    return NeuronCore.from_kb(trnkb.load(dst), "trainium4")


def test_a_trainium4_core_from_yaml_alone_runs_fp8_and_fp4_at_distinct_rates(trn4):
    assert trn4.pack("mxfp8") == 12 and trn4.pack("mxfp4") == 24
    # peak: 128 x 128 PEs x pack x 2 FLOP x 2.4 GHz
    for dtype, pack in (("mxfp8", 12), ("mxfp4", 24)):
        assert trn4.peak_flops(dtype).to("TFLOPS").magnitude == pytest.approx(
            128 * 128 * pack * 2 * 2.4e9 / 1e12)
    n = 8192
    fp8 = gemm(trn4, n, n, n, dtype="mxfp8", execute=False, fixed_costs=False)
    fp4 = gemm(trn4, n, n, n, dtype="mxfp4", execute=False, fixed_costs=False)
    # TensorE busy time is in the packs' ratio: K steps of 128 x 12 vs 128 x 24 rows
    ratio = (fp8.busy["tensor"] / fp4.busy["tensor"]).to("").magnitude
    assert ratio == pytest.approx(2.0, rel=0.02)
    assert fp4.seconds < fp8.seconds


def test_trainium1_row_runs_the_nki_tutorial_matmul_near_its_measured_time(kb):
    trn1 = NeuronCore.from_kb(kb, "trainium1")
    # ARCH-v2: 92 TFLOPS BF16 per NeuronCore-v2 = 128 x 128 x 2 x 2.8 GHz
    assert trn1.peak_flops("bf16").to("TFLOPS").magnitude == pytest.approx(91.75, rel=1e-3)
    r = gemm(trn1, 4096, 8192, 8192, execute=False)
    err = (r.seconds.to("ms").magnitude - 6.97) / 6.97
    assert -0.20 <= err <= 0.05  # no fitted costs on Trainium1: the engine is faster
    with pytest.raises(ValueError, match="does not run"):
        gemm(trn1, 128, 128, 128, dtype="fp8", execute=False)
