"""Transformers NeuronX prefill rules (trnkb.workload.neuronx) against hand arithmetic.

Expected values are written out from the rules' sources (the engine rates of a
NeuronCore-v2 from the Trainium/Inferentia2 architecture guide: VectorE 128 lanes at
1.12 GHz, ScalarE 128 at 1.4 GHz, SBUF 24 MiB; Llama 2 13B: 40 heads of 128, 40 layers),
not from the module.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from trnkb.workload.neuronx import (
    flash_min_tokens,
    heads_per_core,
    neuronx_version,
    padded_heads,
    prefill_attention_fn,
    prefill_inputs,
)
from trnkb.workload.stepcost import Layout

TNX_218 = "Transformers NeuronX (Neuron 2.18.0)"
VEC = 128 * 1.12e9  # elements/s
ACT = 128 * 1.4e9
SBUF = 24 * 2**20


def test_version_of_a_stack_string():
    assert neuronx_version(TNX_218) == (2, 18)
    assert neuronx_version("transformers-neuronx (Neuron 2.19.1)") == (2, 19)
    assert neuronx_version("vLLM 0.6.3 (ROCm 6.2)") is None
    assert neuronx_version("Transformers NeuronX") is None  # no version: no rule applies
    assert neuronx_version(None) is None


def test_flash_kernel_from_2_19_and_4096_tokens():
    assert math.isinf(flash_min_tokens((2, 18)))
    assert flash_min_tokens((2, 19)) == 4096
    assert flash_min_tokens((3, 0)) == 4096


def test_heads_padded_to_the_cores():
    # decoder.py: round_up_to_divisor(40, 32) = 64 heads, 2 per core
    assert heads_per_core(40, 32) == 2
    assert heads_per_core(40, 16) == 3  # 48 heads
    assert heads_per_core(32, 32) == 1
    assert heads_per_core(64, 32) == 2


def _v(flash_min: float = math.inf, **kw: float) -> dict[str, float]:
    v = {"neuronx_cores_per_chip": 2.0, "neuronx_vector_rate": VEC, "neuronx_scalar_rate": ACT,
         "neuronx_sbuf_bytes": float(SBUF), "neuronx_softmax_passes": 5.0,
         "neuronx_score_bytes": 16.0, "neuronx_flash_min_tokens": flash_min,
         "peak_flops": 190e12, "attention_efficiency": 0.5, "hbm_bandwidth": 820e9,
         "hbm_efficiency": 0.8}
    v.update(kw)
    return v


_MODEL = SimpleNamespace(attention_heads=40, layers=40, head_dim=128, v_dim=128)
_SM = SimpleNamespace(model=_MODEL, layout=Layout(tp=16))  # 32 cores: 2 heads each


def _prompt(s: int, b: int = 1) -> tuple[float, float]:
    """(n_pre, attn_pre) of a static context step of b prompts of s tokens."""
    return float(b * s), b * s * (s + 1) / 2


def test_long_prompt_spills_and_is_hbm_bound():
    fn = prefill_attention_fn(_SM, _v())
    assert fn is not None
    # 2 heads x 4096^2 x 2 B = 64 MiB > 24 MiB SBUF: 16 B per element at 820 GB/s x 0.8 / 2
    # cores (4.9e-11 s) beats VectorE 5 / 143.4e9 (3.5e-11) and TensorE 768 / 47.5e12
    want = 4096**2 * 2 * 40 * 16 / (820e9 * 0.8 / 2)
    assert fn(*_prompt(4096), 0.0) == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(0.0655, abs=1e-4)


def test_short_prompt_fits_sbuf_and_is_vector_bound():
    fn = prefill_attention_fn(_SM, _v())
    # 2 x 1024^2 x 2 B = 4 MiB fits: 5 VectorE passes per element
    want = 1024**2 * 2 * 40 * 5 / VEC
    assert fn(*_prompt(1024), 0.0) == pytest.approx(want, rel=1e-12)
    # three passes (subtract and sum folded into ScalarE's exp): still above ScalarE's one
    want3 = 1024**2 * 2 * 40 * 3 / VEC
    fn3 = prefill_attention_fn(_SM, _v(neuronx_softmax_passes=3.0))
    assert fn3(*_prompt(1024), 0.0) == pytest.approx(want3, rel=1e-12)


def test_full_square_grows_four_fold_per_doubling_once_spilled():
    fn = prefill_attention_fn(_SM, _v())
    assert fn(*_prompt(8192), 0.0) / fn(*_prompt(4096), 0.0) == pytest.approx(4.0)


def test_batch_costs_each_prompt_square():
    fn = prefill_attention_fn(_SM, _v())
    assert fn(*_prompt(4096, b=4), 0.0) == pytest.approx(4 * fn(*_prompt(4096), 0.0))


def test_flash_kept_where_2_19_runs_its_kernel():
    fn = prefill_attention_fn(_SM, _v(flash_min=4096.0))
    assert fn(*_prompt(4096), 0.123) == 0.123  # batch 1 at 4096: the kernel
    assert fn(*_prompt(2048), 0.123) == pytest.approx(2048**2 * 2 * 40 * 5 / VEC)
    assert fn(*_prompt(4096, b=2), 0.123) != 0.123  # right-padded batch: no kernel


def test_arrays_of_steps_and_empty_steps():
    fn = prefill_attention_fn(_SM, _v())
    n = np.array([0.0, 1024.0, 4096.0])
    a = np.array([0.0, 1024 * 1025 / 2, 4096 * 4097 / 2])
    out = fn(n, a, np.zeros(3))
    assert out[0] == 0.0
    assert out[1] == pytest.approx(fn(*_prompt(1024), 0.0))
    assert out[2] == pytest.approx(fn(*_prompt(4096), 0.0))


def test_no_rule_without_the_stack(kb):
    assert prefill_attention_fn(_SM, {"peak_flops": 1.0}) is None
    assert prefill_inputs("trainium1", None) == {}
    assert prefill_inputs("trainium1", "vLLM 0.6") == {}
    assert prefill_inputs("h100", TNX_218) == {}  # no NeuronCore row
    ins = prefill_inputs("trainium1", TNX_218)
    assert ins["neuronx_vector_rate"].mid == pytest.approx(VEC)
    assert ins["neuronx_scalar_rate"].mid == pytest.approx(ACT)
    assert ins["neuronx_sbuf_bytes"].mid == SBUF
    assert ins["neuronx_cores_per_chip"].mid == 2
    assert math.isinf(ins["neuronx_flash_min_tokens"].mid)


def test_simulator_charges_the_rules_on_prefill_only(kb):
    import trnkb.workload as W
    from trnkb.workload import fromkb

    # Llama 2 7B: 32 heads on 16 chips' 32 cores, no padding (the padding rule changes decode
    # too: test_padded_heads_charge_kv_and_attention)
    m, s = fromkb.model(kb, "llama-2-7b"), fromkb.system(kb, "trn1-32xlarge")
    kw = dict(input_len=4096, output_len=16, concurrency=1, batching="static", ranged=False)
    base = W.simulate(m, s, 16, **kw)
    tnx = W.simulate(m, s, 16, stack=TNX_218, **kw)
    assert base.settings["layout"] == tnx.settings["layout"] == "tp=16"
    assert tnx.settings["stack"] == TNX_218
    assert tnx["tpot_p50"].mid == pytest.approx(base["tpot_p50"].mid)
    # the flash charge (causal half at attention_efficiency) replaced by the full square
    assert tnx["ttft_p50"].mid > 1.3 * base["ttft_p50"].mid


def test_heads_and_kv_heads_padded_to_the_cores():
    # decoder.py to_neuron / init_caches: round_up_to_divisor(n, tp_degree), only when the
    # cores do not divide the heads
    assert padded_heads(40, 40, 32) == (64, 64)  # Llama 2 13B on trn1.32xlarge's 32 cores
    assert padded_heads(40, 40, 16) == (48, 48)
    # check_gqa_fallback (tnx 0623de2): 8 KV heads do not divide over 32 cores, so they are
    # replicated to one per query head (GQA.REPLICATED_HEADS), then padded with them
    assert padded_heads(40, 8, 32) == (64, 64)
    assert padded_heads(32, 8, 32) == (32, 32)  # Llama 3.1 8B, Mistral 7B
    assert padded_heads(64, 8, 32) == (64, 64)  # Llama 2/3 70B
    assert padded_heads(64, 8, 8) == (64, 8)  # 8 cores divide the 8 KV heads: unchanged
    assert padded_heads(32, 32, 32) == (32, 32)


def test_replicated_kv_heads_charge_cache_and_weights(kb):
    from trnkb.workload import fromkb
    from trnkb.workload.stepcost import StepModel, padded_layout

    m, s = fromkb.model(kb, "llama-3-1-70b"), fromkb.system(kb, "trn1-32xlarge")
    assert (m.layers, m.d_model, m.attention_heads, m.kv_heads, m.head_dim) == \
        (80, 8192, 64, 8, 128)
    lay = padded_layout(m, Layout(16, 1), 2)
    assert (lay.heads, lay.kv_heads) == (64, 64)
    sm, plain = StepModel(m, s, lay, 2.0, 2.0), StepModel(m, s, Layout(16, 1), 2.0, 2.0)
    # the cache of 64 K and V heads over 16 chips: 2 x 80 x 64 x 128 x 2 B / 16 = 163,840 B
    # per token and chip, where 8 GQA heads over 8 of the chips' ranks hold 40,960
    assert sm.kv_bytes_per_token_chip() == pytest.approx(2 * 80 * 64 * 128 * 2 / 16)
    assert plain.kv_bytes_per_token_chip() == pytest.approx(2 * 80 * 8 * 128 * 2 / 8)
    # K and V weights repeated from 8 to 64 heads: 80 x 8192 x 128 x 2 x 56 more parameters
    extra = 80 * 8192 * 128 * 2 * 56
    assert sm.padded_attention_params() == extra
    assert sm.weights_per_chip() - plain.weights_per_chip() == pytest.approx(extra * 2.0 / 16)


def test_layout_accepts_a_non_dividing_tp_only_under_the_stack(kb):
    from trnkb.workload import fromkb
    from trnkb.workload.serving import layout

    m = fromkb.model(kb, "llama-2-13b")
    assert m.attention_heads == 40
    assert layout(m, 16, 16, TNX_218) == (16, 1)
    for stack in (None, "vLLM 0.6.3", "Transformers NeuronX"):  # no version: not the rules
        with pytest.raises(ValueError, match="must divide"):
            layout(m, 16, 16, stack)
    with pytest.raises(ValueError, match="must divide"):
        layout(m, 16, 3, TNX_218)  # the chips still must divide


def _step_inputs(kb, **over):
    from trnkb.workload import fromkb
    from trnkb.workload.siminputs import sim_inputs

    m, s = fromkb.model(kb, "llama-2-13b"), fromkb.system(kb, "trn1-32xlarge")
    ins, _ = sim_inputs(m, s, "bf16", "bf16", "tco", None, TNX_218, 16)
    v = {k: i.mid for k, i in ins.items()} | over
    return m, s, v


def test_padded_heads_charge_kv_and_attention(kb):
    from trnkb.workload.stepcost import StepModel, step_fn

    m, s, v = _step_inputs(kb)
    # Llama 2 13B: 40 layers, MHA, 40 heads of 128; trn1: 2 NeuronCores per chip
    assert (m.layers, m.kv_heads, m.head_dim, m.v_dim) == (40, 40, 128, 128)
    assert v["neuronx_cores_per_chip"] == 2
    padded = StepModel(m, s, Layout(16, 1, heads=64, kv_heads=64), 2.0, 2.0)
    plain = StepModel(m, s, Layout(8, 2), 2.0, 2.0)
    # K and V x 40 layers x 64 padded heads x 128 x 2 B over 16 chips = 81,920 B per token,
    # where the 40 real heads over 8 chips hold 2 x 40 x 40 x 128 x 2 / 8 = 102,400 B
    assert padded.kv_bytes_per_token_chip() == pytest.approx(2 * 40 * 64 * 128 * 2 / 16)
    assert padded.kv_bytes_per_token_chip() == pytest.approx(81_920)
    assert plain.kv_bytes_per_token_chip() == pytest.approx(102_400)
    ctx = 4096.0
    # memory-bound decode attention (compute made free): the padded cache streamed
    vm = v | {"attention_efficiency": 1e9}
    _, parts = step_fn(padded, vm)(1.0, ctx, 0.0, 0.0, parts=True)
    bw = vm["hbm_bandwidth"] * vm["hbm_efficiency"]
    assert parts["attention"] == pytest.approx(ctx * 81_920 / bw)
    # compute-bound (bandwidth made free): QK^T and PV, 2 x 64 x (128 + 128) FLOPs per
    # position and layer, 40 layers, over 16 chips = 81,920 FLOPs per position per chip
    vc = v | {"hbm_efficiency": 1e9}
    _, parts = step_fn(padded, vc)(1.0, ctx, 0.0, 0.0, parts=True)
    peak = vc.get("attention_peak_flops", vc["peak_flops"]) * vc["attention_efficiency"]
    assert parts["attention"] == pytest.approx(ctx * 2 * 64 * 256 * 40 / 16 / peak)
    _, unpadded = step_fn(StepModel(m, s, Layout(16, 1), 2.0, 2.0), vc)(
        1.0, ctx, 0.0, 0.0, parts=True)
    assert parts["attention"] / unpadded["attention"] == pytest.approx(64 / 40)


def test_simulator_runs_the_stack_at_tp_16_with_64_heads(kb):
    import trnkb.workload as W
    from trnkb.workload import fromkb

    m, s = fromkb.model(kb, "llama-2-13b"), fromkb.system(kb, "trn1-32xlarge")
    kw = dict(input_len=1024, output_len=16, concurrency=1, batching="static", ranged=False)
    tnx = W.simulate(m, s, 16, stack=TNX_218, **kw)
    assert tnx.settings["layout"] == "tp=16,heads=64,kv_heads=64"
    assert tnx.settings["tp"] == 16 and tnx.settings["attention_dp"] == 1
    # any other stack keeps the largest power of two dividing the 40 heads, and refuses 16
    assert W.simulate(m, s, 16, **kw).settings["layout"] == "tp=8,dp=2"
    with pytest.raises(ValueError, match="must divide"):
        W.simulate(m, s, 16, tp=16, **kw)
    with pytest.raises(ValueError, match="no prefill rules"):  # a stack without rules is refused
        W.simulate(m, s, 16, tp=16, stack="vLLM 0.6.3", **kw)
    # Llama 3.1 8B's 32 heads divide the 32 cores, its 8 KV heads do not: no query padding,
    # the KV heads replicated to 32 (check_gqa_fallback)
    m8 = fromkb.model(kb, "llama-3-1-8b")
    assert W.simulate(m8, s, 16, stack=TNX_218, **kw).settings["layout"] == \
        "tp=16,heads=32,kv_heads=32"
