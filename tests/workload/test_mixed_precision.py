"""Mixed-precision training steps (issue 19): GEMMs at one precision's peak, attention at
another's (NVIDIA's NVFP4 recipes: fp4 GEMMs, fp8 or bf16 attention), and the importer
reading the precision a submission's launch script states."""

from pathlib import Path

import pytest
from workloadhelpers import ledger_importer

from trnkb import workload as W
from trnkb.workload.ranges import user_value

# Llama 2 70B by hand, as in test_eval_time.py: parameters without the input embedding, and
# the causal attention forward per token at 8192 (2 x 64 heads x (128 + 128) x 80 layers x
# 4096 mean positions)
_LAYER = 8192 * (8192 + 1024 + 1024 + 8192) + 3 * 8192 * 28672 + 2 * 8192
_N = 80 * _LAYER + 8192 + 32000 * 8192
_ATTN = 2 * 64 * 256 * 80 * 4096
# GB300 dense peaks (NVIDIA Blackwell Ultra blog): NVFP4 15 PFLOP/s, FP8 5, BF16 2.5
_FP4, _FP8, _BF16 = 15e15, 5e15, 2.5e15
# fp4 GEMMs reach 0.7308 of the fraction of peak fp8 ones do (fp4fit: the mean of the four
# vLLM B200 ratios, test_fp4fit.py); attention at the fp4 peak pays it too
_F = 0.730805
# kernel floors off (stepshape): these cases check the FLOPs' split by peak; 8,192 rows per
# microbatch is the reference, so the GEMM rows factor is 1
_KW = dict(seq_len=8192, batch_tokens=1024 * 8192, allow_unfit=True,
           assumptions={"mfu": user_value("mfu", 0.5, ""),
                        "kernel_overhead": user_value("kernel_overhead", 0.0, "s")})


@pytest.fixture(scope="module")
def pair(kb):
    return W.model(kb, "llama-2-70b"), W.system(kb, "gb300-nvl72")


def test_fp4_gemms_with_fp8_attention_split_the_compute_by_peak(pair):
    """6 N per token at 15 PFLOP/s x 0.7308 (fp4fit) plus 3 x attention at 5 PFLOP/s, 64
    chips, MFU 0.5."""
    m, s = pair
    r = W.train(m, s, 64, "tp=8,zero=1", 1e10, "fp4", attention_precision="fp8", **_KW)
    tokens = 1024 * 8192
    want = tokens * (6 * _N / (_FP4 * _F) + 3 * _ATTN / _FP8) / (64 * 0.5)
    assert want == pytest.approx(8_388_608 * (6 * 68_714_504_192 / (15e15 * 0.730805)
                                              + 3 * 10_737_418_240 / 5e15) / 32)
    assert r.breakdown["compute"] == pytest.approx(want, rel=1e-5)
    all_fp4 = W.train(m, s, 64, "tp=8,zero=1", 1e10, "fp4", **_KW)
    assert all_fp4.breakdown["compute"] == pytest.approx(tokens * (6 * _N + 3 * _ATTN)
                                                         / (64 * _FP4 * _F * 0.5), rel=1e-5)
    # attention at the GEMM precision is the same as not naming it
    same = W.train(m, s, 64, "tp=8,zero=1", 1e10, "fp4", attention_precision="fp4", **_KW)
    assert same.breakdown["compute"] == pytest.approx(all_fp4.breakdown["compute"])
    assert r.settings["attention_precision"] == "fp8"


def test_evaluations_forward_attention_at_its_own_peak(pair):
    """Eval: (2 N at fp4 x 0.7308 + attention at bf16) x eval tokens / (64 x MFU 0.5)."""
    m, s = pair
    r = W.train(m, s, 64, "tp=8,zero=1", 1e10, "fp4", attention_precision="bf16",
                eval_tokens=1e8, **_KW)
    assert r["eval_time"].mid == pytest.approx(1e8 * (2 * _N / (_FP4 * _F) + _ATTN / _BF16)
                                               / 32, rel=1e-5)


_FILES = {
    "X/benchmarks/b/implementations/sysA/README-sysA.md":
        "Launch configuration and system-specific hyperparameters for the\nsysA submission "
        "are in the\n`benchmarks/b/implementations/nemo/config_A_fp4.sh` script.\n",
    "X/benchmarks/b/implementations/nemo/config_A_fp4.sh":
        "source $(dirname ${BASH_SOURCE[0]})/config_common.sh\n"
        "source $(dirname ${BASH_SOURCE[0]})/config_common_fp4.sh\nexport HEALING_ITER=350\n",
    "X/benchmarks/b/implementations/nemo/config_common.sh":
        "export FP8=True\nexport FP8_DPA=1\n",
    "X/benchmarks/b/implementations/nemo/config_common_fp4.sh":
        'export FP4=True\nexport FP8=False\nexport FP4_RECIPE="nvfp4"\n',
    "X/benchmarks/b/implementations/sysB/README-sysB.md":
        "are in the `benchmarks/b/implementations/nemo/config_B.sh` script.",
    "X/benchmarks/b/implementations/nemo/config_B.sh": "export FP8=True  # fp8 GEMMs\n",
    "X/benchmarks/b/implementations/nemo/conf/custom.yaml":
        "  fp8_dot_product_attention: ${oc.decode:${oc.env:FP8_DPA,False}}\n",
}


def test_the_importer_reads_the_precision_a_launch_script_states(monkeypatch):
    imp = ledger_importer(monkeypatch, _FILES)
    files = set(_FILES)
    a = imp._stated_precision("r", "c", "X", "sysA", "b", files, Path("."))
    # the later-sourced fp4 file overrides FP8=True; FP8_DPA from the common file
    assert (a["precision"], a["attention_precision"], a["fp4_steps"]) == ("fp4", "fp8", 350)
    assert "config_A_fp4.sh: FP4=True, FP8=False, FP4_RECIPE=nvfp4" in a["precision_locator"]
    b = imp._stated_precision("r", "c", "X", "sysB", "b", files, Path("."))
    # FP8_DPA unset: the conf's default (False) -> attention in bf16
    assert (b["precision"], b["attention_precision"]) == ("fp8", "bf16")
    assert "fp4_steps" not in b and "custom.yaml default False" in b["precision_locator"]
    assert imp._stated_precision("r", "c", "X", "sysC", "b", files, Path(".")) == {}


def test_benchmark_eval_schedules_are_sourced_and_set_the_eval_tokens():
    """MLPerf references: 405B evaluates 5,760 sequences every 46,080, 8B 1,024 every 12,288,
    LoRA 173 samples every 384 (48 steps x batch 1 x 8 devices)."""
    from trnkb.workload.benchmarks import benchmark
    from trnkb.workload.evals import benchmark_eval_tokens

    big = benchmark("mlperf-train-llama31-405b")
    assert (big.extra["eval_every"]["value"], big.extra["eval_samples"]["value"]) == (46080, 5760)
    assert big.sources["eval_every"] == "mlperf-training-llama31-405b-reference"
    # 3.5e10 tokens = 4,272,460.9 sequences of 8192: 92 evaluations of 5,760 x 8192 tokens
    assert benchmark_eval_tokens(big.extra, 3.5e10, 8192) == 92 * 5760 * 8192
    small = benchmark("mlperf-train-llama31-8b")
    assert benchmark_eval_tokens(small.extra, 12288 * 8192 * 3.5, 8192) == 3 * 1024 * 8192
    lora = benchmark("mlperf-train-llama2-70b-lora")
    assert benchmark_eval_tokens(lora.extra, 1920 * 8192, 8192) == 5 * 173 * 8192
    assert benchmark_eval_tokens({}, 1e12, 8192) == 0.0


def test_cli_benchmark_sets_eval_tokens_and_attention_precision():
    import json

    from typer.testing import CliRunner

    from trnkb.cli import app

    args = ["workload", "train", "--model", "llama-2-70b", "--system", "hgx-h100-8", "--chips",
            "8", "--benchmark", "mlperf-train-llama2-70b-lora", "--tokens", str(1920 * 8192),
            "--batch-tokens", "65536", "--precision", "fp8", "--json"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["settings"]["eval_tokens"] == 5 * 173 * 8192
    assert d["settings"]["attention_precision"] == "fp8"
    r = CliRunner().invoke(app, [*args, "--eval-tokens", "1e6", "--attention-precision", "bf16"])
    d = json.loads(r.output)
    assert d["settings"]["eval_tokens"] == 1e6 and d["settings"]["attention_precision"] == "bf16"
    r = CliRunner().invoke(app, [*args, "--attention-precision", "fp9"])
    assert r.exit_code == 1 and "--attention-precision" in r.output


def test_gradient_buckets_follow_megatron_core_default():
    """Megatron-core's default bucket: max(40e6, 1e6 x dp) parameters, one collective each."""
    from trnkb.workload.training import _buckets

    assert _buckets(68_714_504_192 / 8, 8) == 215  # 8.59e9 / 40e6 = 214.8
    assert _buckets(4e9, 64) == 63  # 4e9 / 64e6 = 62.5
    assert _buckets(1e6, 8) == 1


def test_each_gradient_bucket_pays_the_collective_latency_again(pair):
    """Data-parallel time is linear in the per-step latency with slope = buckets x the steps
    of one collective: doubling step_latency (scale-up only: dp=8 inside one NVL72) adds
    216 x latency_steps x 2 us: the 70B's parameters with the input embedding (N + 32000 x
    8192 = 68,976,648,192) over tp=8 are 8.62e9 per chip, 215.6 buckets of 40e6 -> 216."""
    from trnkb.workload.collectives import latency_steps

    m, s = pair

    def dp(lat: float) -> float:
        kw = {**_KW, "assumptions": {"mfu": user_value("mfu", 0.5, ""),
                                     "step_latency": user_value("step_latency", lat, "s")}}
        return W.train(m, s, 64, "tp=8", 1e10, "fp8", **kw).breakdown["dp_comm"]

    slope = (dp(4e-6) - dp(2e-6)) / 2e-6
    assert (_N + 32000 * 8192) / 8 / 40e6 == pytest.approx(215.55, abs=0.01)
    assert slope == pytest.approx(216 * latency_steps("all-reduce", 8), rel=1e-6)
