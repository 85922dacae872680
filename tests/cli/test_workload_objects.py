"""The workload CLI's remembered model and system give the answers fresh ones give.

Expected answers come from objects built from a freshly loaded knowledge base
(``trnkb.workload.model`` / ``system``), not from the cache under test.
"""

from __future__ import annotations

import os
import pickle
import shutil

import pytest

import trnkb
from trnkb import workload as W
from trnkb.cli import workload_objects as O
from trnkb.spec.peaks_format import specs_dir

CASES = [("llama-3.1-70b", "trn3-nl72x2-switched", None),
         ("deepseek-v3", "gb300-nvl72", None),
         ("llama-3.1-8b", "trn2-nl32x2-3d-torus", None)]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty user cache, and a record of every knowledge-base load."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TRNKB_NO_CACHE", raising=False)
    loads: list[object] = []
    real = trnkb.load

    def load(path=None, **kwargs):
        loads.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(trnkb, "load", load)
    return loads


@pytest.mark.parametrize("model, system, gen", CASES)
def test_remembered_objects_answer_as_fresh_ones_do(cache, kb, model, system, gen):
    fresh = W.model(kb, model), W.system(kb, system, gen)
    first = O.objects(None, model, system, gen)  # built from the KB and stored
    again = O.objects(None, model, system, gen)  # read back
    assert len(cache) == 1
    for m, s in (first, again):
        assert W.serve(m, s, 8, 64, 2048, 512, "bf16").to_dict() == \
            W.serve(*fresh, 8, 64, 2048, 512, "bf16").to_dict()
    m, s = again
    assert W.train(m, s, 64, None, 1e12, "bf16").to_dict() == \
        W.train(*fresh, 64, None, 1e12, "bf16").to_dict()


def test_a_changed_spec_is_built_again(cache, tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(specs_dir(), specs)
    O.objects(specs, *CASES[0])
    O.objects(specs, *CASES[0])
    assert len(cache) == 1
    models = specs / "models.yaml"
    models.write_text(models.read_text() + "\n")  # any byte of any spec file
    O.objects(specs, *CASES[0])
    assert len(cache) == 2


def test_unknown_ids_are_still_refused_by_the_kb(cache):
    with pytest.raises(KeyError):
        O.objects(None, "no-such-model", "trn3-nl72x2-switched", None)
    with pytest.raises(KeyError):
        O.objects(None, "no-such-model", "trn3-nl72x2-switched", None)
    assert len(cache) == 2  # a refusal is not remembered


def test_an_entry_that_is_not_a_model_and_system_is_never_run(cache, tmp_path, kb):
    entry = O._entry(None, CASES[0])
    assert entry is not None
    marker = tmp_path / "ran"

    class Hostile:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    entry.write_bytes(pickle.dumps(Hostile()))
    m, s = O.objects(None, *CASES[0])  # refused by the unpickler, built from the KB
    assert not marker.exists() and len(cache) == 1 and m == W.model(kb, CASES[0][0])


def test_no_cache_means_no_entry(cache, monkeypatch):
    monkeypatch.setenv("TRNKB_NO_CACHE", "1")
    O.objects(None, *CASES[0])
    O.objects(None, *CASES[0])
    assert len(cache) == 2


def test_a_system_whose_fabric_was_measured_reads_back(kb):
    # a long process (the tests, a notebook) may store a system after its fabric computed
    # hop distances: the arrays read back too, and answer the same
    import io

    m, s = W.model(kb, "llama-3.1-8b"), W.system(kb, "trn3-nl32x2-switched", None)
    s.network.fabric.max_hops()  # computes the whole hop matrix
    back = O._ObjectsUnpickler(io.BytesIO(pickle.dumps((m, s)))).load()
    assert (back[1].network.fabric._hop_matrix == s.network.fabric._hop_matrix).all()
    assert W.serve(*back, 8, 32, 1024, 256, "bf16").to_dict() == \
        W.serve(m, s, 8, 32, 1024, 256, "bf16").to_dict()
