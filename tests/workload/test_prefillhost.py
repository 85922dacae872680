"""An eager prefill step's host floor (prefillhost), by hand."""

from __future__ import annotations

import numpy as np
import pytest
from workloadhelpers import step_values


def test_the_input_is_the_sources_forward_costs_per_layer() -> None:
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.prefillhost import eager_prefill_input

    kb = trnkb.load()
    i = eager_prefill_input(W.model(kb, "deepseek-v3"))["eager_prefill_floor"]
    # SGLang PR 12160: 82.64 ms eager, 23.10 ms captured, TTFT up to 100 ms; 61 layers
    assert (i.lo, i.mid, i.hi) == pytest.approx((23.10e-3 / 61, 82.64e-3 / 61, 100e-3 / 61))
    assert i.kind == "sourced" and "12160" in i.basis
    assert eager_prefill_input(W.model(kb, "llama-2-70b")) == {}  # no measurement: none


def test_a_short_prefill_takes_the_floor_and_decodes_do_not_move() -> None:
    import trnkb
    from trnkb import workload as W
    from trnkb.workload.stepcost import Layout, StepModel, step_fn

    kb = trnkb.load()
    s, m = W.system(kb, "hgx-b200-8"), W.model(kb, "deepseek-v3")
    sm = StepModel(m, s, Layout(8, 1, 1), 1.0, 1.0)
    v = step_values(s)
    bare = step_fn(sm, v)
    floored = step_fn(sm, {**v, "eager_prefill_floor": 1e-3})
    # a 16-token prefill: far under 61 layers x 1 ms = 61 ms of host launch time
    assert bare(0.0, 0.0, 16.0, 136.0) < 0.061
    total, parts = floored(0.0, 0.0, 16.0, 136.0, True)
    assert total == pytest.approx(0.061)
    assert parts["prefill_host"] == pytest.approx(0.061 - bare(0.0, 0.0, 16.0, 136.0))
    # a decode-only step keeps its graph-replayed time
    assert floored(8.0, 8000.0, 0.0, 0.0) == pytest.approx(bare(8.0, 8000.0, 0.0, 0.0))
    # a long prefill above the floor is its own device time
    long = bare(0.0, 0.0, 16384.0, 16384 * 16385 / 2)
    assert long > 0.061
    assert floored(0.0, 0.0, 16384.0, 16384 * 16385 / 2) == pytest.approx(long)
    # arrays (a re-timed schedule) agree with the scalar path step by step
    n_pre = np.array([0.0, 16.0, 16384.0])
    attn = n_pre * (n_pre + 1) / 2
    vec = floored(np.array([8.0, 0.0, 0.0]), np.array([8000.0, 0.0, 0.0]), n_pre, attn)
    assert vec == pytest.approx([floored(8.0, 8000.0, 0.0, 0.0), 0.061,
                                 floored(0.0, 0.0, 16384.0, attn[2])])


def test_a_single_short_request_waits_the_floor_for_its_first_token() -> None:
    import trnkb
    from trnkb import workload as W

    kb = trnkb.load()
    s, m = W.system(kb, "hgx-b200-8"), W.model(kb, "deepseek-v3")
    floor = {"eager_prefill_floor": W.Input("eager_prefill_floor", 2e-3, 2e-3, 2e-3, "s",
                                            "user", "test")}
    r = W.simulate(m, s, 8, input_len=64, output_len=4, precision="fp8", concurrency=1,
                   requests=3, ranged=False, assumptions=floor)
    # one request at a time: its prefill step is the whole TTFT, 61 x 2 ms = 122 ms
    assert r["ttft_p50"].mid == pytest.approx(0.122)
