"""Claimed and computed values read as people write numbers (trnkb.audit.claims.text).

Expected strings are written by hand from the claim files and the KB figures they use.
"""

from __future__ import annotations

import json
import re

import pytest

from trnkb.audit.claims import claims_table, validate_claims
from trnkb.audit.claims.text import value_text, value_texts
from trnkb.audit.claims.views import audit_table, measured_table
from trnkb.units import Q_


@pytest.fixture(scope="module")
def claims(kb):
    return {c.id: c for c in validate_claims(kb)}


@pytest.fixture(scope="module")
def table(claims):
    return claims_table(list(claims.values())).set_index("id")


@pytest.mark.parametrize(
    "cid, claimed, computed",
    [
        # was "8.1e+11 B/s" and "8.58993e+11 B/s": the tool writes bytes/s; KB 800 GiB/s
        ("scaling-book-tpuv5e-hbm-bandwidth", "810 GB/s", "859 GB/s"),
        ("scaling-book-tpuv5p-bf16", "459 TFLOP/s", "459 TFLOP/s"),  # was "4.59e+14 FLOP/s"
        ("s001-nl72x2-144gb-per-rack", "144 GB", "11,133 GB"),  # was "11132.6 GB"
        ("aws-trn3-neuronlink-2048-gib-per-device", "2,048 GiB/s", "2,384 GiB/s"),  # binary kept
        ("genz-h100-gpu-memory-bw", "3,400 GiB/s", "3,120 GiB/s"),  # was "3119.93 GiB/s"
        ("google-tpu-v7-pod-9216-chips-bf16", "21,261 PFLOP/s", "21,261 PFLOP/s"),
        ("s004-nl32x2-smaller-world", "1", "0.4444"),  # was "0.444444"
    ],
)
def test_claims_table_values_use_the_projects_formatter(table, cid, claimed, computed):
    assert (table.loc[cid, "claimed"], table.loc[cid, "computed"]) == (claimed, computed)


def test_measured_claims_show_the_measurement_and_range_the_same_way(table, claims):
    # 865,000 tokens/s over 72 GPUs = 12,013.9 per GPU: was "12013.9 1/s"
    assert table.loc["measured-gb200-nvl72-llama2-70b-offline", "claimed"] == "12,014 1/s"
    rng = table.loc["measured-gb200-nvl72-llama2-70b-offline", "computed"]
    assert re.fullmatch(r"[0-9,]+ 1/s to [0-9,]+ 1/s", rng), rng
    m = measured_table(list(claims.values())).set_index("id")
    assert m.loc["measured-gb200-nvl72-llama2-70b-offline", "measured"] == "12,014 1/s"


def test_no_value_anywhere_is_in_exponent_form_or_lacks_separators(claims):
    for view in (claims_table(list(claims.values())), audit_table(list(claims.values()))):
        for col in ("claimed", "computed"):
            for text in view[col]:
                if text.startswith('"'):
                    continue  # quoted KB text
                assert not re.search(r"\de[+-]\d", text), text
                assert not re.search(r"(?<![\d,.])\d{4,}", text), text  # 4+ digits: "1,234"


def test_value_text_by_hand():
    assert value_text(Q_(8.58993e11, "B/s")) == "859 GB/s"
    assert value_text(Q_(4.5e10, "B/s")) == "45 GB/s"
    assert value_text(Q_(3119.93, "GiB/s")) == "3,120 GiB/s"  # a prefixed unit is kept
    assert value_text(Q_(9999.0, "W")) == "9,999 W"  # below 10^4: no prefix added
    assert value_text(Q_(12013.9, "1/s")) == "12,014 1/s"  # no unit to prefix
    assert value_text((Q_(7965.91, "1/s"), Q_(22613.8, "1/s"))) == "7,966 1/s to 22,614 1/s"
    assert value_text("TSMC N3P") == '"TSMC N3P"'
    assert value_text(None) == ""


def test_both_values_share_the_claimed_values_prefix():
    # 9e11 and 1.2e12 B/s: to_compact alone would give "900 GB/s" and "1.2 TB/s"
    assert value_texts(Q_(9e11, "B/s"), Q_(1.2e12, "B/s")) == ("900 GB/s", "1,200 GB/s")


def test_a_contradicted_pair_gets_the_digits_that_tell_it_apart():
    a, b = Q_(1.00001, ""), Q_(1.00002, "")
    assert value_texts(a, b, "contradicted") == ("1.00001", "1.00002")
    assert value_texts(a, b, "supported") == ("1", "1")  # 4 figures unless it matters


def test_cli_prints_the_new_strings(claims, capsys):
    from trnkb.cli.claims import _print_claims

    _print_claims([claims["scaling-book-tpuv5e-hbm-bandwidth"]])
    out = capsys.readouterr().out
    assert "claimed ~ 810 GB/s; computed 859 GB/s" in out
    assert "e+11" not in out


def test_json_keeps_numbers_and_units(claims):
    d = json.loads(json.dumps(claims["scaling-book-tpuv5e-hbm-bandwidth"].to_dict(), default=str))
    assert d["claimed"] == {"value": 810e9, "unit": "B/s"}
    assert d["computed"]["unit"] == "B/s" and isinstance(d["computed"]["value"], (int, float))
    assert d["computed"]["value"] == pytest.approx(800 * 2**30, rel=1e-9)


def test_tool_statements_name_each_unit_once_without_nested_brackets(claims):
    # GenZ statements read "as 3400 GiB/s (GiB/s (GenZ's Unit class ...))"
    genz = [c for c in claims.values() if c.id.startswith("genz-")]
    assert len(genz) == 27
    for c in genz:
        assert not re.search(r"\(\s*[^()\s]+ \(", c.statement), c.statement
        assert not re.search(r"([A-Za-z]+/?s?) \(\1\b", c.statement), c.statement
        assert "))" not in c.statement and "computes with as" not in c.statement
    assert claims["genz-h100-gpu-memory-bw"].statement == (
        "GenZ gives H100_GPU Memory_BW = 3400, which it uses as 3400 GiB/s "
        "(GenZ's Unit class reads 'GBsec' as 2**30).")
    assert claims["genz-h100-gpu-flops"].statement == (
        "GenZ gives H100_GPU Flops = 989, which it uses as 989 TFLOP/s.")


def test_site_claims_page_shows_the_claims_strings_as_they_come(kb):
    from trnkb.site.pages import claims_page

    text = claims_page(kb)
    assert "the knowledge base gives 859 GB/s, not 810 GB/s" in text
    assert "8.58993e+11" not in text and "858.993" not in text


def test_notebook_11_tool_table_writes_bytes_per_second_with_a_prefix(kb, claims):
    # notebook 11 showed "810,000,000,000 B/s" beside "858,993,459,200 B/s"
    from trnkb.audit.claims.views import tools_table

    t = tools_table(list(claims.values()), kb).set_index("id")
    assert t.loc["scaling-book-tpuv5e-hbm-bandwidth", ["tool_value", "kb_value"]].tolist() == [
        "810 GB/s", "859 GB/s"]
    assert t.loc["llm-viewer-nvidia-h100-sxm-bandwidth", ["tool_value", "kb_value"]].tolist() == [
        "3.072 TB/s", "3.35 TB/s"]
    # 80 GB = 74.506 GiB
    assert t.loc["genz-h100-gpu-memory-size", ["tool_value", "kb_value"]].tolist() == [
        "80 GiB", "74.51 GiB"]
