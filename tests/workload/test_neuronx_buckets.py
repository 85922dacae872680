"""Transformers NeuronX decode attends its whole token bucket (trnkb.workload.neuronx rule 5).

Expected values are written out from the library's source (tnx-token-buckets-0623de2):
token buckets are the powers of two from 128 below ``n_positions``, then ``n_positions``; a
step at a token whose context is ``c`` keys runs the smallest bucket >= ``c`` and scores
every key of it.
"""

from __future__ import annotations

import numpy as np
import pytest

from trnkb.workload.neuronx import decode_context_fn, n_positions_input, token_bucket

TNX_218 = "Transformers NeuronX (Neuron 2.18.0)"


@pytest.mark.parametrize(("ctx", "npos", "bucket"), [
    (1, 8192, 128), (100, 8192, 128), (128, 8192, 128), (129, 8192, 256),
    (4096, 8192, 4096), (4097, 8192, 8192), (8192, 8192, 8192),
    (1500, 3072, 2048), (2049, 3072, 3072), (3000, 3072, 3072),  # 3072: 128..2048, 3072
    (200, 1152, 256), (1100, 1152, 1152),
])
def test_the_bucket_is_the_smallest_token_size_holding_the_context(ctx, npos, bucket):
    assert token_bucket(ctx, npos) == bucket


def test_a_step_charges_each_sequence_its_bucket():
    v = {k: i.mid for k, i in n_positions_input(8192).items()}
    fn = decode_context_fn(v)
    assert fn is not None
    # 8 sequences at 4,097 keys each (the first decode after 4,096-token prompts): 8 x 8,192
    assert fn(8.0, 8 * 4097.0) == 8 * 8192
    assert fn(0.0, 0.0) == 0.0
    got = fn(np.array([1.0, 4.0]), np.array([300.0, 4 * 600.0]))
    assert got.tolist() == [512.0, 4 * 1024.0]
    assert decode_context_fn({}) is None  # no stack, no rule


def _step_inputs(kb, npos):
    from trnkb.workload import fromkb
    from trnkb.workload.siminputs import sim_inputs

    m, s = fromkb.model(kb, "llama-2-7b"), fromkb.system(kb, "trn1-32xlarge")
    ins, _ = sim_inputs(m, s, "bf16", "bf16", "tco", None, TNX_218, 16)
    ins |= n_positions_input(npos)
    return m, s, {k: i.mid for k, i in ins.items()}


def test_decode_attention_is_flat_inside_a_bucket_and_jumps_at_its_edge(kb):
    """Llama 2 7B (32 heads on 32 cores: no padding), one sequence: the attention of a step
    at 129 keys is that of one at 256, at 257 that of one at 512, twice as much; without the
    rule it follows the keys (256 / 129 of it at 129 keys)."""
    from trnkb.workload.stepcost import Layout, StepModel, step_fn

    m, s, v = _step_inputs(kb, 8192)
    fn = step_fn(StepModel(m, s, Layout(16, 1), 2.0, 2.0), v)
    att = {c: fn(1.0, float(c), 0.0, 0.0, True)[1]["attention"] for c in (129, 256, 257, 512)}
    assert att[129] == pytest.approx(att[256]) and att[257] == pytest.approx(att[512])
    assert att[257] == pytest.approx(2 * att[256])
    plain = step_fn(StepModel(m, s, Layout(16, 1), 2.0, 2.0),
                    {k: x for k, x in v.items() if k != "neuronx_n_positions"})
    assert att[129] == pytest.approx(256 / 129 * plain(1.0, 129.0, 0.0, 0.0, True)[1]["attention"])


def test_the_simulator_sizes_the_buckets_at_input_plus_output(kb):
    """A static batch of one, 128 in and 100 out (n_positions 228): every decode step's
    context (129 to 228 keys) sits in the 228 bucket, so TPOT is the step at 228 keys."""
    import trnkb.workload as W
    from trnkb.workload import fromkb
    from trnkb.workload.stepcost import Layout, StepModel, step_fn

    m, s = fromkb.model(kb, "llama-2-7b"), fromkb.system(kb, "trn1-32xlarge")
    r = W.simulate(m, s, 16, input_len=128, output_len=100, concurrency=1,
                   batching="static", stack=TNX_218, ranged=False)
    _, _, v = _step_inputs(kb, 228)
    step = step_fn(StepModel(m, s, Layout(16, 1), 2.0, 2.0), v)(1.0, 228.0, 0.0, 0.0)
    assert r["tpot_p50"].mid == pytest.approx(step, rel=1e-6)
