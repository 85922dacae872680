"""Derived vs reported: the pairs the shipped KB supports, with differences by hand."""

import pytest

import trnkb
from trnkb.check import THRESHOLD, check


@pytest.fixture(scope="module")
def table():
    return check(trnkb.load())


def pair(table, rid, field):
    sub = table[(table["id"] == rid) & (table["field"] == field)]
    assert len(sub) >= 1, f"no pair for {rid}.{field}"
    return sub.iloc[0]


def test_trainium3_hbm_capacity_matches(table):
    # 4 x 12 x 24 Gbit = 144 GB (seed 004)
    p = pair(table, "trainium3-hbm", "capacity")
    assert p["derived"] == pytest.approx(144) and not p["flagged"]


def test_b200_usable_vs_physical_is_flagged_not_hidden(table):
    # 8 x 8 x 3 GB = 192 GB physical vs 180 GB in NVIDIA's DGX guide: 6.7%
    p = pair(table, "b200-hbm", "capacity")
    assert p["relative_difference"] == pytest.approx(12 / 180) and p["flagged"]


def test_domain_totals_are_checked(table):
    # 144 x 2,517 TFLOPS = 362,448 TFLOPS (AWS UltraServer table)
    p = table[(table["id"] == "trn3-nl72x2-switched") & (table["field"] == "domain_fp8")].iloc[0]
    assert p["derived"] == pytest.approx(362.448)


def test_flags_follow_the_threshold(table):
    assert ((table["relative_difference"] > THRESHOLD) == table["flagged"]).all()
