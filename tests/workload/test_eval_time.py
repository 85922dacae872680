"""Evaluation time inside time-to-train (issue 19): the forward-only compute over the tokens
the evaluations forward, and the importer reading the evaluation work an MLPerf log states."""

import sys
from pathlib import Path

import pytest

from trnkb import workload as W
from trnkb.workload.lora import LoRA
from trnkb.workload.ranges import user_value

ROOT = Path(__file__).resolve().parents[2]

# Llama 2 70B by hand (d 8192, 80 layers, 64 heads of 128, 8 KV heads, FFN 28672, vocabulary
# 32000): per layer q and o 2 x 8192^2, k and v 2 x 8192 x 1024, MLP 3 x 8192 x 28672, two
# norms; plus the final norm and the output head; the input embedding left out
_LAYER = 8192 * (8192 + 1024 + 1024 + 8192) + 3 * 8192 * 28672 + 2 * 8192
_N = 80 * _LAYER + 8192 + 32000 * 8192
# r=16 on the fused qkv (8192 -> 10240) and o (8192 -> 8192), 80 layers
_P = 80 * (16 * (8192 + 10240) + 16 * (8192 + 8192))
# causal attention forward at 8192: 2 x heads x (128 + 128) x 80 layers x 8192 / 2 positions
_ATTN = 2 * 64 * 256 * 80 * 4096
_H100_FP8 = 1979e12  # NVIDIA H100 SXM dense FP8, FLOP/s


@pytest.fixture(scope="module")
def pair(kb):
    return W.model(kb, "llama-2-70b"), W.system(kb, "hgx-h100-8")


def test_lora_eval_time_is_the_forward_of_base_and_adapters_over_the_eval_tokens(pair):
    """5 evaluations of 173 samples of 8192 tokens (MLPerf's Llama 2 70B LoRA) on 8 H100 in
    fp8 at MFU 0.5: (2 N + 2 P + attention) x tokens / (8 x 1979 TFLOP/s x 0.5)."""
    m, s = pair
    eval_tokens = 5 * 173 * 8192
    kw = dict(seq_len=8192, batch_tokens=8 * 8192, lora=LoRA(16, ("qkv", "o")),
              assumptions={"mfu": user_value("mfu", 0.5, "")})
    with_eval = W.train(m, s, 8, "tp=8", 25e6, "fp8", eval_tokens=eval_tokens, **kw)
    without = W.train(m, s, 8, "tp=8", 25e6, "fp8", **kw)
    want = eval_tokens * (2 * _N + 2 * _P + _ATTN) / (8 * _H100_FP8 * 0.5)
    assert want == pytest.approx(7_086_080 * (2 * 68_714_504_192 + 2 * 44_564_480
                                                   + 10_737_418_240) / 7.916e15)
    assert with_eval["eval_time"].mid == pytest.approx(want)
    assert without.breakdown["eval_time"] == 0.0 and "eval_time" not in without.metrics
    # days: the training steps (unchanged) plus the evaluations
    assert (with_eval["days"].mid - without["days"].mid) * 86400 == pytest.approx(want)
    assert with_eval["eval_share"].mid == pytest.approx(want / (with_eval["days"].mid * 86400))
    # tokens/s is the training step's, evaluations or not
    assert with_eval["tokens_per_s"].mid == pytest.approx(without["tokens_per_s"].mid)


def test_full_training_eval_is_a_third_of_the_step_flops_and_ranged(pair):
    """Without LoRA an evaluation forwards 2 N + attention per token; the MFU's range
    (0.20-0.65) widens the eval time in inverse proportion."""
    m, s = pair
    r = W.train(m, s, 64, "tp=8,zero=1", 1e9, "fp8", seq_len=8192, batch_tokens=64 * 8192,
                eval_tokens=1e8)
    et = r["eval_time"]
    assert et.mid == pytest.approx(1e8 * (2 * _N + _ATTN) / (64 * _H100_FP8 * 0.45))
    assert et.hi == pytest.approx(et.mid * 0.45 / 0.2)
    assert et.lo == pytest.approx(et.mid * 0.45 / 0.65)
    with pytest.raises(ValueError, match="eval_tokens"):
        W.train(m, s, 64, "tp=8,zero=1", 1e9, "fp8", eval_tokens=-1.0)


_LOG = "\n".join(":::MLLOG " + line for line in (
    '{"time_ms": 1000, "key": "global_batch_size", "value": 8, "metadata": {}}',
    '{"time_ms": 1000, "key": "eval_samples", "value": 173, "metadata": {}}',
    '{"time_ms": 2000, "key": "run_start", "value": null, "metadata": {}}',
    '{"time_ms": 3000, "key": "eval_start", "value": null, "metadata": {"samples_count": 1536}}',
    '{"time_ms": 3500, "key": "eval_accuracy", "value": 0.93, "metadata": {"samples_count": 1536}}',
    '{"time_ms": 3600, "key": "eval_stop", "value": null, "metadata": {"samples_count": 1536}}',
    # a second rank logging the same evaluation
    '{"time_ms": 3601, "key": "eval_stop", "value": null, "metadata": {"samples_count": 1536}}',
    '{"time_ms": 4000, "key": "eval_stop", "value": null, "metadata": {"samples_count": 1920}}',
    '{"time_ms": 5000, "key": "run_stop", "value": null, '
    '"metadata": {"samples_count": 1920, "status": "success"}}',
)) + "\nan ordinary log line\n"


def test_the_importer_reads_the_evaluations_a_log_states():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import import_ledger as imp
    finally:
        sys.path.remove(str(ROOT / "bench"))
    g = imp._mllog(_LOG)
    assert (g["evals"], g["eval_samples"], g["samples"], g["status"]) == (2, 173, 1920,
                                                                          "success")
    three = {**g, "evals": 3}
    assert imp._eval_work([g, three]) == {"evals": 2.5, "eval_samples": 173}
    # a log that does not state its evaluation size gives no evaluation work, not a guess
    assert imp._eval_work([g, {k: v for k, v in g.items() if k != "eval_samples"}]) == {}
