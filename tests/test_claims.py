"""The claims registry: every claim evaluates, verdicts follow from the numbers, bad
claims are errors (not silent unverifiables)."""

import math as _math
from pathlib import Path

import pytest
import yaml as _yaml

import trnkb
from trnkb.audit.claims import evaluate_claims, validate_claims
from trnkb.audit.claims.history import changes_since, record_release
from trnkb.audit.claims.measured import predicted_range
from trnkb.spec.specfile import SpecError
from trnkb.units import Q_


@pytest.fixture(scope="module")
def claims(kb):
    return {c.id: c for c in validate_claims(kb)}


def _raw_claims():
    """The claim entries as plain YAML (PyYAML, not trnkb's loader): the independent oracle."""
    spec = Path(trnkb.__file__).resolve().parent.parent / "specs"
    entries = _yaml.safe_load((spec / "claims.yaml").read_text(encoding="utf-8"))
    for extra in ("claims/tools.yaml", "claims/measured.yaml"):
        entries += _yaml.safe_load((spec / extra).read_text(encoding="utf-8"))["claims"]
    return {e["id"]: e for e in entries}


def test_every_claim_in_the_yaml_evaluates_and_there_are_well_over_200(claims):
    # issue 14: "Expect well over 200 claims in all"; every YAML entry yields one claim
    raw = _raw_claims()
    assert set(claims) == set(raw)
    assert len(claims) > 200


def _holds(op, computed, claimed, tolerance):
    """Re-decide a numeric comparison by hand, in the claimed value's unit."""
    if op == "between":
        lo, hi = sorted(q.to(computed.units).magnitude for q in claimed)
        return lo <= computed.magnitude <= hi
    c, x = computed.to(claimed.units).magnitude, claimed.magnitude
    return {
        "==": _math.isclose(c, x, rel_tol=1e-9, abs_tol=1e-12),  # "==": floating point only
        "~": abs(c - x) <= (tolerance or 0) * abs(x),
        "<": c < x,
        ">": c > x,
        "<=": c <= x,
        ">=": c >= x,
    }[op]


def test_numeric_verdicts_agree_with_a_hand_comparison(claims):
    # contradicted claims must really fail their comparison, supported ones really pass it
    checked = 0
    for c in claims.values():
        if c.verdict == "unverifiable" or c.compare not in (
            "==",
            "~",
            "<",
            ">",
            "<=",
            ">=",
            "between",
        ):
            continue
        assert _holds(c.compare, c.computed, c.claimed, c.tolerance) == (
            c.verdict == "supported"
        ), c.id
        checked += 1
    # 131 + 97 + 53 + 12 + 14 + 3 + 3 + 2 + 2 + 1 + 1 numeric claims at the time of writing
    assert checked >= 300


def test_text_verdicts_agree_with_a_hand_comparison(claims):
    ops = {
        "is": lambda c, x: c.strip().lower() == x.strip().lower(),
        "contains": lambda c, x: x.strip().lower() in c.lower(),
        "lacks": lambda c, x: x.strip().lower() not in c.lower(),
    }
    text = [c for c in claims.values() if c.compare in ops and c.verdict != "unverifiable"]
    assert len(text) >= 30
    for c in text:
        assert ops[c.compare](c.computed, c.claimed) == (c.verdict == "supported"), c.id


def test_only_claims_without_an_expression_are_unverifiable(claims):
    # issue 14: a claim that cannot be evaluated is an error, never a silent unverifiable;
    # so an unverifiable statement has no `compute:` in its YAML (measured ones lack a run)
    raw = _raw_claims()
    for c in claims.values():
        if c.verdict == "unverifiable" and c.kind == "statement":
            assert "compute" not in raw[c.id], c.id


@pytest.mark.parametrize(
    ("cid", "verdict"),
    [
        ("s004-fabric-3-layer-12t8-100g-524288", "supported"),
        ("s004-nl72x2-184-switches-per-rack", "supported"),
        ("s004-cross-rack-under-10pct-of-backplane", "contradicted"),  # 16/64 = 25%
        ("s004-nl72x2-64-chips-per-rack-slip", "contradicted"),  # 18 x 4 = 72
        ("s001-lnc1-36gb", "contradicted"),  # 144/8 = 18 GB
        ("s001-nl72x2-144gb-per-rack", "contradicted"),
        ("s002-2x-hbm-capacity", "contradicted"),  # 144/96 = 1.5
        ("s000-hbm-bandwidth-over-3-tbs", "supported"),
    ],
)
def test_verdicts_follow_from_the_numbers(claims, cid, verdict):
    assert claims[cid].verdict == verdict


def test_lnc2_claim_computes_36_gb(claims):
    c = claims["s004-lnc2-36gb-per-device"]
    assert c.computed.to("GB").magnitude == pytest.approx(36)
    assert any(i.get("kb") == "trainium3.hbm_capacity" for i in c.inputs)


def _claims_file(tmp_path, text: str) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(text, encoding="utf-8")
    return path


BASE = """- id: x
  source: semianalysis-trn3
  locator: here
  statement: a test
  quantity: something
"""


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            "  compute: {kb: trainium3.no_such_field}\n  compare: '=='\n  claimed: 1\n",
            "no KB value",
        ),
        (
            "  compute: {kb: no-such-chip.hbm_capacity}\n  compare: '=='\n  claimed: 1 GB\n",
            "no KB value",
        ),
        (
            "  compute: {kb: trainium3.hbm_capacity}\n  compare: '=='\n  claimed: 1 TB/s\n",
            "dimension",
        ),
        (
            "  compute: {calc: fabric-size, args: {layers: 2}}\n  compare: '=='\n  claimed: 1\n",
            "missing",
        ),
        (
            "  compute: {kb: trainium3.hbm_capacity}\n  compare: '~'\n  claimed: 144 GB\n",
            "tolerance",
        ),
        ("  compare: '=='\n  claimed: 1\n", "reason"),
        (
            "  compute: {eval: '__import__(\"os\")'}\n  compare: '=='\n  claimed: 1\n",
            "exactly one of",
        ),
    ],
)
def test_a_claim_that_cannot_be_evaluated_is_an_error(kb, tmp_path, body, problem):
    with pytest.raises(SpecError) as e:
        validate_claims(kb, _claims_file(tmp_path, BASE + body))
    assert problem in str(e.value)
    assert "claims.yaml:1: x" in str(e.value)


def test_ratio_of_calculators_without_eval(kb, tmp_path):
    body = (
        "  compute:\n    ratio:\n"
        "      - {calc: fabric-size, args: {switch-bandwidth: 51.2 Tbit/s, "
        "port-speed: 100 Gbit/s, layers: 2}}\n"
        "      - {calc: fabric-size, args: {switch-bandwidth: 51.2 Tbit/s, "
        "port-speed: 400 Gbit/s, layers: 2}}\n"
        "  compare: between\n  claimed: [15, 17]\n"
    )
    claims, errors = evaluate_claims(kb, _claims_file(tmp_path, BASE + body))
    assert errors == [] and claims[0].verdict == "supported"
    assert claims[0].computed.magnitude == 16


# ---- issue 14: operations table, comparisons, history, coverage, measured, tools ----


def _write_claims(tmp_path, entries):
    p = tmp_path / "claims.yaml"
    p.write_text(_yaml.safe_dump(entries, sort_keys=False))
    return p


def _one(kb, tmp_path, **entry):
    base = {
        "id": "t-claim",
        "source": "semianalysis-trn3",
        "locator": "x",
        "statement": "s",
        "quantity": "q",
    }
    claims, errors = evaluate_claims(kb, _write_claims(tmp_path, [{**base, **entry}]))
    return claims, errors


def test_ratio_of_kb_values_matches_an_independent_division(kb, tmp_path):
    # 144 GB / 96 GB = 1.5 (seed 004 capacities), computed here by hand
    claims, errors = _one(
        kb,
        tmp_path,
        compute={"ratio": [{"kb": "trainium3.hbm_capacity"}, {"kb": "trainium2.hbm_capacity"}]},
        compare="==",
        claimed=144 / 96,
    )
    assert not errors and claims[0].verdict == "supported"


def test_tolerance_edges_decide_the_verdict(kb, tmp_path):
    # 2517 / 1299 = 1.9376...; a 5% band around 2 (1.9-2.1) holds it, a 3% band (1.94-2.06) does not
    expr = {"ratio": [{"kb": "trainium3.dense_mxfp8"}, {"kb": "trainium2.dense_fp8"}]}
    ok, _ = _one(kb, tmp_path, compute=expr, compare="~", tolerance=0.05, why="w", claimed=2)
    bad, _ = _one(kb, tmp_path, compute=expr, compare="~", tolerance=0.03, why="w", claimed=2)
    assert ok[0].verdict == "supported" and bad[0].verdict == "contradicted"
    assert bad[0].relative_difference == pytest.approx(abs(2517 / 1299 - 2) / 2)


def test_tolerance_without_why_is_an_error(kb, tmp_path):
    _, errors = _one(kb, tmp_path, compute=1, compare="~", tolerance=0.05, claimed=1)
    assert errors and "why" in errors[0]


def test_division_by_zero_is_a_clear_error_not_a_crash(kb, tmp_path):
    _, errors = _one(
        kb, tmp_path, compute={"ratio": [1, {"difference": [2, 2]}]}, compare="==", claimed=1
    )
    assert len(errors) == 1 and "divides by zero" in errors[0]


def test_zero_claimed_value_has_no_relative_difference(kb, tmp_path):
    claims, _ = _one(kb, tmp_path, compute=3, compare=">", claimed=0)
    assert claims[0].verdict == "supported" and claims[0].relative_difference is None


def test_text_comparisons_on_kb_text(kb, tmp_path):
    yes, _ = _one(
        kb, tmp_path, compute={"text": "trainium3.process_node"}, compare="contains", claimed="n3p"
    )
    no, _ = _one(
        kb, tmp_path, compute={"text": "trainium3.process_node"}, compare="is", claimed="TSMC N5"
    )
    assert yes[0].verdict == "supported" and no[0].verdict == "contradicted"


def test_dtype_operation_reads_ml_dtypes(kb, tmp_path):
    # OCP MX spec: the E8M0 scale has no mantissa bits; E4M3 has three
    claims, errors = _one(
        kb,
        tmp_path,
        compute={
            "difference": [
                {"dtype": {"name": "float8_e4m3fn", "metric": "mantissa_bits"}},
                {"dtype": {"name": "float8_e8m0fnu", "metric": "mantissa_bits"}},
            ]
        },
        compare="==",
        claimed=3,
    )
    assert not errors and claims[0].verdict == "supported"


def test_between_and_ordering_comparisons(kb, tmp_path):
    inside, _ = _one(kb, tmp_path, compute=5, compare="between", claimed=[4, 6])
    outside, _ = _one(kb, tmp_path, compute=7, compare="between", claimed=[4, 6])
    ge, _ = _one(kb, tmp_path, compute=6, compare=">=", claimed=6)
    assert [inside[0].verdict, outside[0].verdict, ge[0].verdict] == [
        "supported",
        "contradicted",
        "supported",
    ]


def test_predicted_range_reads_the_documented_shapes():
    unit = Q_(1, "1/s")
    assert predicted_range({"m": (Q_(3, "1/s"), Q_(1, "1/s"))}, "m", unit)[0].magnitude == 1
    assert predicted_range({"m": {"low": 2, "high": 5}}, "m", Q_(1, ""))[1].magnitude == 5
    with pytest.raises(ValueError):
        predicted_range({"m": Q_(1, "GB")}, "m", unit)


def test_history_lists_what_moved(kb, tmp_path):
    from trnkb.audit.claims.core import Claim

    def c(i, v):
        return Claim(i, "s", "l", "st", "q", "==", None, None, v)

    path = tmp_path / "history.yaml"
    record_release(
        "1.0", [c("a", "supported"), c("b", "contradicted"), c("gone", "supported")], path
    )
    moved = changes_since(
        "1.0", [c("a", "supported"), c("b", "supported"), c("new", "unverifiable")], path
    )
    assert {(m.id, m.before, m.after) for m in moved} == {
        ("b", "contradicted", "supported"),
        ("new", "(new)", "unverifiable"),
        ("gone", "supported", "(removed)"),
    }
    with pytest.raises(KeyError):
        changes_since("0.9", [], path)


def test_release_0_1_0_is_recorded_for_every_original_claim(kb):
    from trnkb.audit.claims.history import history_path, read_history

    rel = {r["version"]: r for r in read_history(history_path(kb))}
    assert len(rel["0.1.0"]["verdicts"]) == 122  # the registry at commit cc65f25


def test_every_seed_section_with_statements_has_claims(kb, claims):
    from trnkb.audit.claims.coverage import NO_SECTION, coverage_path, coverage_table

    df = coverage_table(list(claims.values()), coverage_path(kb))
    assert NO_SECTION not in set(df.section)
    assert not df[(df.statements > 0) & (df.claims == 0)].shape[0]
    assert len(claims) > 200


def test_tool_diagnosis_finds_gib_vs_gb(kb, claims):
    from trnkb.audit.claims.diagnose import diagnose

    # GenZ types H100 memory as 80 and multiplies by 1024 MB: 80 GiB = 85.9 GB vs 80 GB
    c = claims["genz-h100-gpu-memory-size"]
    assert c.verdict == "contradicted"
    assert c.claimed.to("GB").magnitude / 80 == pytest.approx(2**30 / 1e9)
    assert "GiB" in diagnose(c, kb)


def test_tool_claims_cover_four_tools(claims):
    tools = {c.tool.get("name") for c in claims.values() if c.kind == "tool"}
    assert tools == {"mlsysim", "scaling-book", "llm-viewer", "genz"}


def test_audit_mlsysim_runs_when_installed(kb):
    pytest.importorskip(
        "mlsysim",
        reason="optional extra [audit] not installed: "
        "pip install 'trnkb[audit]' to run the MLSys·im audit",
    )
    from trnkb.audit.claims.audit import audit_mlsysim

    version, rows = audit_mlsysim(kb)
    assert rows and version
    tr2 = next(r for r in rows if r.key == "Trainium2:compute.peak_flops")
    # AWS: Trainium2 dense BF16 is 667 TFLOP/s; MLSys·im 0.3.0 ships 380
    assert not tr2.agrees or tr2.changed
    assert _math.isclose(tr2.kb_value.to("TFLOPS").magnitude, 667)
    # importing mlsysim must leave trnkb's registry as pint's application registry: pint
    # unpickles remembered claims evaluations into it (trnkb units such as TFLOPS)
    import pickle

    import pint

    from trnkb.units import Q_, ureg

    assert pint.get_application_registry().get() is ureg
    assert pickle.loads(pickle.dumps(Q_(667, "TFLOPS"))) == Q_(667, "TFLOPS")


def _cli(*args):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "trnkb", *args], capture_output=True, text=True, timeout=600
    )


def test_cli_changed_since_the_previous_release():
    import json

    out = _cli("claims", "--changed-since", "0.1.0", "--json")
    assert out.returncode == 0, out.stderr
    moved = json.loads(out.stdout)
    # every claim added since 0.1.0 is listed as new; none of the 122 original ones vanished
    assert any(m["before"] == "(new)" for m in moved)
    assert not any(m["after"] == "(removed)" for m in moved)
    bad = _cli("claims", "--changed-since", "9.9.9")
    assert (
        bad.returncode == 1
        and "no recorded release" in bad.stderr
        and "Traceback" not in bad.stderr
    )


def test_cli_audit_mlsysim_prints_both_sources():
    import json

    pytest.importorskip(
        "mlsysim",
        reason="optional extra [audit] not installed: "
        "pip install 'trnkb[audit]' to run `trnkb audit mlsysim`",
    )
    out = _cli("audit", "mlsysim", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["disagree"] == len(data["rows"]) > 0
    row = next(r for r in data["rows"] if r["mlsysim_key"] == "Trainium2:compute.peak_flops")
    assert row["kb_source"] and row["mlsysim"].startswith("380")


def test_audit_table_orders_verdicts_and_never_shows_inf(claims):
    from trnkb.audit.claims.views import VERDICT_ORDER, audit_table

    t = audit_table(list(claims.values()))
    order = [VERDICT_ORDER.index(v) for v in t["verdict"]]
    assert order == sorted(order)
    assert t["gap"].dropna().map(_math.isfinite).all()
    assert (t["reason"].str.len() > 0).all()  # every verdict says why
    assert t["statement"].str.endswith("...").sum() == 0


def test_measured_evidence_covers_four_vendors(kb, claims):
    measured = [c for c in claims.values() if c.kind == "measured"]
    vendors = set()
    for c in measured:
        rack = c.measured.get("system")
        try:
            chip = kb.table("racks").set_index("id").loc[rack, "chip"]
            vendors.add(kb.table("chips").set_index("id").loc[chip, "vendor"])
        except KeyError:
            continue
    assert {"AWS", "NVIDIA", "AMD", "Google"} <= vendors


@pytest.mark.parametrize("label", ["", "x" * 100_000, "0", "latest", "1e400", "../0.2.0"])
def test_record_refuses_what_is_not_a_release_number(label, tmp_path):
    path = tmp_path / "history.yaml"
    with pytest.raises(ValueError, match="not a release number"):
        record_release(label, [], path)
    assert not path.exists()
