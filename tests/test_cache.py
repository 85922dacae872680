"""The user cache holds parse trees keyed by content: same result as parsing, never stale,
never trusted beyond the classes of a parse tree."""

import pickle

import pytest

import trnkb
from trnkb.spec import cache
from trnkb.spec.specfile import SpecError, read_yaml


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv("TRNKB_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "trnkb" / "specs"


def _lines(tree):
    """Every mapping's line and key lines, recursively (what error messages rely on)."""
    if isinstance(tree, dict):
        return [(tree.line, dict(tree.key_lines))] + [x for v in tree.values() for x in _lines(v)]
    if isinstance(tree, list):
        return [x for v in tree for x in _lines(v)]
    return []


def test_cached_tree_equals_the_parsed_tree(good_specs, cache_home):
    path = good_specs / "chips.yaml"
    first = cache.read_yaml_cached(path)
    assert len(list(cache_home.glob("*.pickle"))) == 1
    again = cache.read_yaml_cached(path)  # from the cache
    fresh = read_yaml(path)
    assert again == fresh and _lines(again) == _lines(fresh) and first == fresh


def test_an_edit_is_never_served_stale(good_specs, cache_home):
    path = good_specs / "chips.yaml"
    cache.read_yaml_cached(path)
    path.write_text(path.read_text().replace("4.9 TB/s", "5.3 TB/s"))
    kb = trnkb.load(good_specs)
    assert kb.value("trainium3", "hbm_bandwidth") == trnkb.Q_("5.3 TB/s")


def test_broken_files_are_not_cached_and_errors_still_raise(good_specs, cache_home):
    path = good_specs / "chips.yaml"
    path.write_text("- id: [unclosed\n")
    for _ in range(2):
        with pytest.raises(SpecError):
            cache.read_yaml_cached(path)
    assert list(cache_home.glob("*.pickle")) == []


def test_a_foreign_or_corrupt_entry_is_ignored(good_specs, cache_home):
    path = good_specs / "chips.yaml"
    cache.read_yaml_cached(path)
    (entry,) = cache_home.glob("*.pickle")

    class Evil:
        def __reduce__(self):
            return (print, ("executed",))

    entry.write_bytes(pickle.dumps(Evil()))
    assert cache.read_yaml_cached(path) == read_yaml(path)  # refused, parsed again
    entry.write_bytes(b"\x80\x05truncated")
    assert cache.read_yaml_cached(path) == read_yaml(path)


def test_no_cache_env_writes_nothing(good_specs, cache_home, monkeypatch):
    monkeypatch.setenv("TRNKB_NO_CACHE", "1")
    cache.read_yaml_cached(good_specs / "chips.yaml")
    assert not cache_home.exists()


def test_every_shipped_spec_file_is_served_from_the_cache(cache_home, monkeypatch):
    # if the parse tree ever holds a class the unpickler refuses, the cache silently
    # stops working (every load parses again): this fails instead
    from trnkb.kb import default_specs_dir
    from trnkb.spec import specfile

    files = sorted(default_specs_dir().glob("*.yaml"))
    for p in files:
        cache.read_yaml_cached(p)

    def no_parse(*a, **k):
        raise AssertionError("parsed again: the cache entry was not used")

    monkeypatch.setattr(specfile, "parse_yaml", no_parse)
    for p in files:
        cache.read_yaml_cached(p)


def test_the_cache_is_bounded_and_evicts_the_least_recently_used(good_specs, cache_home,
                                                                 monkeypatch):
    import os

    path = good_specs / "chips.yaml"
    text = path.read_text()
    cache.read_yaml_cached(path)
    one = next(cache_home.glob("*.pickle")).stat().st_size
    monkeypatch.setattr(cache, "MAX_CACHE_BYTES", 4 * one)  # room for about four trees
    first = next(cache_home.glob("*.pickle"))
    os.utime(first, (1, 1))  # the oldest entry...
    for i in range(12):  # ...and a dozen edits, each a new entry
        path.write_text(text.replace("kind: reported}", f"kind: reported, note: v{i}}}", 1))
        cache.read_yaml_cached(path)
    kept = list(cache_home.glob("*.pickle"))
    assert sum(p.stat().st_size for p in kept) <= 4 * one * 1.05
    assert 2 <= len(kept) <= 5 and first not in kept
    assert cache.read_yaml_cached(path) == read_yaml(path)  # the newest is still served
