"""trnkb stale: older values beside newer same-kind sources; announced rows in use.

Each case writes its own small spec directory (tests/data/good plus the rows it needs),
so the expected entries follow from the dates written here, not from the code.
"""

import json

from typer.testing import CliRunner

import trnkb
from trnkb.audit.stale import _older, announced_in_use, older_values
from trnkb.cli import app

NEWER_VENDOR = """
- id: aws-neuron-trn3-2027
  title: "Trainium3 (a newer Neuron page)"
  publisher: AWS
  url: https://example.invalid/trn3-2027
  date: 2027-01-05
  kind: vendor
"""


def test_dates_compare_at_the_coarser_precision():
    assert _older("2025-12", "2026-01")
    assert not _older("2026", "2026-05")  # a bare year is not before a month of that year
    assert not _older("2026-05", "2026")
    assert _older("2025", "2026-05")
    assert not _older("2026-08-21", "2026-08-21")


def test_an_older_value_of_a_field_a_newer_same_kind_source_restates_is_listed(good_specs):
    (good_specs / "sources.yaml").write_text((good_specs / "sources.yaml").read_text()
                                             + NEWER_VENDOR)
    chips = good_specs / "chips.yaml"
    chips.write_text(chips.read_text().replace(
        '  dense_bf16: {value: 671 TFLOPS, source: aws-neuron-trn3, locator: "specs table", '
        'kind: reported}',
        '  dense_bf16:\n'
        '    - {value: 671 TFLOPS, source: aws-neuron-trn3, locator: "specs table", '
        'kind: reported}\n'
        '    - {value: 671 TFLOPS, source: aws-neuron-trn3-2027, locator: "table", '
        'kind: reported}'))
    got = older_values(trnkb.load(good_specs))
    same_field = [(r["id"], r["field"], r["source"], r["newer_source"]) for r in got
                  if r["reason"] == "same-field"]
    # 2026-08-21 < 2027-01-05, both vendor: the older dense_bf16 value is listed
    assert ("trainium3", "dense_bf16", "aws-neuron-trn3", "aws-neuron-trn3-2027") in same_field
    # the seed source (2025-12-04) is older too, but of another kind: never compared
    assert all(r["source"] != "semianalysis-trn3" for r in got)
    # same publisher (AWS), other fields of the row: listed as same-publisher
    other = {r["field"] for r in got if r["reason"] == "same-publisher"}
    assert {"hbm_bandwidth"} <= other


def test_nothing_is_listed_without_a_newer_same_kind_source(good_specs):
    assert older_values(trnkb.load(good_specs)) == []


def test_an_announced_chip_that_a_shipping_rack_uses_is_listed(good_specs):
    chips = good_specs / "chips.yaml"
    chips.write_text(chips.read_text().replace("status: shipping", "status: announced", 1))
    racks = good_specs / "racks.yaml"
    text = racks.read_text()
    if "status:" not in text:
        text = text.replace("  vendor: AWS\n", "  vendor: AWS\n  status: shipping\n", 1)
    racks.write_text(text.replace("status: announced", "status: shipping"))
    got = announced_in_use(trnkb.load(good_specs))
    assert got == [{"table": "chips", "id": "trainium3",
                    "evidence": ["racks trn3-nl32x2-switched.chip"]}]


def test_cli_json_has_both_lists(good_specs):
    r = CliRunner().invoke(app, ["stale", "--specs", str(good_specs), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"older_values": [], "announced_in_use": []}


def test_every_listed_value_on_the_shipped_specs_has_a_strictly_newer_same_kind_source(kb):
    src = {s["id"]: s for s in kb.sources.to_dict("records")}
    got = older_values(kb)
    assert got  # the shipped specs cite older and newer pages of one publisher
    for r in got:
        old, new = src[r["source"]], src[r["newer_source"]]
        assert old["kind"] == new["kind"] == r["kind"]
        n = min(len(str(old["date"])), len(str(new["date"])))
        assert str(old["date"])[:n] < str(new["date"])[:n], r
        if r["reason"] == "same-publisher":
            assert old["publisher"] == new["publisher"]
        else:
            assert r["newer_source"] in set(kb.values(r["id"], r["field"])["source"])
