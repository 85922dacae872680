"""The optimizer step: memory-bound, serial, charged once per training step."""

import pytest

from trnkb import workload as W
from trnkb.workload.plan import Plan
from trnkb.workload.stepextras import dp_exposed, optimizer_bytes, optimizer_seconds
from trnkb.workload.training import central_values, step_breakdown


def test_adam_moves_28_bytes_per_parameter_of_its_shard():
    # 1e9 parameters of state at 12 B each: read 2 B gradient, read+write 12 B state, write 2 B
    assert optimizer_bytes(12e9, (2.0, 2.0, 12.0)) == pytest.approx(1e9 * (2 + 24 + 2))
    assert optimizer_seconds(12e9, (2.0, 2.0, 12.0), 8e12) == pytest.approx(28e9 / 8e12)
    assert optimizer_bytes(0.0, (2.0, 0.0, 0.0)) == 0.0  # a frozen base has no optimizer step
    assert optimizer_bytes(0.0, (2.0, 0.0, 0.0), adapters=1e6) == pytest.approx(28e6)


def test_training_step_adds_the_sharded_optimizer_pass(kb):
    m, s = W.model(kb, "llama-3.1-8b"), W.system(kb, "hgx-b200-8")
    v = {k: i.mid for k, i in central_values(s, "fp8").items()}
    plan = Plan.parse("tp=1", 8)  # dp=8, ZeRO-1: the state is split 8 ways
    b = step_breakdown(m, s, plan, v, seq_len=8192, batch_tokens=16 * 8192,
                       recipe="bf16-adam", weight_bytes=2.0)
    by_hand = m.total_params / 8 * 28 / v["hbm_bandwidth"]  # ~3.5 ms for 8B on B200
    assert b["optimizer"] == pytest.approx(by_hand, rel=1e-9)
    parts = b["compute"] + b["bubble"] + b["optimizer"] + sum(
        b[f"{k}_exposed"] for k in ("dp", "tp", "ep", "cp", "pp"))
    assert b["step_time"] == pytest.approx(parts)


def test_gradient_reduction_hides_under_the_backward_only():
    # compute 30 ms: forward 10, backward 20. Reduce 30 ms at overlap 0.8: 24 could hide, the
    # backward holds 20 -> 10 exposed; gather 6 ms at 0.8: 4.8 hides under the 10 ms forward.
    assert dp_exposed(30e-3, 6e-3, 0.8, 30e-3, 1 / 3) == pytest.approx(10e-3 + 1.2e-3)
    # a gather longer than the forward: 30 ms at overlap 1 hides 10 ms only
    assert dp_exposed(0.0, 30e-3, 1.0, 30e-3, 1 / 3) == pytest.approx(20e-3)
    # ZeRO-3: one window, the whole compute (36 ms of communication, 30 hidden)
    assert dp_exposed(30e-3, 6e-3, 1.0, 30e-3, 1 / 3, zero3=True) == pytest.approx(6e-3)


def test_lora_plan_search_reduces_only_the_adapters(kb):
    from trnkb.workload.lora import LoRA, adapter_params, lora_flops_per_token
    from trnkb.workload.search import plans

    m, s = W.model(kb, "llama-2-70b"), W.system(kb, "gb300-nvl72")
    lora = LoRA(16, ("qkv", "o"))
    p_adapters = float(adapter_params(m, lora))
    f_tok = lora_flops_per_token(m, lora, 8192, True)
    kw = dict(seq_len=8192, batch_tokens=9 * 8192, recipe="bf16-lora", top=1,
              flops_per_token=f_tok)
    best = plans(m, s, 72, 1e9, "fp8", trainable=p_adapters, **kw)[0]
    v = {k: i.mid for k, i in central_values(s, "fp8").items()}
    b = step_breakdown(m, s, best["plan"], v, seq_len=8192, batch_tokens=9 * 8192,
                       recipe="bf16-lora", weight_bytes=2.0, flops_per_token=f_tok,
                       trainable=p_adapters)
    assert best["step_time"] == pytest.approx(b["step_time"])
    # the adapters' gradients (tens of MB) reduce in well under a millisecond, the frozen
    # 70B base's (140 GB) would take seconds: the search must not charge the base's
    assert b["dp_comm"] < 1e-3
    r = W.train(m, s, 72, None, 1e9, "fp8", seq_len=8192, batch_tokens=9 * 8192, lora=lora)
    assert r.plan == best["plan"]
