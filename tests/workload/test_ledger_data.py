"""The ledger's data (issue 19): benchmark lengths carry their source and derivation, the
InferenceX runs carry the configuration their source states, and the importer reproduces
``specs/ledger/runs.yaml`` where the results repositories are fetched."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from trnkb.audit import ledger
from trnkb.kb import default_specs_dir
from trnkb.workload.benchmarks import benchmark, benchmarks

ROOT = Path(__file__).parents[2]
MIRROR = Path("/work/.mirror")


def _sources() -> set[str]:
    return {s["id"] for s in yaml.safe_load((default_specs_dir() / "sources.yaml").read_text())}


def test_every_published_benchmark_length_names_a_known_source_and_locator():
    raw = {r["id"]: r for r in yaml.safe_load((default_specs_dir() / "benchmarks.yaml")
                                               .read_text())}
    ids = _sources()
    for bid, b in benchmarks().items():
        if b.kind == "training":
            continue  # training rows fix a sequence length, not request lengths
        for key in ("input", "output"):
            row = raw[bid].get(key)
            if row is None:  # unpublished: the row says where we looked
                assert b.missing, bid
                continue
            assert row["source"] in ids and row.get("locator"), (bid, key)


@pytest.mark.parametrize(("bid", "nominal_in", "nominal_out"),
                         [("dashboard-1k-1k", 1024, 1024), ("dashboard-1k-8k", 1024, 8192),
                          ("dashboard-8k-1k", 8192, 1024)])
def test_dashboard_lengths_are_the_mean_of_the_clients_uniform_draw(bid, nominal_in,
                                                                    nominal_out):
    # numpy randint(lower, upper + 1) with lower = int(0.8 L): mean of the integers lower..L
    def mean(n: int) -> float:
        values = range(int(n * 0.8), n + 1)
        return sum(values) / len(values)

    b = benchmark(bid)
    assert b.input_len == mean(nominal_in) and b.output_len == mean(nominal_out)
    assert b.input_len < nominal_in  # the nominal length overstates the mean by 11%


def test_inferencex_runs_state_their_layout_lengths_and_run():
    runs = [r for r in ledger.load_runs() if r.id.startswith("inferencex-")]
    assert len(runs) >= 300
    assert {r.vendor for r in runs} == {"NVIDIA", "AMD"}
    for r in runs:
        m = re.search(r"isl (\d+), osl (\d+).*concurrency (\d+)", r.get("published"))
        assert m, r.id
        isl, osl, conc = (int(x) for x in m.groups())
        assert r.get("input_len") == (int(isl * 0.8) + isl) / 2, r.id
        assert r.get("output_len") == (int(osl * 0.8) + osl) / 2, r.id
        assert r.get("batch") == conc and r.get("scenario") == "batch", r.id
        # one aggregated engine on its TP GPUs; attention-DP engines run trnkb's DEP layout
        assert r.chips == r.get("tp", 1) * r.get("dp", 1), r.id
        if "-dpa" in r.id:
            assert r.get("tp") == 1 and r.get("dp") == r.chips, r.id
        elif "-ep" not in r.id:  # experts sliced by TP in the run: the approximation is noted
            assert "EP 1" in r.get("note"), r.id
        assert "actions/runs/" in r.locator, r.id
        assert r.source == "inferencex-dashboard-fixture-528c414"
        assert not r.get("not_expressible"), r.id
    ids = [r.id for r in runs]
    assert len(ids) == len(set(ids))


@pytest.mark.skipif(not (MIRROR / "vngcloud+InferenceX-app" / "repo").exists(),
                    reason="the results repositories are not fetched on this machine")
def test_the_importer_reproduces_the_committed_ledger():
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "import_ledger.py")],
                         capture_output=True, text=True, check=True, timeout=1200).stdout
    assert out == (default_specs_dir() / "ledger" / "runs.yaml").read_text()


def test_jetstream_tpu_runs_are_listed_with_the_reason_they_cannot_be_predicted():
    runs = [r for r in ledger.load_runs() if r.id.startswith("jetstream-pytorch-")]
    assert len(runs) == 9  # Llama 3 8B x3, Llama 2 7B x2, Llama 2 13B x4 (Gemma has no row)
    for r in runs:
        assert r.vendor == "Google" and r.system == "tpu-v5e-pod" and r.chips == 8
        assert "mean input and output lengths" in r.get("not_expressible")
