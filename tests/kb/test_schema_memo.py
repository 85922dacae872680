"""A schema pass is remembered by content (trnkb.kb.schema_memo): the same tables are not
checked twice, and any change to what the schemas see means checking again."""

import pandas as pd

from trnkb.kb import load, loading, schema_memo


def test_a_pass_is_remembered_and_a_changed_table_is_checked_again(good_specs, monkeypatch,
                                                                  tmp_path):
    monkeypatch.delenv("TRNKB_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls = []
    real = loading.pandera_schema

    def counting(table, present):
        calls.append(table.name)
        return real(table, present)

    monkeypatch.setattr(loading, "pandera_schema", counting)
    kb = load(good_specs)
    assert loading.check_schemas(kb) == [] and calls  # checked, and the pass remembered
    n = len(calls)
    assert loading.check_schemas(load(good_specs)) == [] and len(calls) == n  # not again
    chips = kb.table("chips")
    chips["hbm_bandwidth"] = pd.Series(pd.array([1e9], dtype="pint[TB/s][Float64]"))
    kb._tables["chips"] = chips  # what the schemas see changed: checked again, and caught
    assert any("hbm_bandwidth" in e for e in loading.check_schemas(kb)) and len(calls) > n


def test_no_memory_when_caching_is_off(good_specs, monkeypatch):
    monkeypatch.setenv("TRNKB_NO_CACHE", "1")
    k = schema_memo.key(load(good_specs), loading.pandera_schema)
    schema_memo.remember(k)
    assert not schema_memo.passed(k)
