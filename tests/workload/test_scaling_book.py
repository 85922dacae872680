"""The scaling book's worked examples, reproduced with its inputs.

Source: jax-ml/scaling-book (sources.yaml ``scaling-book``), part 6 "Training LLaMA 3 on
TPUs" and part 8 "Serving LLaMA 3-70B on TPUs". Its inputs: 70e9 parameters, 15e12 tokens,
TPU v5p 4.59e14 bf16 FLOP/s and 96 GB, 40% MFU, a 4M-token batch with 3 bf16 checkpoints
per layer; TPU v5e 8.1e11 B/s HBM, int8 weights and KV (160e3 B/token), batch 32 at 8192
tokens on a 4x2 slice.
"""

import math

import pytest

from trnkb import workload as W
from trnkb.workload.plan import training_state_bytes
from trnkb.workload.ranges import user_value

BOOK_PARAMS = 70e9
ALL_HIDDEN = {
    k: user_value(k, 1.0, "")
    for k in ("dp_overlap", "tp_overlap", "ep_overlap", "cp_overlap", "pp_overlap")
}
# the book's MFU is the whole step's: no kernel floors, no small-GEMM-rows factor (stepshape)
BOOK_STEP = {
    **ALL_HIDDEN,
    "kernel_overhead": user_value("kernel_overhead", 0.0, "s"),
    "gemm_m_half": user_value("gemm_m_half", 0.0, ""),
}


def test_total_training_flops_is_6_3e24(kb):
    m = W.model(kb, "llama-3.1-70b")
    # the book's 6 x 70e9 x 15e12; ours counts the KB's 69.5e9 non-embedding parameters
    assert 6 * m.active_params(False) * 15e12 == pytest.approx(6.3e24, rel=0.02)
    # attention adds 6*L*h*hd*S/... = 3.8% at 4K sequences, still within 5%
    assert m.training_flops_per_token(4096) * 15e12 == pytest.approx(6.3e24, rel=0.05)


def test_8960_v5p_at_40_percent_mfu_take_44_days(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "tpu-v5p-pod")
    assert s.peak["bf16"].mid == pytest.approx(4.59e14)  # the KB agrees with the book's input
    r = W.train(
        m,
        s,
        8960,
        "tp=4,cp=4",
        15e12,
        "bf16",
        seq_len=4096,
        batch_tokens=4 * 2**20,
        flops_per_token=6 * BOOK_PARAMS,
        assumptions={"mfu": user_value("mfu", 0.4, ""), **BOOK_STEP},
    )
    # compute-bound, as the book assumes: communication is hidden
    assert r.breakdown["step_time"] == pytest.approx(r.breakdown["compute"], rel=0.01)
    assert r["days"].mid == pytest.approx(44, rel=0.05)


def test_minimum_v5p_count_to_hold_the_training_state(kb):
    m = W.model(kb, "llama-3.1-70b")
    state = training_state_bytes(
        m, "scaling-book", tokens=4e6, recompute="full", checkpoints_per_layer=3, params=BOOK_PARAMS
    )
    assert state["activations"] == pytest.approx(15.8e12, rel=0.01)  # 2*8192*4e6*3*80
    assert state["total"] == pytest.approx(16.5e12, rel=0.01)
    book_chips = state["total"] / 96e9
    assert math.ceil(book_chips) in (171, 172)  # the book writes 171 (16.5e12/96e9 = 171.9)
    # with the KB's v5p HBM (95 GiB usable) the same state needs fewer chips
    kb_chips = math.ceil(state["total"] / W.system(kb, "tpu-v5p-pod").hbm_capacity.mid)
    assert kb_chips < 172


def test_llama_70b_decode_on_v5e_4x2_is_about_17_ms_and_235_tokens_per_chip(kb):
    m, s = W.model(kb, "llama-3.1-70b"), W.system(kb, "tpu-v5e-pod")
    book = {
        "hbm_efficiency": user_value("hbm_efficiency", 1.0, ""),
        "compute_efficiency": user_value("compute_efficiency", 1.0, ""),
        "serve_overlap": user_value("serve_overlap", 1.0, ""),
    }
    r = W.serve(
        m, s, 8, 32, 8192, 1, "int8", compute_precision="bf16", assumptions=book, curve=False
    )
    # ours: 69.5e9 B of weights (no embedding table read) + 32 x 8192 x 163,840 B of KV over
    # 8 x 819 GB/s = 17.2 ms; the book rounds KV to 160e3 B and HBM to 8.1e11 B/s: 17 ms
    assert r["tpot"].mid == pytest.approx(0.017, rel=0.15)
    assert r["decode_tokens_per_s_per_chip"].mid == pytest.approx(235, rel=0.15)
    assert r.breakdown["decode_compute_or_memory"] == pytest.approx(
        r.breakdown["tpot"]
    )  # comms hidden
