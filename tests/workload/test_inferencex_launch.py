"""InferenceX launch-script limits and the ledger's per-configuration memo (hand-computed)."""

from __future__ import annotations

from trnkb.audit import ledger
from trnkb.audit.inferencex_launch import launch_limits


def _run(rid: str, date: str, chips: int, batch: int, precision: str,
         software: str = "sglang", source: str = "inferencex-dashboard-fixture-528c414",
         metric: str = "ttft") -> ledger.Run:
    return ledger.Run(id=rid, family="serving latency", vendor="NVIDIA", system="hgx-b200-8",
                      chips=chips, model="deepseek-v3", metric=metric, value=0.1, unit="s",
                      source=source, locator="x", date=date, split="holdout", line=1,
                      extra={"batch": batch, "precision": precision, "software": software,
                             "scenario": "batch", "input_len": 921.5, "output_len": 921.5})


def test_trt_max_num_tokens_is_one_prompt_plus_the_decodes_rounded_to_64():
    # (CONC + ISL + 64 + 63) // 64 * 64: c4, 1k -> (4 + 1024 + 127) // 64 = 18 -> 1152;
    # before 2026-01-21 no 8192 floor, after it max(1152, 8192)
    old = launch_limits(_run("inferencex-h200-trt-dsr1-fp8-tp8-1024-1024-c4-2025-11-02-ttft",
                             "2025-11-02", 8, 4, "fp8", "trt"), 1024, 1024)
    assert old == {"max_tokens": 1152, "chunked_prefill": False, "arrival_lag": 2}
    new = launch_limits(_run("inferencex-b200-trt-dsr1-fp8-tp8-1024-1024-c4-2026-05-18-ttft",
                             "2026-05-18", 8, 4, "fp8", "trt"), 1024, 1024)
    assert new == {"max_tokens": 8192, "chunked_prefill": False, "arrival_lag": 2}
    # c64 at 8k: (64 + 8192 + 127) // 64 = 130 -> 8320, above the floor
    big = launch_limits(_run("inferencex-b200-trt-dsr1-fp8-tp8-8192-1024-c64-2026-05-18-ttft",
                             "2026-05-18", 8, 64, "fp8", "trt"), 8192, 1024)
    assert big["max_tokens"] == 8320


def test_an_old_trt_script_chose_attention_dp_itself():
    # dsr1_fp8_h200_trt_slurm.sh before 2025-11-03: DP attention at 8k/1k above 32 clients
    run = _run("inferencex-h200-trt-dsr1-fp8-tp8-8192-1024-c64-2025-11-02-ttft", "2025-11-02",
               8, 64, "fp8", "trt")
    assert launch_limits(run, 8192, 1024)["dp"] == 8
    assert launch_limits(run, 8192, 1024)["tp"] == 1
    # 1k/1k needs more than 64 clients there; from 2025-11-03 the fixture's layout holds
    assert "dp" not in launch_limits(run, 1024, 1024)
    later = _run("inferencex-h200-trt-dsr1-fp8-tp8-8192-1024-c64-2025-12-15-ttft", "2025-12-15",
                 8, 64, "fp8", "trt")
    assert "dp" not in launch_limits(later, 8192, 1024)


def test_sglang_budgets_by_gpu_precision_and_tp():
    b200 = _run("inferencex-b200-sglang-dsr1-fp8-tp8-1024-1024-c4-2026-05-22-ttft",
                "2026-05-22", 8, 4, "fp8")
    assert launch_limits(b200, 1024, 1024) == {"max_tokens": 32768, "max_seqs": 128,
                                               "arrival_lag": 2}
    tp4 = _run("inferencex-b300-sglang-dsr1-fp8-tp4-8192-1024-c8-2026-05-22-ttft",
               "2026-05-22", 4, 8, "fp8")
    assert launch_limits(tp4, 8192, 1024) == {"max_tokens": 8192, "max_seqs": 32, "arrival_lag": 2}
    fp4 = _run("inferencex-b200-sglang-dsr1-fp4-tp8-1024-1024-c4-2026-05-22-ttft",
               "2026-05-22", 8, 4, "fp4")
    assert launch_limits(fp4, 1024, 1024) == {"max_tokens": 16384, "max_seqs": 256,
                                              "arrival_lag": 2}
    mi300 = _run("inferencex-mi300x-sglang-dsr1-fp8-tp8-1024-1024-c4-2026-05-18-ttft",
                 "2026-05-18", 8, 4, "fp8")
    assert launch_limits(mi300, 1024, 1024) == {"max_tokens": 131072, "arrival_lag": 2}
    mi355 = _run("inferencex-mi355x-sglang-dsr1-fp4-tp8-8192-1024-c64-2026-06-11-ttft",
                 "2026-06-11", 8, 64, "fp4")
    assert launch_limits(mi355, 8192, 1024) == {"max_tokens": 32768, "arrival_lag": 2}
    assert launch_limits(mi355, 1024, 1024) == {"max_tokens": 196608, "arrival_lag": 2}


def test_other_runs_get_the_simulator_defaults():
    atom = _run("inferencex-mi355x-atom-dsr1-fp8-tp8-1024-1024-c4-2026-05-20-ttft",
                "2026-05-20", 8, 4, "fp8", "atom")
    assert launch_limits(atom, 1024, 1024) == {}
    other = _run("nim-x", "2026-05-20", 8, 4, "fp8", source="nvidia-nim-llm-benchmarking")
    assert launch_limits(other, 1024, 1024) == {}


def test_two_frameworks_at_one_configuration_are_two_predictions():
    # the memo once gave a TensorRT-LLM point the SGLang prediction of the same shape
    sg = _run("inferencex-b200-sglang-dsr1-fp8-tp8-1024-8192-c4-2026-03-25-ttft",
              "2026-03-25", 8, 4, "fp8", "sglang (lmsysorg/sglang:v0.5.9-cu130)")
    trt = _run("inferencex-b200-trt-dsr1-fp8-tp8-1024-8192-c4-2026-01-29-ttft",
               "2026-01-29", 8, 4, "fp8", "trt (nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6)")
    assert ledger._config_key(sg) != ledger._config_key(trt)
    same = _run("inferencex-b200-sglang-dsr1-fp8-tp8-1024-8192-c4-2026-03-25-ttft-copy",
                "2026-03-25", 8, 4, "fp8", "sglang (lmsysorg/sglang:v0.5.9-cu130)")
    assert ledger._config_key(sg) == ledger._config_key(same)


def test_b200_trt_scripts_capture_the_prefill_at_some_loads():
    # FP8 from 2026-01-29: 1k/1k and 8k/1k from 64 clients; FP4 from 2026-02-03: 1k/1k at
    # TP 8, EP 8 (ec7bafa, 6eecc0e)
    fp8 = _run("inferencex-b200-trt-dsr1-fp8-tp8-8192-1024-c64-2026-05-18-ttft", "2026-05-18",
               8, 64, "fp8", "trt")
    assert launch_limits(fp8, 8192, 1024)["prefill_graph"] is True
    fp8c4 = _run("inferencex-b200-trt-dsr1-fp8-tp8-8192-1024-c4-2026-05-18-ttft", "2026-05-18",
                 8, 4, "fp8", "trt")
    assert "prefill_graph" not in launch_limits(fp8c4, 8192, 1024)
    fp4 = _run("inferencex-b200-trt-dsr1-fp4-tp8-ep8-dpa-1024-1024-c128-2026-05-19-ttft",
               "2026-05-19", 8, 128, "fp4", "trt")
    assert launch_limits(fp4, 1024, 1024)["prefill_graph"] is True
    old = _run("inferencex-b200-trt-dsr1-fp4-tp8-ep8-1024-1024-c16-2025-12-15-ttft",
               "2025-12-15", 8, 16, "fp4", "trt")
    assert "prefill_graph" not in launch_limits(old, 1024, 1024)


def test_the_ledger_predicts_the_old_h200_trt_point_with_the_scripts_attention_dp(kb):
    from trnkb.audit.ledger_serving import predict_serving

    run = next(r for r in ledger.load_runs() if r.id ==
               "inferencex-h200-trt-dsr1-fp8-tp8-8192-1024-c64-2025-11-02-ttft")
    assert run.get("dp") is None  # the fixture labels it TP 8 without attention DP
    p = predict_serving(kb, run)
    assert not isinstance(p, str)
    assert "--tp 1 --dp 8" in p.call and "recv_interval=60" in p.call
    assert "max_tokens=8320" in p.call and "arrival_lag=2" in p.call


def test_the_kv_cache_format_the_sglang_scripts_leave_at_bf16():
    # H200 passes no --kv-cache-dtype (SGLang's auto: the model's BF16); MI355X FP4 passes
    # fp8_e4m3 from 2025-12-16 (332fec5); B200 always
    h200 = _run("inferencex-h200-sglang-dsr1-fp8-tp8-1024-8192-c4-2026-03-25-ttft",
                "2026-03-25", 8, 4, "fp8")
    assert launch_limits(h200, 1024, 8192)["kv_precision"] == "bf16"
    old = _run("inferencex-mi355x-sglang-dsr1-fp4-tp4-1024-8192-c4-2025-10-06-ttft",
               "2025-10-06", 4, 4, "fp4")
    assert launch_limits(old, 1024, 8192)["kv_precision"] == "bf16"
    new = _run("inferencex-mi355x-sglang-dsr1-fp4-tp8-1024-8192-c32-2026-02-27-ttft",
               "2026-02-27", 8, 32, "fp4")
    assert "kv_precision" not in launch_limits(new, 1024, 8192)
    b200 = _run("inferencex-b200-sglang-dsr1-fp8-tp8-1024-1024-c4-2026-05-22-ttft",
                "2026-05-22", 8, 4, "fp8")
    assert "kv_precision" not in launch_limits(b200, 1024, 1024)
