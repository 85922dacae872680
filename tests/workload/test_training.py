"""Training memory, plans, step composition and ranges."""

import pytest

from trnkb import workload as W
from trnkb.workload.plan import Plan, memory_per_chip
from trnkb.workload.ranges import user_value


@pytest.fixture(scope="module")
def llama(kb):
    return W.model(kb, "llama-3.1-70b")


def test_unsharded_state_is_16_bytes_per_parameter(llama):
    mem = memory_per_chip(llama, Plan(), "bf16-adam", 8192, 1)
    assert mem["weights"] + mem["gradients"] + mem["optimizer"] == pytest.approx(
        16 * llama.total_params
    )


def test_zero_stages_shard_over_data_parallel_ranks(llama):
    full = memory_per_chip(llama, Plan(dp=8, zero=0), "bf16-adam", 8192, 1)
    z3 = memory_per_chip(llama, Plan(dp=8, zero=3), "bf16-adam", 8192, 1)
    for part in ("weights", "gradients", "optimizer"):
        assert z3[part] == pytest.approx(full[part] / 8)
    z1 = memory_per_chip(llama, Plan(dp=8, zero=1), "bf16-adam", 8192, 1)
    assert z1["weights"] == full["weights"] and z1["optimizer"] == pytest.approx(
        full["optimizer"] / 8
    )


def test_full_recompute_keeps_less_than_selective_than_none(llama):
    mem = {
        rc: memory_per_chip(llama, Plan(recompute=rc), "bf16-adam", 8192, 1)["activations"]
        for rc in ("none", "selective", "full")
    }
    assert mem["full"] < mem["selective"] < mem["none"]


def test_plan_text_fills_dp_and_refuses_garbage():
    assert Plan.parse("tp=4,pp=2", chips=64).dp == 8
    for bad in ("tp=0", "tp=four", "banana", "recompute=some"):
        with pytest.raises(ValueError):
            Plan.parse(bad, chips=64)
    with pytest.raises(ValueError, match="divisible"):
        Plan.parse("tp=3", chips=64)


def test_plan_search_lists_fitting_plans_fastest_first(kb, llama):
    rows = W.plans(llama, W.system(kb, "gb300-nvl72"), 256, top=None)
    assert rows and all(r["fits"] for r in rows)
    times = [r["step_time"] for r in rows]
    assert times == sorted(times)


def test_compute_bound_step_scales_with_mfu(kb, llama):
    s = W.system(kb, "gb300-nvl72")
    hidden = {
        k: user_value(k, 1.0, "")
        for k in ("dp_overlap", "tp_overlap", "ep_overlap", "cp_overlap", "pp_overlap")
    }
    hidden["kernel_overhead"] = user_value("kernel_overhead", 0.0, "s")  # no floors (stepshape)
    r = W.train(
        llama,
        s,
        1024,
        "tp=2,zero=3",
        1e12,
        assumptions={"mfu": user_value("mfu", 0.5, ""), **hidden},
    )
    flops = llama.training_flops_per_token(8192) * 4 * 2**20
    assert r.breakdown["compute"] == pytest.approx(flops / (1024 * s.peak["bf16"].mid * 0.5))


def test_results_are_ranges_with_drivers(kb, llama):
    r = W.train(llama, W.system(kb, "trn3-nl72x2-switched"), 1024, "tp=4,zero=1", 15e12)
    d = r["days"]
    assert d.lo < d.mid < d.hi
    assert d.drivers[0][0] == "mfu"  # compute-bound: MFU moves it most
    j = r.to_dict()
    assert j["inputs"]["peak_flops"]["sources"] and j["inputs"]["mfu"]["kind"] == "assumption"


def test_impossible_plans_are_refused_with_a_reason(kb, llama):
    s = W.system(kb, "gb300-nvl72")
    with pytest.raises(ValueError, match="heads"):
        W.train(llama, s, 96, "tp=3", 1e12)
    with pytest.raises(ValueError, match="chips must be a positive"):
        W.train(llama, s, 0, None, 1e12)


def test_minimum_chips_hold_the_fully_sharded_state(kb, llama):
    r = W.train(llama, W.system(kb, "gb300-nvl72"), 1024, "tp=4,zero=3", 1e12)
    n = r["min_chips"].mid
    v = {k: i.mid for k, i in r.inputs.items()}
    # 16 bytes per parameter spread over n chips must fit beside one sequence's activations
    assert 16 * llama.total_params / n < v["hbm_capacity"] * v["usable_hbm"]
    assert 16 * llama.total_params / (n - 1) > v["hbm_capacity"] * v["usable_hbm"] * 0.8


def test_engine_mfu_is_used_when_the_engine_has_layer_time(kb, llama):
    from trnkb.workload.engine_mfu import engine_available, engine_mfu

    if not engine_available():
        with pytest.raises(ValueError, match="not part of this build"):
            engine_mfu(kb, llama, "trainium3")
        return
    mfu = engine_mfu(kb, W.model(kb, "llama-3.1-8b"), "trainium3", tokens=1024)
    assert 0 < mfu.lo < mfu.mid <= 1 and mfu.kind == "engine"
    with pytest.raises(ValueError, match="MLA"):
        engine_mfu(kb, W.model(kb, "deepseek-v3"), "trainium3")


def test_explicit_plan_that_does_not_fit_is_refused_with_its_memory() -> None:
    import trnkb

    kb = trnkb.load()
    m, s = W.model(kb, "llama-3-1-70b"), W.system(kb, "gb300-nvl72")
    # tp=1 on 8 chips: every chip holds 70.6B bf16 weights (141 GB) before anything else,
    # and with gradients and Adam state far above 288 GB x 0.9
    with pytest.raises(ValueError, match=r"does not fit .* needs \d+\.\d GB per chip"):
        W.train(m, s, 8, "tp=1", 1e12)
    r = W.train(m, s, 8, "tp=1", 1e12, allow_unfit=True)
    assert r.breakdown["fits"] == 0.0


def test_lora_adapters_flops_and_memory() -> None:
    import trnkb
    from trnkb.workload.lora import LoRA, adapter_params, lora_flops_per_token

    kb = trnkb.load()
    m = W.model(kb, "llama-2-70b")
    # r=16 on the fused qkv (8192 -> (64 + 2 x 8) x 128 = 10240) and o (8192 -> 8192), 80 layers
    per_layer = 16 * (8192 + 10240) + 16 * (8192 + 8192)
    assert adapter_params(m, LoRA(16, ("qkv", "o"))) == 80 * per_layer == 44_564_480
    n = m.active_params(False)
    attn = 3 * m.attention_flops_per_token(8192)
    assert lora_flops_per_token(m, LoRA(), 8192) == 4 * n + 6 * 44_564_480 + attn
    s = W.system(kb, "hgx-h100-8")
    full = W.train(m, s, 64, "tp=8,zero=1", 1e9, seq_len=8192, batch_tokens=8 * 8192)
    lo = W.train(m, s, 64, "tp=8,zero=1", 1e9, seq_len=8192, batch_tokens=8 * 8192, lora=LoRA())
    # frozen base: no gradients or Adam state for 69B parameters, a 4N step instead of 6N
    assert lo.breakdown["memory"] < 0.5 * full.breakdown["memory"]
    assert lo.breakdown["flops_per_token"] < 0.7 * full.breakdown["flops_per_token"]
    assert lo.breakdown["memory_adapters"] == pytest.approx(44_564_480 * 16 / 8)
    with pytest.raises(ValueError, match="targets"):
        LoRA(16, ("mlp",))
