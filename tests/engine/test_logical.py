"""Logical NeuronCores, kernel tiling and the public time API.

Figures: Trainium3 8 physical cores, 144 GiB and 4.9 TB/s HBM (specs/chips.yaml); LNC 1
or 2, four HBM banks (AWS LNC page; OperatorX accounting). The seed
004_406711927e432c17.txt: "4 logical devices per Trainium package ... only gets 36GB".
"""

from __future__ import annotations

import pytest

from trnkb.engine import Tiling, gemm, gemm_time, named_tiling
from trnkb.engine.calibration import held_out_files, load


def test_lnc2_is_four_logical_cores_of_36_gib_and_a_quarter_of_hbm(trn3):
    assert trn3.lnc_default == 2
    assert trn3.logical_cores_per_chip(2) == 4 and trn3.logical_cores_per_chip(1) == 8
    assert trn3.lnc_hbm_capacity(2).to("GiB").magnitude == pytest.approx(144 / 4)
    assert trn3.lnc_hbm_share(2).to("GB/s").magnitude == pytest.approx(4900 / 4)
    assert trn3.lnc_hbm_share(1).to("GB/s").magnitude == pytest.approx(4900 / 8)


@pytest.mark.parametrize("lnc", [0, 3, 8])
def test_unsupported_lnc_is_refused(trn3, lnc):
    with pytest.raises(ValueError, match="1 to 2"):
        gemm(trn3, 256, 256, 256, execute=False, lnc=lnc)


def test_lnc2_runs_on_two_cores_and_reports_per_chip_figures(trn3):
    one = gemm(trn3, 4096, 4096, 4096, execute=False, lnc=1, fixed_costs=False)
    two = gemm(trn3, 4096, 4096, 4096, execute=False, lnc=2, fixed_costs=False)
    # TensorE-bound: two cores take about half the time (within 10%)
    assert 0.45 <= (two.seconds / one.seconds).to("").magnitude <= 0.55
    f = two.chip_figures
    assert f["lnc"] == 2 and f["logical_cores_per_chip"] == 4
    assert f["chip_flops_per_s"] == pytest.approx(4 * two.achieved.to("FLOPS").magnitude)
    # peak of the two physical cores: 2 x 128 x 128 x 2 FLOP x 2.4 GHz
    assert two.peak.to("TFLOPS").magnitude == pytest.approx(2 * 128 * 128 * 2 * 2.4e9 / 1e12)


def test_lnc2_numerics_are_the_product(trn3):
    r = gemm(trn3, 96, 200, 130, lnc=2)
    assert r.error["rel_rms"] < 1e-2


def test_a_tiling_pads_the_executed_shape_and_reports_both_flops(trn3):
    r = gemm(trn3, 16, 4096, 4096, execute=False, lnc=2, tiling=Tiling(2048, 2048, 1024))
    assert r.params["executed_shape"] == {"m": 2048, "k": 4096, "n": 4096}
    assert r.params["requested_flops"] == 2 * 16 * 4096 * 4096
    assert r.params["executed_flops"] == 2 * 2048 * 4096 * 4096
    assert r.flops.to("FLOP").magnitude == 2 * 16 * 4096 * 4096
    with pytest.raises(ValueError, match="pads"):
        gemm(trn3, 16, 4096, 4096, lnc=2, tiling=Tiling(2048, 2048, 1024))


def test_the_named_nkilib_rule_reproduces_every_measured_executed_shape():
    rule = named_tiling("nkilib-gemm-trn3-lnc2")
    rows = [r for f in held_out_files() for r in load(f)]
    assert len(rows) == 24 + 103 + 103 + 20
    for r in rows:
        s, e = r["shape"], r["executed_shape"]
        assert rule.executed(s["m"], s["k"], s["n"]) == (e["m"], e["k"], e["n"]), r["name"]


def test_gemm_time_is_a_time_with_the_fixed_costs(trn3):
    t = gemm_time(trn3, m=2048, k=1024, n=2048)
    bare = gemm(trn3, 2048, 1024, 2048, execute=False, lnc=2, fixed_costs=False)
    fixed = (3.55 + 7.94 + 2 * 2.014) * 1e-6  # specs/cores.yaml: launch, start/end, 2 blocks
    assert t.to("s").magnitude == pytest.approx(bare.seconds.to("s").magnitude + fixed)


def test_attention_time_on_a_logical_core_moves_its_kv_heads_once(trn3):
    from trnkb.engine import attention_time
    from trnkb.engine.logical import attention

    # decode, 8 query heads over 1 KV head, 128k keys, on one LNC=2 logical core: the two
    # physical cores split the keys and share one HBM bank (4.9 TB/s / 4)
    r = attention(trn3, 1, 131072, 128, heads=8, heads_kv=1, execute=False, lnc=2)
    kv = 2 * 131072 * 128 * 2
    assert r.bytes["hbm"].to("B").magnitude == kv + 2 * 2 * 8 * 128 * 2  # Q, O per key range
    bound = kv / (4.9e12 / 4)
    t = attention_time(trn3, seq_q=1, seq_kv=131072, head_dim=128, heads=8, heads_kv=1)
    assert t == r.seconds
    assert bound <= t.to("s").magnitude <= 1.5 * bound
