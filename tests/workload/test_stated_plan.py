"""The importer reads the layout a launch script sets (TP, PP, CP, microbatch, interleave)."""

from pathlib import Path

from workloadhelpers import ledger_importer

_FILES = {
    "X/benchmarks/b/implementations/sysA/README-sysA.md":
        "are in the `benchmarks/b/implementations/nemo/config_GB200_128x4x112xtp4pp8cp2.sh` "
        "script.",
    "X/benchmarks/b/implementations/nemo/config_GB200_128x4x112xtp4pp8cp2.sh":
        "source $(dirname ${BASH_SOURCE[0]})/config_common.sh\nexport MINIBS=112\n"
        "export TENSOR_MODEL_PARALLEL=4\nexport PIPELINE_MODEL_PARALLEL=8\n"
        "export INTERLEAVED_PIPELINE=8\nexport CONTEXT_PARALLEL=2\n",
    "X/benchmarks/b/implementations/nemo/config_common.sh":
        "export FP8=True\nexport MICRO_BATCH_SIZE=1\n",
    # NVIDIA's LoRA scripts name them TP, PP (in the common file), CP, MBS
    "X/benchmarks/b/implementations/sysB/README-sysB.md":
        "are in the `benchmarks/b/implementations/lora/config_GB200_18x4x1xtp1pp1cp8.sh` script.",
    "X/benchmarks/b/implementations/lora/config_GB200_18x4x1xtp1pp1cp8.sh":
        "source $(dirname ${BASH_SOURCE[0]})/config_common.sh\nexport TP=1\nexport CP=8\n"
        "export INTERLEAVED_PIPELINE=null\n",
    "X/benchmarks/b/implementations/lora/config_common.sh":
        "export FP8=True\nexport PP=1\nexport MBS=1\n",
    # no layout stated: no plan
    "X/benchmarks/b/implementations/sysC/README-sysC.md":
        "are in the `benchmarks/b/implementations/nemo/config_C.sh` script.",
    "X/benchmarks/b/implementations/nemo/config_C.sh": "export FP8=True\n",
}


def test_launch_script_layout_becomes_the_runs_plan(monkeypatch):
    imp = ledger_importer(monkeypatch, _FILES)
    files = set(_FILES)
    a = imp._stated_precision("r", "c", "X", "sysA", "b", files, Path("."))
    assert a["plan"] == "tp=4,pp=8,cp=2,mb=1,zero=1,vpp=8"
    assert "TENSOR_MODEL_PARALLEL=4" in a["plan_locator"]
    assert "INTERLEAVED_PIPELINE=8" in a["plan_locator"]
    b = imp._stated_precision("r", "c", "X", "sysB", "b", files, Path("."))
    assert b["plan"] == "tp=1,pp=1,cp=8,mb=1,zero=1"  # null interleave: no vpp
    c = imp._stated_precision("r", "c", "X", "sysC", "b", files, Path("."))
    assert c["precision"] == "fp8" and "plan" not in c


def test_stated_plan_parses_as_a_plan():
    from trnkb.workload.plan import Plan

    p = Plan.parse("tp=4,pp=8,cp=2,mb=1,zero=1,vpp=8", 512)
    assert (p.dp, p.tp, p.pp, p.cp, p.vpp, p.zero, p.microbatch) == (8, 4, 8, 2, 8, 1, 1)
