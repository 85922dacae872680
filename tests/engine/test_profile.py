"""The profile: Chrome trace in the Trace Event Format, timeline chart, HBM bandwidth."""

from __future__ import annotations

import json

import pytest

from trnkb.engine import attention, gemm
from trnkb.engine.profile import (
    hbm_bandwidth,
    lanes,
    write_chrome_trace,
)
from trnkb.views.timeline import timeline_chart


def test_the_chrome_trace_has_complete_events_in_microseconds(trn3, tmp_path):
    r = gemm(trn3, 512, 512, 1024, execute=False)
    path = write_chrome_trace(r, tmp_path / "t.json")
    doc = json.loads(path.read_text())
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert xs and all({"ts", "dur", "pid", "tid", "name"} <= set(e) for e in xs)
    tensor = sum(e["dur"] for e in xs if e["tid"] == 0)  # tid 0 = tensor
    assert tensor == pytest.approx(r.busy["tensor"].to("us").magnitude)
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M"}
    assert {"tensor", "vector", "scalar", "gpsimd", "dma in", "dma out"} <= names


def test_hbm_bandwidth_integrates_to_the_bytes_moved(trn3):
    r = gemm(trn3, 1024, 1024, 1024, execute=False)
    bw = hbm_bandwidth(r, bins=50)
    moved = ((bw.end_us - bw.start_us) * 1e-6 * bw.GB_per_s * 1e9).sum()
    assert moved == pytest.approx(r.bytes["hbm"].to("B").magnitude, rel=1e-6)


def test_the_timeline_chart_has_a_lane_per_engine(trn3):
    r = attention(trn3, 256, 4096, 64, execute=False)  # several key tiles: rescales on ScalarE
    assert {"tensor", "vector", "scalar", "dma in", "dma out"} <= set(lanes(r)["lane"])
    spec = timeline_chart(r, "attention").to_dict()
    assert len(spec["vconcat"]) == 2
