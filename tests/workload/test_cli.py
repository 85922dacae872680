"""`trnkb workload` answers for every system in the seeds, with JSON ranges and sources."""

import json

import pytest
from typer.testing import CliRunner

from trnkb.cli import app

runner = CliRunner()

SEED_SYSTEMS = [
    "trn3-nl32x2-switched",
    "trn3-nl72x2-switched",
    "trn2-nl16-2d-torus",
    "trn2-nl32x2-3d-torus",
    "gb200-nvl72",
    "gb300-nvl72",
    "mi355x-8",
    "mi450x-ualoe72",
    "tpu-v7-pod",
]


@pytest.mark.parametrize("system", SEED_SYSTEMS)
def test_train_and_serve_answer_with_ranges(system):
    res = runner.invoke(
        app,
        [
            "workload",
            "train",
            "--model",
            "llama-3.1-70b",
            "--system",
            system,
            "--chips",
            "1024",
            "--tokens",
            "15e12",
            "--precision",
            "fp8",
            "--plan",
            "tp=8,zero=3",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    days = out["metrics"]["days"]
    assert days["low"] <= days["central"] <= days["high"]
    assert out["inputs"]["peak_flops"]["sources"]
    res = runner.invoke(
        app,
        [
            "workload",
            "serve",
            "--model",
            "deepseek-v3",
            "--system",
            system,
            "--chips",
            "64",
            "--batch",
            "64",
            "--input-len",
            "2048",
            "--output-len",
            "512",
            "--precision",
            "fp8",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["metrics"]["tpot"]["central"] > 0 and out["curve"]
    assert out["inputs"]["hbm_bandwidth"]["kind"] == "sourced"


def test_plans_lists_plans_fastest_first():
    res = runner.invoke(
        app,
        [
            "workload",
            "plans",
            "--model",
            "llama-3.1-8b",
            "--system",
            "gb300-nvl72",
            "--chips",
            "64",
            "--top",
            "3",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    days = [p["days"] for p in json.loads(res.stdout)["plans"]]
    assert len(days) == 3 and days == sorted(days)


@pytest.mark.parametrize(
    "args",
    [
        ["train", "--model", "nope", "--system", "gb300-nvl72", "--chips", "8"],
        [
            "train",
            "--model",
            "llama-3.1-8b",
            "--system",
            "gb300-nvl72",
            "--chips",
            "8",
            "--tokens",
            "banana",
        ],
        [
            "train",
            "--model",
            "llama-3.1-8b",
            "--system",
            "gb300-nvl72",
            "--chips",
            "8",
            "--plan",
            "tp=3",
        ],
        ["serve", "--model", "llama-3.1-8b", "--system", "gb300-nvl72", "--batch", "-1"],
        ["serve", "--model", "llama-3.1-8b", "--system", "gb300-nvl72", "--set", "mfu"],
        ["plans", "--model", "llama-3.1-8b", "--system", "nowhere", "--chips", "8"],
        ["train", "--model", "llama-3.1-8b", "--system", "gb300-nvl72", "--chips", "abc"],
        ["serve", "--model", "llama-3.1-8b", "--system", "gb300-nvl72", "--batch", "1.5"],
        [
            "plans",
            "--model",
            "llama-3.1-8b",
            "--system",
            "gb300-nvl72",
            "--chips",
            "8",
            "--top",
            "0",
        ],
        ["serve", "--model", "llama-3.1-8b", "--system", "gb300-nvl72", "--pricing", "free"],
    ],
)
def test_bad_arguments_get_one_line_and_exit_1(args):
    res = runner.invoke(app, ["workload", *args])
    assert res.exit_code == 1
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in res.output


def test_default_precision_falls_back_to_what_the_chip_has():
    # the KB has no bf16 peak for MI455X: the command trains at fp8 and says so
    res = runner.invoke(
        app,
        [
            "workload",
            "train",
            "--model",
            "llama-3.1-8b",
            "--system",
            "mi450x-ualoe72",
            "--chips",
            "64",
            "--plan",
            "tp=8,zero=3",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["precision"] == "fp8" and any("no bf16 peak" in n for n in out["notes"])


def test_table_output_numbers_have_separators_and_no_exponent():
    """Expected strings written by hand: 4 significant digits, separators, ``/s`` for rates."""
    from trnkb.cli.workload_show import fmt as _fmt
    from trnkb.workload.ranges import Ranged

    assert _fmt(Ranged("tokens_per_s_per_mw", "1/s/MW", 313_102.0, 126_013.0, 646_217.0)) \
        == "313,100 (126,000 to 646,200) /s/MW"
    assert _fmt(Ranged("days", "day", 71.951, 47.98, 162.31)) == "71.95 (47.98 to 162.3) days"
    assert _fmt(Ranged("tpot", "s", 0.0061083, 0.0040421, 0.012391)) \
        == "0.006108 (0.004042 to 0.01239) s"


def test_serve_table_reads_without_exponents_and_json_keeps_raw_numbers():
    import re

    args = ["workload", "serve", "--model", "llama-3.1-70b", "--system", "gb300-nvl72",
            "--chips", "8"]
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    assert not re.search(r"\de[+-]\d", text.stdout), text.stdout
    assert "/s/MW" in text.stdout and "1/s" not in text.stdout
    raw = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert isinstance(raw["metrics"]["tokens_per_s_per_mw"]["central"], float)
