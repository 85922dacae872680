"""Attention: any lengths, decode, GQA/MQA, bottom-right causal, head dims, long KV.

Error bound (elementwise, against float64 attention of the bf16-rounded inputs): P is
rounded to bf16 before PV (relative 2**-8 per weight, moving O by at most 2**-8 max|V|),
the output is rounded to bf16 (2**-8 |O|); fp32 exp and sums add about 1e-6 relative,
covered by 1e-4 max|V|.
"""

from __future__ import annotations

import numpy as np
import pytest

from trnkb.engine import attention, attention_flops, reference_attention
from trnkb.engine.numerics_formats import round_to

U_BF16 = 2.0**-8


def _check(core, sq, skv, d, heads=1, heads_kv=None, causal=False, seed=0):
    heads_kv = heads_kv or heads
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((heads, sq, d))
    k, v = rng.standard_normal((heads_kv, skv, d)), rng.standard_normal((heads_kv, skv, d))
    r = attention(core, sq, skv, d, heads=heads, heads_kv=heads_kv, causal=causal, q=q, k=k, v=v)
    ref = reference_attention(*(round_to(x, "bf16") for x in (q, k, v)), causal=causal)
    bound = U_BF16 * np.abs(v).max() + U_BF16 * np.abs(ref) + 1e-4 * np.abs(v).max()
    assert r.output.shape == (heads, sq, d)
    assert (np.abs(r.output - ref) <= bound).all()
    return r, ref


@pytest.mark.parametrize("case", [
    dict(sq=1, skv=1000, d=128, heads=4, heads_kv=1, causal=True),  # decode, MQA, KV cache
    dict(sq=100, skv=300, d=64, heads=2, heads_kv=2, causal=True),  # bottom-right causal
    dict(sq=300, skv=1500, d=64, heads=4, heads_kv=2, causal=True),  # GQA, ragged tiles
    dict(sq=256, skv=640, d=256, heads=2, heads_kv=1),  # head_dim 256: two K passes
    dict(sq=129, skv=129, d=128, heads=1, causal=True),  # one row past a tile
    dict(sq=64, skv=200, d=200, heads=1),  # head_dim 200: a zero-padded second pass
])
def test_attention_of_any_shape_is_within_the_bf16_bound(trn3, case):
    _check(trn3, **case)


def test_trainium2_runs_the_same_shapes_with_exp_on_scalare(trn2):
    r, _ = _check(trn2, 200, 700, 64, heads=2, heads_kv=1, causal=True)
    assert r.params["exp_engine"] == "scalar"


def test_causal_with_more_queries_than_keys_gives_zero_rows_with_no_visible_key(trn3):
    # bottom-right: query i sees keys j <= i + seq_kv - seq_q; the first 300-100 see none
    r, ref = _check(trn3, 300, 100, 64, causal=True)
    assert np.all(r.output[:, :200] == 0) and np.all(ref[:, :200] == 0)


def test_causal_flops_count_bottom_right_aligned_pairs():
    # seq_q 2, seq_kv 4: query 0 sees keys 0..2, query 1 sees 0..3: 3 + 4 pairs
    assert attention_flops(2, 4, 8, causal=True) == 4 * 8 * 7


def test_a_128k_kv_cache_streams_through_sbuf_without_overflow(trn3):
    # executed: K and V stream through SBUF in 128 key tiles and the output is still
    # within the bound (the bound's terms do not grow with the KV length)
    r, _ = _check(trn3, 1, 131072, 128, heads=8, heads_kv=1, causal=True)
    assert r.params["gqa_folded"]
    # K and V (2 x 128k x 128 x 2 B = 64 MiB) are read at least once at <= 528 GB/s
    assert r.seconds.to("s").magnitude >= 2 * 131072 * 128 * 2 / 528e9
    assert r.bound_by in ("dma", "vector")


def test_trainium3_moves_the_exponential_to_vectore(trn2, trn3):
    r2 = attention(trn2, 2048, 2048, 128, execute=False)
    r3 = attention(trn3, 2048, 2048, 128, execute=False)
    assert r2.params["exp_engine"] == "scalar" and r3.params["exp_engine"] == "vector"
    assert r3.busy["scalar"] < r2.busy["scalar"] / 2
    assert r3.seconds < r2.seconds
    assert r2.cycles["vector"] / r2.busy["vector"].to("s").magnitude == pytest.approx(0.96e9)
    for r in (r2, r3):
        assert f"bound by {r.bound_by}" in r.notes[-1] and r.utilization <= 1


def test_heads_kv_must_divide_heads(trn3):
    with pytest.raises(ValueError, match="must divide heads"):
        attention(trn3, 128, 128, 64, heads=6, heads_kv=4, execute=False)


def test_compare_attention_names_the_modelled_differences(trn2, trn3):
    from trnkb.engine import compare_attention

    r2 = attention(trn2, 512, 2048, 128, execute=False)
    r3 = attention(trn3, 512, 2048, 128, execute=False)
    text = compare_attention(r2, trn2, r3, trn3)
    assert "1.25x the clock" in text  # 1.2 / 0.96 GHz (ARCH-trn2, ARCH-trn3 tables)
    assert "from scalar" in text and "to vector" in text


def test_streamed_kv_is_read_once_per_query_tile(trn3):
    # 128k keys do not fit SBUF, so K and V stream; two query tiles read them twice in all.
    # Bytes counted by hand: Q and O (256 x 128 bf16 each) + 2 x (K + V) (128k x 128 bf16)
    r = attention(trn3, 256, 131072, 128, execute=False)
    expect = 2 * 256 * 128 * 2 + 2 * 2 * 131072 * 128 * 2
    assert r.bytes["hbm"].to("B").magnitude == expect
