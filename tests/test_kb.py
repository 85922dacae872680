"""Loader, wide views, provenance and conflicts, on tests/data/good and the shipped specs."""

import pint_pandas
import pytest

import trnkb
from trnkb.spec.schema import TABLES
from trnkb.units import Q_


def test_value_is_the_preferred_quantity_as_written(good_specs):
    kb = trnkb.load(good_specs)
    assert kb.value("trainium3", "hbm_capacity") == Q_("144 GB")
    assert kb.provenance("trainium3", "hbm_capacity")["source"] == "semianalysis-trn3"


def test_values_keeps_every_source(good_specs):
    kb = trnkb.load(good_specs)
    vals = kb.values("trainium3", "hbm_capacity")
    assert list(vals["source"]) == ["semianalysis-trn3", "aws-neuron-trn3"]
    assert list(vals["preferred"]) == [True, False]


def test_wide_table_has_pint_columns_in_display_units(good_specs):
    chips = trnkb.load(good_specs).table("chips")
    assert isinstance(chips["hbm_bandwidth"].dtype, pint_pandas.PintType)
    assert str(chips["hbm_bandwidth"].pint.units) == "terabyte / second"
    assert chips.loc[0, "hbm_bandwidth"].magnitude == pytest.approx(4.9)
    assert chips.loc[0, "cores"] == 8


def test_gb_versus_gib_is_a_unit_ambiguity_not_two_memories(good_specs):
    c = trnkb.load(good_specs).conflicts
    row = c[(c["id"] == "trainium3") & (c["field"] == "hbm_capacity")].iloc[0]
    assert row["type"] == "unit-ambiguity"
    # 144 GiB = 154.6 GB: 6.9 % apart
    assert row["relative_difference"] == pytest.approx(1 - 144e9 / (144 * 2**30))


def test_disagreeing_values_beyond_tolerance_are_conflicts(good_specs):
    c = trnkb.load(good_specs).conflicts
    row = c[c["field"] == "hbm_bandwidth"].iloc[0]
    assert row["type"] == "value"
    assert row["relative_difference"] == pytest.approx(0.2 / 4.9)


def test_values_within_tolerance_are_not_conflicts(good_specs):
    text = (good_specs / "chips.yaml").read_text().replace("4.7 TB/s", "4.88 TB/s")
    (good_specs / "chips.yaml").write_text(text)
    c = trnkb.load(good_specs).conflicts
    assert (c["field"] != "hbm_bandwidth").all()


def test_unknown_id_and_missing_field_raise_keyerror(good_specs):
    kb = trnkb.load(good_specs)
    with pytest.raises(KeyError, match="no row with id"):
        kb.value("trainium9", "tdp")
    with pytest.raises(KeyError, match="no value for 'tdp'"):
        kb.value("trainium3", "tdp")
    assert kb.get("trainium3", "tdp") is None


def test_ids_are_unique_across_tables(good_specs):
    (good_specs / "hbm.yaml").write_text(
        "- id: trainium3\n  name: x\n"
        "  chip: {value: trainium3, source: semianalysis-trn3, locator: x, kind: reported}\n")
    with pytest.raises(trnkb.SpecError, match="duplicate id"):
        trnkb.load(good_specs)


@pytest.fixture(scope="module")
def shipped(kb):
    return kb


def test_shipped_specs_load_and_every_fact_has_a_resolving_source(shipped):
    assert len(shipped.facts) > 0
    assert set(shipped.facts["source"]) <= set(shipped.sources["id"])
    assert shipped.facts["locator"].str.len().min() > 0
    assert set(shipped.facts["kind"]) <= {"reported", "estimate", "derived"}


def test_shipped_tables_validate_against_their_schemas(shipped):
    # each quantity column checked by hand against its Field: same dimension as the
    # field's unit, magnitudes in [lo, hi] in that unit; then a corrupted copy is refused
    import re

    import pandera.errors

    from trnkb.spec.fields import ID_PATTERN
    from trnkb.spec.schema import pandera_schema
    from trnkb.units import ureg

    checked = 0
    for name, table in TABLES.items():
        df = shipped.table(name)
        assert df["id"].map(lambda i: re.fullmatch(ID_PATTERN, i) is not None).all(), name
        for col in df.columns:
            f = table.field(col)
            if f is None or f.kind != "quantity":
                continue
            assert df[col].pint.units.dimensionality == ureg.parse_units(f.unit).dimensionality
            m = df[col].pint.to(f.unit).pint.magnitude.astype("float64").dropna()
            assert ((m >= f.lo) & (m <= f.hi)).all(), f"{name}.{col}"
            checked += 1
        pandera_schema(table, list(df.columns)).validate(df)
    assert checked > 50
    chips = shipped.table("chips")
    bad = chips.copy()
    bad["hbm_bandwidth"] = bad["hbm_bandwidth"] * 1e6  # TB/s -> absurd EB/s-scale values
    with pytest.raises(pandera.errors.SchemaError):
        pandera_schema(TABLES["chips"], list(bad.columns)).validate(bad)


def test_preferred_is_unique_per_field(shipped):
    counts = shipped.facts.groupby(["id", "field"])["preferred"].sum()
    assert (counts == 1).all()


def _conflict_type_after_edit(specs, old: str, new: str, field: str) -> str:
    """Replace ``old`` by ``new`` in chips.yaml and return the type of ``field``'s conflict."""
    path = specs / "chips.yaml"
    path.write_text(path.read_text().replace(old, new))
    c = trnkb.load(specs).conflicts
    return c[c["field"] == field].iloc[0]["type"]


def test_values_with_different_qualifiers_are_labelled_as_such(good_specs):
    assert _conflict_type_after_edit(
        good_specs, 'locator: "architecture page", kind: reported}',
        'locator: "architecture page", kind: reported, qualifier: usable}',
        "hbm_bandwidth") == "qualifier"


# The ids issue #2 fixes as a contract (users script against them).
REQUIRED_CHIPS = """trainium1 trainium2 trainium3 trainium4 h100 h200 b200 b300 gb200 gb300 rubin
    mi300x mi325x mi355x mi455x tpu-v5e tpu-v5p tpu-v6e tpu-v7 graviton4""".split()
REQUIRED_DOMAINS = """trn2-nl16-2d-torus trn2-nl32x2-3d-torus trn3-nl32x2-switched
    trn3-nl72x2-switched gb200-nvl72 gb200-nvl36x2 gb300-nvl72 vr-nvl144 mi450x-ualoe72
    tpu-v7-pod tpu-v5p-pod trn3-nl16-2d-torus trn3-nl32x2-3d-torus""".split()


def test_every_contract_id_has_a_row(shipped):
    assert set(REQUIRED_CHIPS) <= set(shipped.ids("chips"))
    assert set(REQUIRED_DOMAINS) <= set(shipped.ids("racks"))


def test_trainium3_headline_fields_are_sourced(shipped):
    for field in ("hbm_capacity", "hbm_bandwidth", "dense_bf16", "dense_mxfp8",
                  "scaleup_lanes", "scaleup_bandwidth"):
        assert shipped.provenance("trainium3", field)["source"] in set(shipped.sources["id"])
    # AWS Neuron docs: 2,517 dense MXFP8 TFLOPS per chip
    assert shipped.value("trainium3", "dense_mxfp8").to("TFLOPS").magnitude == pytest.approx(2517)


def test_tb_versus_gib_of_the_same_memory_is_a_unit_ambiguity(good_specs):
    # AWS writes one UltraServer's HBM as 9,216 GiB on one page and "9 TB" on another:
    # 9 TiB = 9,216 GiB, so the same memory under two prefix conventions.
    assert _conflict_type_after_edit(
        good_specs, "- {value: 144 GB, source: semianalysis-trn3",
        "- {value: 0.140625 TB, source: semianalysis-trn3", "hbm_capacity") == "unit-ambiguity"
