"""The `trnkb calc`, `trnkb check` and `trnkb claims` command-line contract."""

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from trnkb.calc import CALCULATORS
from trnkb.cli import app

runner = CliRunner()


def run_json(*args):
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_fabric_size_contract_gives_524288():
    out = run_json(
        "calc",
        "fabric-size",
        "--switch-bandwidth",
        "12.8 Tbit/s",
        "--port-speed",
        "100 Gbit/s",
        "--layers",
        "3",
    )
    assert out["value"] == 524288 and out["unit"] == ""
    assert out["derivation"]["outputs"]["radix"]["value"] == 128


@pytest.mark.parametrize(
    ("args", "value", "unit"),
    [
        # 8 x 128 x 128 x 2 x 2.4 GHz = 629.1456 TFLOPS
        (
            ["peak-flops", "--cores", "8", "--rows", "128", "--cols", "128", "--clock", "2.4 GHz"],
            629.1456,
            "TFLOPS",
        ),
        (
            ["hbm-capacity", "--stacks", "4", "--stack-height", "12", "--die-density", "24 Gbit"],
            144,
            "GB",
        ),
        # 4 x 1024 x 9.6 Gb/s / 8 = 4.9152 TB/s
        (
            [
                "hbm-bandwidth",
                "--stacks",
                "4",
                "--bus-width",
                "1024 bit",
                "--pin-rate",
                "9.6 Gbit/s",
            ],
            4.9152,
            "TB/s",
        ),
        (["scaleup-bandwidth", "--lanes", "144", "--lane-rate", "64 Gbit/s"], 1152, "GB/s"),
        (["it-power", "--facility-power", "1 GW", "--pue", "1.25"], 800, "MW"),
    ],
)
def test_contract_calculators_give_their_formula(args, value, unit):
    out = run_json("calc", *args)
    assert out["value"] == pytest.approx(value) and out["unit"] == unit
    assert out["derivation"]["formula"]


def test_list_shows_every_calculator_and_its_parameters():
    res = runner.invoke(app, ["calc", "--list"])
    assert res.exit_code == 0
    for name in CALCULATORS:
        assert name in res.stdout
    assert "--switch-bandwidth" in res.stdout and "[--macs-per-pe VALUE]" in res.stdout


@pytest.mark.parametrize(
    "args",
    [
        [
            "fabric-size",
            "--switch-bandwidth",
            "12.8 Tbit/ss",
            "--port-speed",
            "100 Gbit/s",
            "--layers",
            "3",
        ],
        [
            "fabric-size",
            "--switch-bandwidth",
            "12.8 GHz",
            "--port-speed",
            "100 Gbit/s",
            "--layers",
            "3",
        ],
        ["fabric-size", "--port-speed", "100 Gbit/s", "--layers", "3"],
        ["no-such-calculator"],
    ],
)
def test_bad_input_is_a_clear_error_without_traceback(args):
    p = subprocess.run(
        [sys.executable, "-m", "trnkb", "calc", *args], capture_output=True, text=True
    )
    assert p.returncode == 1
    assert p.stderr.startswith("error:") and "Traceback" not in p.stderr


def test_check_lists_pairs_with_differences():
    out = run_json("check")
    # issue 9 §3: differences beyond 2% are listed; each recomputed here from the pair
    assert out["threshold"] == 0.02 and out["pairs"]
    for pair in out["pairs"]:
        by_hand = abs(pair["derived"] - pair["reported"]) / abs(pair["reported"])
        assert pair["relative_difference"] == pytest.approx(by_hand)
        assert pair["flagged"] == (by_hand > 0.02)


def test_claims_json_has_values_and_verdicts():
    out = run_json("claims")
    assert len(out) >= 60
    for c in out:
        assert c["source"] and c["locator"] and c["verdict"]


def test_claims_filters():
    out = run_json("claims", "--verdict", "contradicted", "--source", "seed-trn3-overview")
    assert out and all(
        c["verdict"] == "contradicted" and c["source"] == "seed-trn3-overview" for c in out
    )
    summary = run_json("claims", "--summary")
    assert sum(summary["verdicts"].values()) == summary["claims"]
