"""rocmfit: aiter's tuned decode-GEMM times as a floor plus a streaming rate, per AMD arch."""

import pytest

from trnkb.workload.rocmfit import POINTS, fit, rocm_decode_inputs


def _by_hand(gfx: str) -> tuple[float, float]:
    """Least squares on relative time of t = a + x c (x = N K bytes), by the 2 x 2 normal
    equations solved with Cramer's rule: returns (a seconds, 1 / c bytes per second)."""
    rows = [(n * k, us * 1e-6) for g, n, k, us, _ in POINTS if g == gfx]
    s11 = sum(1 / y**2 for _, y in rows)
    s12 = sum(x / y**2 for x, y in rows)
    s22 = sum(x * x / y**2 for x, y in rows)
    b1 = sum(1 / y for _, y in rows)
    b2 = sum(x / y for x, y in rows)
    det = s11 * s22 - s12 * s12
    a = (b1 * s22 - s12 * b2) / det
    c = (s11 * b2 - s12 * b1) / det
    return a, 1 / c


@pytest.mark.parametrize("gfx", ["gfx942", "gfx950"])
def test_fit_is_the_least_squares_line(gfx: str) -> None:
    a, rate = _by_hand(gfx)
    f = fit(gfx)
    assert f["kernel_overhead"] == pytest.approx(a, rel=1e-6)
    assert f["rate"] == pytest.approx(rate, rel=1e-6)
    # a floor of a few microseconds and a rate below the HBM's (5.3 / 8 TB/s)
    assert 2e-6 < a < 6e-6 and rate < {"gfx942": 5.3e12, "gfx950": 8e12}[gfx]


def test_hbm_efficiency_is_the_rate_over_the_chips_bandwidth() -> None:
    _, rate = _by_hand("gfx942")
    ins = rocm_decode_inputs("mi300x", 5.3e12)
    assert ins["hbm_efficiency"].mid == pytest.approx(rate / 5.3e12, rel=1e-6)
    assert ins["hbm_efficiency"].kind == "fitted" and "kernel_overhead" not in ins
    assert rocm_decode_inputs("h100", 3.35e12) == {}


def test_the_simulator_takes_them_on_amd_only() -> None:
    import trnkb
    from trnkb import workload as W

    kb = trnkb.load()
    m = W.model(kb, "deepseek-v3")
    kw = {"input_len": 64, "output_len": 4, "precision": "fp8", "tp": 8, "concurrency": 1,
          "requests": 2, "ranged": False}
    amd = W.simulate(m, W.system(kb, "mi355x-8"), 8, **kw)
    assert amd.inputs["kernel_overhead"].mid == pytest.approx(_by_hand("gfx950")[0], rel=1e-6)
    assert "rocmfit" in amd.inputs["hbm_efficiency"].basis
    nv = W.simulate(m, W.system(kb, "hgx-h200-8"), 8, **kw)
    assert "rocmfit" not in nv.inputs["hbm_efficiency"].basis
