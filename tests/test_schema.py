"""The pandera schemas built from the field dictionary catch what the loader must refuse."""

import pandas as pd
import pandera.pandas as pa
import pytest

import trnkb.units.frames  # noqa: F401  (pint[...] columns use the project registry)
from trnkb.spec.hardware import CHIPS
from trnkb.spec.schema import TABLES, pandera_schema
from trnkb.units import DIMENSIONS, ureg


def _chips(**cols) -> pd.DataFrame:
    return pd.DataFrame({"id": pd.Series(["trainium3"], dtype="str"), **cols})


def test_valid_wide_row_passes():
    df = _chips(hbm_bandwidth=pd.Series([4.9], dtype="pint[TB/s][Float64]"))
    pandera_schema(CHIPS, list(df.columns)).validate(df)


def test_wrong_dimension_column_fails():
    df = _chips(hbm_bandwidth=pd.Series([4.9], dtype="pint[GHz][Float64]"))
    with pytest.raises(pa.errors.SchemaError, match="dimensionality"):
        pandera_schema(CHIPS, list(df.columns)).validate(df)


def test_out_of_range_magnitude_fails_in_display_units():
    # 150 TB/s of HBM bandwidth on one chip is outside the 0.1-100 TB/s plausible range
    df = _chips(hbm_bandwidth=pd.Series([150_000], dtype="pint[GB/s][Float64]"))
    with pytest.raises(pa.errors.SchemaError, match="in_range"):
        pandera_schema(CHIPS, list(df.columns)).validate(df)


def test_bad_id_fails():
    df = pd.DataFrame({"id": pd.Series(["Trainium 3"], dtype="str")})
    with pytest.raises(pa.errors.SchemaError):
        pandera_schema(CHIPS, ["id"]).validate(df)


def test_every_quantity_field_has_a_dimension_unit_and_range():
    for table in TABLES.values():
        for f in table.fields + table.prefix_fields:
            if f.kind == "quantity":
                assert f.dim and f.unit and f.lo is not None and f.hi is not None, f.name
                assert ureg.Quantity(1, f.unit).check(DIMENSIONS[f.dim]), f.name
            if f.kind == "ref":
                assert f.ref in TABLES, f.name
