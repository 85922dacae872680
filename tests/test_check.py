"""Derived vs reported: the pairs the shipped KB supports, with differences by hand."""

import pytest

from trnkb.audit.check import THRESHOLD, check, coverage


@pytest.fixture(scope="module")
def table(kb):
    return check(kb)


def pair(table, rid, field, check_prefix=""):
    sub = table[(table["id"] == rid) & (table["field"] == field)
                & table["check"].str.startswith(check_prefix)]
    assert len(sub) >= 1, f"no pair for {rid}.{field}"
    return sub.iloc[0]


def test_every_derived_value_is_checked(kb):
    cov = coverage(kb)
    assert cov["derived"] == int((kb.facts["kind"] == "derived").sum()) > 100
    assert cov["checked"] == cov["derived"] and cov["share"] == 1.0
    assert cov["with_reported"] + cov["without_reported"] <= cov["derived"]


def test_trainium2_hbm_is_a_unit_ambiguity_not_a_difference(table):
    # 4 x 8 x 24 Gbit = 96 GB (seed 004) against AWS's 96 GiB = 103.08 GB
    p = pair(table, "trainium2-hbm", "capacity", "declared")
    assert p["derived"] == pytest.approx(96) and p["reported"] == pytest.approx(96 * 2**30 / 1e9)
    assert "unit ambiguity" in p["note"]


def test_b200_usable_vs_physical_is_flagged_not_hidden(table):
    # 1,440 GB / 8 = 180 GB usable (NVIDIA DGX guide) vs 192 GB physical: 6.25%
    p = pair(table, "b200-hbm", "capacity")
    assert p["relative_difference"] == pytest.approx(12 / 192) and p["flagged"]


def test_domain_totals_are_checked(table):
    # 144 x 2,517 TFLOPS = 362,448 TFLOPS (AWS UltraServer table)
    p = pair(table, "trn3-nl72x2-switched", "domain_fp8", "domain-total")
    assert p["derived"] == pytest.approx(362.448)


def test_trn3_fp8_at_the_bf16_rate_differs_from_the_chip_table(table):
    # NKI guide: FP8 at the BF16 rate, 671 TFLOPS, vs the chip table's 2,517: 73.3%
    p = pair(table, "trainium3", "dense_fp8", "declared")
    assert p["relative_difference"] == pytest.approx(1 - 671 / 2517)


def test_never_compares_a_bidirectional_total_with_a_per_direction_figure(kb, table):
    facts = kb.facts
    for r in table.itertuples():
        group = facts[(facts["id"] == r.id) & (facts["field"] == r.field)]
        reported = group[(group["source"] == r.reported_source) & (group["kind"] != "derived")]
        assert len(reported) >= 1, r
        rep_dir = set(reported["direction"])
        if r.check.startswith("declared"):
            derived = group[group["kind"] == "derived"]
            assert rep_dir <= set(derived["direction"]), r  # same direction on both sides
        elif r.check == "scaleup-bandwidth":
            assert rep_dir == {"per-direction"}, r
        elif r.check == "scaleup-bandwidth (bidir)":
            assert rep_dir == {"bidirectional"}, r
    # e.g. TPU v5p ICI: 600 GB/s per direction (derived) vs 4800 Gbit/s of unstated direction
    assert coverage(kb)["not_comparable"] >= 1


def test_flags_follow_the_threshold(table):
    # issue 9 §3: "Differences beyond 2% are listed"; the difference recomputed by hand
    # as |derived - reported| / |reported| from the two values in each row
    assert THRESHOLD == 0.02
    by_hand = (table["derived"] - table["reported"]).abs() / table["reported"].abs()
    assert by_hand.to_numpy() == pytest.approx(table["relative_difference"].to_numpy())
    assert ((by_hand > 0.02) == table["flagged"]).all()
    assert table["flagged"].any() and not table["flagged"].all()


def test_cli_reports_coverage_and_lists_differences_plainly(kb):
    from typer.testing import CliRunner

    from trnkb.cli import app

    res = CliRunner().invoke(app, ["check"])
    assert res.exit_code == 0, res.output
    n = int((kb.facts["kind"] == "derived").sum())
    assert f"coverage: {n} of {n} derived values checked (100%)" in res.output
    assert not any(line.lstrip().startswith("!!") for line in res.output.splitlines())
    # differences are listed under a summary, e.g. the Trn3 FP8 conflict
    assert "differ by more than 2%" in res.output and "trainium3.dense_fp8" in res.output


# --- unit spellings written into data: pint's default registry must read them as trnkb does
# (pint's default reads ``Gb`` as gilbert, a magnetomotive force, not a gigabit).

_DEFAULT_PINT = None


def _default_pint():
    global _DEFAULT_PINT
    if _DEFAULT_PINT is None:
        import pint

        _DEFAULT_PINT = pint.UnitRegistry()
    return _DEFAULT_PINT


def _misread_tokens(unit: str) -> list[str]:
    """Unit words of ``unit`` that are read as something no KB field measures (``Gb`` is
    gilbert, [current], in both registries) or that pint's default registry reads as
    something else than trnkb's registry: another dimension, or another number of bits.
    Words the default registry does not define (FLOP) are checked against trnkb's only."""
    import re

    import pint

    from trnkb.units import DIMENSIONS, ureg

    default = _default_pint()
    # base dimensions the KB's fields are made of ([current], gilbert's, is not one)
    allowed = {d for v in DIMENSIONS.values() if v for d in ureg.get_dimensionality(v)}
    bad = []
    for tok in re.findall(r"[A-Za-zµ°]+", unit):
        t = ureg.Quantity(1, tok)
        if not set(t.dimensionality) <= allowed:
            bad.append(tok)
            continue
        try:
            d = default.Quantity(1, tok)
        except pint.UndefinedUnitError:
            continue
        if t.check("[information]"):  # default pint has bits dimensionless
            ok = d.dimensionless and d.to("bit").magnitude == pytest.approx(t.to("bit").magnitude)
        else:
            ok = (str(d.dimensionality) == str(t.dimensionality)
                  and d.to_base_units().magnitude == pytest.approx(t.to_base_units().magnitude))
        if not ok:
            bad.append(tok)
    return bad


def test_misread_tokens_catches_pints_gilbert():
    # the check itself can fail: pint's own formatting of Gbit/s is read back as gilbert
    assert _misread_tokens("Gb / s") == ["Gb"]
    assert _misread_tokens("Gbit/s") == [] and _misread_tokens("TFLOP/s") == []


def test_derivation_texts_spell_units_as_pint_reads_them(kb):
    import re

    texts = [d for d in kb.facts["derivation"].dropna() if d]
    assert texts, "no derivation text to check"
    units = set()
    for d in texts:
        assert not re.search(r"\bGb\b|\bTb\b|\bMb\b", d), d
        units |= {m.group(1) for m in re.finditer(
            r"= -?[\d,]*\.?\d+(?:e[-+]?\d+)? ([^\[\]=,;]+?) \[", d)}
    assert "Gbit/s" in units  # the scale-out shares are derived from Gbit/s instance figures
    assert {u: _misread_tokens(u) for u in units if _misread_tokens(u)} == {}


def test_check_json_units_spell_units_as_pint_reads_them():
    import json

    from typer.testing import CliRunner

    from trnkb.cli import app

    res = CliRunner().invoke(app, ["check", "--json"])
    assert res.exit_code == 0, res.output
    pairs = json.loads(res.stdout)["pairs"]
    units = {p["unit"] for p in pairs if p.get("unit")}
    assert units
    assert {u: _misread_tokens(u) for u in units if _misread_tokens(u)} == {}
