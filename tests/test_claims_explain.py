"""Claims that explain themselves: fresh reasons, formulas, inputs, ``trnkb claims --id``."""

from __future__ import annotations

import re

import pytest

from trnkb.audit.claims import validate_claims
from trnkb.audit.claims.capabilities import CAPABILITIES, missing_named, reason_now
from trnkb.audit.claims.explain import explain, explain_text, formula, raw_entries
from trnkb.kb import load


@pytest.fixture(scope="module")
def kb():
    return load()


@pytest.fixture(scope="module")
def claims(kb):
    return validate_claims(kb)


def test_no_unverifiable_reason_names_a_capability_as_missing_that_exists(kb, claims):
    stale = {c.id: missing_named(c.reason, kb) for c in claims if c.verdict == "unverifiable"}
    stale = {k: v for k, v in stale.items() if v}
    assert not stale, stale
    assert not [c.id for c in claims if "not on main yet" in c.reason]


def test_the_registry_still_holds_the_typed_reasons_that_are_regenerated(kb):
    # the check above must not pass vacuously: the registry text is stale, the verdicts not
    raw = raw_entries(kb)
    typed = [e["reason"] for e in raw.values() if "not on main yet" in str(e.get("reason", ""))]
    assert typed and all(missing_named(r, kb) for r in typed)


def test_a_capability_that_is_missing_is_still_named(kb):
    import dataclasses

    import trnkb.audit.claims.capabilities as caps
    gone = [dataclasses.replace(c, exists=lambda _kb: False) if c.name == "workload cost model"
            else c for c in CAPABILITIES]
    saved = caps.CAPABILITIES
    caps.CAPABILITIES = tuple(gone)
    try:
        text = reason_now("needs the workload layer's cost model and prices (not on main yet)",
                          kb)
    finally:
        caps.CAPABILITIES = saved
    assert "missing now: workload cost model" in text and "prices" not in text.split("now:")[1]


def test_formula_reads_the_compute_expression():
    node = {"ratio": [{"kb": "trainium3.dense_mxfp8"}, {"kb": "trainium2.dense_fp8"}]}
    assert formula(node) == "(trainium3.dense_mxfp8 / trainium2.dense_fp8)"
    assert formula({"calc": "hbm-capacity", "args": {"stacks": 4}}) == "hbm-capacity(stacks=4)"


def test_explain_gives_inputs_with_values_and_sources_and_the_history(kb, claims):
    c = next(c for c in claims if c.id == "s004-hbm-144gb-from-12-high")
    e = explain(c, kb)
    # the stack build: 4 stacks x 12 dies x 24 Gbit = 144 GB, each input sourced
    values = {i["input"]: i["value"] for i in e["inputs"]}
    assert values == {"trainium3-hbm.stacks": "4", "trainium3-hbm.stack_height": "12",
                      "trainium3-hbm.die_density": "24 Gbit"}
    assert all(i["source"] for i in e["inputs"])
    assert "stacks x stack_height x die_density" in e["formula"]
    assert e["history"][-1] == {"release": "current", "verdict": c.verdict}
    assert len(e["history"]) >= 2
    text = explain_text(e)
    assert re.search(r"input: +trainium3-hbm.stacks = 4 \(", text)


def test_every_note_in_the_registry_reaches_its_explanation(kb, claims):
    raw = raw_entries(kb)
    noted = [c for c in claims if raw.get(c.id, {}).get("note")]
    assert noted
    for c in noted:
        assert explain(c, kb, raw)["note"] == " ".join(str(raw[c.id]["note"]).split()) or \
            explain(c, kb, raw)["note"] == str(raw[c.id]["note"])


def test_cli_id_explains_one_claim_and_grep_and_seed_names_select():
    from typer.testing import CliRunner

    from trnkb.cli import app

    r = CliRunner().invoke(app, ["claims", "--id", "s004-hbm-144gb-from-12-high"])
    assert r.exit_code == 0, r.output
    assert "formula:" in r.output and "input:     trainium3-hbm.stack_height = 12" in r.output
    r = CliRunner().invoke(app, ["claims", "--grep", "12-HIGH", "--json"])
    import json

    ids = {c["id"] for c in json.loads(r.output)}
    assert "s004-hbm-144gb-from-12-high" in ids
    r = CliRunner().invoke(app, ["claims", "--source", "004_406711927e432c17.txt", "--json"])
    assert r.exit_code == 0 and {c["source"] for c in json.loads(r.output)} == {
        "semianalysis-trn3"}


def test_cli_refuses_an_unknown_source_before_evaluating_claims(monkeypatch):
    from typer.testing import CliRunner

    import trnkb.audit.claims
    from trnkb.cli import app

    def boom(*a, **k):
        raise AssertionError("claims were evaluated for an unknown source")
    monkeypatch.setattr(trnkb.audit.claims, "validate_claims", boom)
    r = CliRunner().invoke(app, ["claims", "--source", "no-such-source"])
    # the app's main() turns the KeyError into "error: ..." and exit 1
    assert isinstance(r.exception, KeyError) and "unknown source 'no-such-source'" in str(
        r.exception)
