"""Domain totals: the Trn3 Gen2 UltraServer, 144 chips x 2,517 MXFP8 TFLOPS = 362,448
TFLOPS (AWS trn3-arch page, shared/neuroncore_facts.md B.1)."""

import pytest

from trnkb.calc import system


def test_ultraserver_mxfp8_total():
    assert system.domain_total(144, "2517 TFLOPS").value.to("TFLOPS").m == pytest.approx(362448)


def test_domain_totals_of_several_fields_keep_sources():
    out = system.domain_totals(144, {"hbm": "144 GB", "bw": "4.9 TB/s"},
                               sources={"hbm": {"source": "s1"}})
    assert out["hbm"].value.to("TB").m == pytest.approx(20.736)
    assert out["hbm"].derivation.sources() == ["s1"]
    assert out["bw"].derivation.sources() == []
