"""Scale-up fabric models: graph invariants, the source's worked paths, switch counts.

"Seed 004" below is SemiAnalysis, "AWS Trainium3 Deep Dive" (004_406711927e432c17.txt).
"""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from trnkb import topology as T
from trnkb.cli import app
from trnkb.units import Q_

GENS = ("gen1", "pex90144-x8", "pex90144-x4", "gen2", "gen3")
SWITCHED = ("trn3-nl32x2-switched", "trn3-nl72x2-switched")
ALL = [(d, g) for d in SWITCHED for g in GENS] + [
    ("trn2-nl16-2d-torus", None),
    ("trn2-nl32x2-3d-torus", None),
    ("gb200-nvl72", None),
]


def fab(kb, domain, gen=None):
    return T.fabric(domain, gen, kb)


def hops(f, a, b):
    return f.hops(T.chip_name(*a), T.chip_name(*b))


# ---- graph invariants -------------------------------------------------------------


# Trainium3 switched SKUs state chip lane budgets (seed 004 lane budget); Trn2 tori and
# GB200 state none, and the tori have no switches: those cases are tested separately below
# instead of passing vacuously.
BUDGETED = [(d, g) for d in SWITCHED for g in GENS]
WITH_SWITCHES = BUDGETED + [("gb200-nvl72", None)]
TORI = [("trn2-nl16-2d-torus", None), ("trn2-nl32x2-3d-torus", None)]


@pytest.mark.parametrize(("domain", "gen"), BUDGETED)
def test_no_chip_exceeds_its_lane_budget(kb, domain, gen):
    usage = fab(kb, domain, gen).chip_lane_usage()
    # seed 004 lane budget per Trainium3: 64 PCB + 80 backplane (64 active + 16 redundant)
    # + 16 cross-rack AEC lanes
    assert {m: b for m, (_, b) in usage.items()} == {"pcb": 64, "backplane": 80, "aec": 16}
    for medium, (used, budget) in usage.items():
        assert used <= budget, medium


@pytest.mark.parametrize(("domain", "gen"), WITH_SWITCHES)
def test_no_switch_exceeds_its_lanes_or_ports(kb, domain, gen):
    usage = fab(kb, domain, gen).switch_usage().to_dict("records")
    assert usage
    for u in usage:
        if pd.notna(u["lanes_available"]) and pd.notna(u["lanes_used"]):
            assert u["lanes_used"] <= u["lanes_available"], u
        assert pd.notna(u["ports_available"]), u
        assert u["ports_used"] <= u["ports_available"], u


@pytest.mark.parametrize(("domain", "gen"), TORI)
def test_tori_have_no_switches_and_no_switch_budget(kb, domain, gen):
    # seed 004: "Trn2 only supports a 4x4x4 3D Torus mesh scaleup topology" (no switches)
    f = fab(kb, domain, gen)
    assert len(f.switch_usage()) == 0 and f.switches_per_domain == 0


@pytest.mark.parametrize(("domain", "gen"), WITH_SWITCHES)
def test_graph_counts_match_the_fabrics_row(kb, domain, gen):
    f = fab(kb, domain, gen)
    row = f.spec.id
    compared = 0
    for field, measured in (
        ("switches_per_rack", f.switch_tray_switches_per_rack),
        ("tray_switches_per_rack", f.tray_switches_per_rack),
        ("switches_per_domain", f.switches_per_domain),
        ("ports_used_per_switch", f.switch_usage()["ports_used"].iloc[0]),
    ):
        stated = kb.get(row, field)
        if stated is not None:
            assert measured == stated.magnitude, field
            compared += 1
    assert compared >= 2  # every switched row states at least rack switches and ports used


# Counts read from the source text, not from specs/ (seed 004, "Trainium3 NL32x2 Switched"
# and "NL72x2 Switched" sections): NL32x2 gen1 "two switch planes consisting of 8 switches
# each" per rack; NL72x2 gen1 "four planes of 10 160-lane PCIe switches each, 40 total" per
# rack plus "144 of the smaller PCIe switches on the Compute Trays", 18 of 20 ports used.
@pytest.mark.parametrize(
    ("domain", "rack_switches", "tray_switches", "ports_used"),
    [
        ("trn3-nl32x2-switched", 2 * 8, 0, None),
        ("trn3-nl72x2-switched", 4 * 10, 18 * 8, 20 - 2),
    ],
)
def test_gen1_graph_counts_match_the_source_text(
    kb, domain, rack_switches, tray_switches, ports_used
):
    f = fab(kb, domain, "gen1")
    assert f.switch_tray_switches_per_rack == rack_switches
    assert f.tray_switches_per_rack == tray_switches
    if ports_used is not None:
        assert f.switch_usage()["ports_used"].iloc[0] == ports_used


@pytest.mark.parametrize(("domain", "gen"), ALL)
def test_injection_never_exceeds_the_chips_scaleup_bandwidth(kb, domain, gen):
    f = fab(kb, domain, gen)
    assert f.injection_bandwidth <= f.spec.chip_bandwidth * 1.000001


def test_trn3_injection_is_144_active_lanes_at_64_gbit():
    # seed 004, "Trainium3 Server Types and Specifications Overview": 144 active PCIe Gen6
    # lanes at 64 Gbit/s each way = 1152 GB/s (the source rounds to 1.2 TB/s).
    f = T.fabric("trn3-nl72x2-switched", "gen1")
    assert f.injection_bandwidth.to("GB/s").magnitude == pytest.approx(144 * 64 / 8)


# ---- the source's worked paths (seed 004) ------------------------------------------


def test_nl32x2_gen1_paths_are_1_2_3_hops(kb):
    # seed 004, "Trainium3 NL32x2 Switched with Gen1 Switch Trays": Paths A, B, C.
    f = fab(kb, "trn3-nl32x2-switched", "gen1")
    assert hops(f, ("A", 1, "A"), ("A", 16, "A")) == 1
    assert hops(f, ("A", 1, "A"), ("A", 2, "B")) == 2
    assert hops(f, ("A", 1, "A"), ("B", 2, "B")) == 3


def test_nl32x2_gen1_same_position_is_one_hop_everywhere_in_the_rack(kb):
    # seed 004: chip A of node 1 is one switch hop from chip A of every other node.
    f = fab(kb, "trn3-nl32x2-switched", "gen1")
    assert {hops(f, ("A", 1, p), ("A", n, p)) for n in range(2, 17) for p in "AB"} == {1}


def test_nl32x2_worst_case_is_two_hops_in_gen1_and_one_in_gen2(kb):
    # seed 004, "Trainium3 NVL32x2 Switched on Gen2 Switch Trays": one hop at most in the
    # rack with Gen2, against a two-hop worst case with Gen1.
    assert fab(kb, "trn3-nl32x2-switched", "gen1").max_hops(in_rack=True) == 2
    assert fab(kb, "trn3-nl32x2-switched", "gen2").max_hops(in_rack=True) == 1
    assert fab(kb, "trn3-nl32x2-switched", "gen3").max_hops(in_rack=True) == 1


def test_nl72x2_gen1_paths_are_1_3_4_hops(kb):
    # seed 004, "Trainium3 NL72x2 Switched on Gen1 Switch Trays": Paths A, B, C.
    f = fab(kb, "trn3-nl72x2-switched", "gen1")
    assert hops(f, ("A", 1, "A"), ("A", 2, "A")) == 1
    assert hops(f, ("A", 1, "A"), ("A", 2, "C")) == 3
    assert hops(f, ("A", 1, "A"), ("B", 2, "C")) == 4


def test_nl72x2_gen1_needs_up_to_three_hops_in_a_rack(kb):
    # seed 004, "NeuronLink PCIe PHY and UALink Switches": up to three hops in one rack.
    assert fab(kb, "trn3-nl72x2-switched", "gen1").max_hops(in_rack=True) == 3


def test_nl72x2_gen2_still_crosses_the_tray_switches_and_gen3_is_all_to_all(kb):
    # seed 004: Gen2 halves the planes but neighbours still go through Scorpio P; Gen3's
    # UALink switch reaches every chip of the rack.
    g2 = fab(kb, "trn3-nl72x2-switched", "gen2")
    assert hops(g2, ("A", 1, "A"), ("A", 2, "B")) == 1
    assert hops(g2, ("A", 1, "A"), ("A", 2, "C")) == 3
    assert fab(kb, "trn3-nl72x2-switched", "gen3").max_hops(in_rack=True) == 1


def test_gb200_is_one_hop_between_any_two_gpus(kb):
    f = fab(kb, "gb200-nvl72")
    assert f.max_hops() == 1
    assert f.hop_histogram() == {1: 72 * 71 // 2}


def test_torus_diameters_are_half_the_ring_per_dimension(kb):
    # Independent: a ring of 4 has diameter 2 links; 2D = 4 links, 3D = 6 links; hops = links - 1.
    assert fab(kb, "trn2-nl16-2d-torus").max_hops() == 3
    assert fab(kb, "trn2-nl32x2-3d-torus").max_hops() == 5


# ---- counts (seed 004) -------------------------------------------------------------


def test_nl72x2_gen1_switch_counts(kb):
    # seed 004, "Trainium3 NL72x2 Switched on Gen1 Switch Trays": 4 planes x 10 = 40
    # switch-tray switches and 8 x 18 = 144 Scorpio P per rack; 184 per rack, 368 per domain.
    f = fab(kb, "trn3-nl72x2-switched", "gen1")
    assert f.switch_tray_switches_per_rack == 40
    assert f.tray_switches_per_rack == 144
    assert f.switches_per_rack == 184
    assert f.switches_per_domain == 368


def test_nl72x2_gen1_switch_uses_18_of_20_ports(kb):
    # seed 004: each 20-port switch reaches one chip per tray; 2 ports unused.
    u = fab(kb, "trn3-nl72x2-switched", "gen1").switch_usage().set_index("kind")
    assert (u.loc["switch", "ports_used"], u.loc["switch", "ports_available"]) == (18, 20)


def test_pex90144_port_widths_give_18_ports_at_x8_and_36_at_x4(kb):
    # 144 lanes / 8 = 18 ports; 144 / 4 = 36 (the source's text swaps the two).
    x8 = fab(kb, "trn3-nl72x2-switched", "pex90144-x8").switch_usage().set_index("kind")
    x4 = fab(kb, "trn3-nl72x2-switched", "pex90144-x4").switch_usage().set_index("kind")
    assert x8.loc["switch", "ports_available"] == 18
    assert x4.loc["switch", "ports_available"] == 36


def test_nl32x2_gen2_has_8_switches_per_rack(kb):
    # seed 004, "Trainium3 NVL32x2 Switched on Gen2 Switch Trays": 8 switches per rack.
    assert fab(kb, "trn3-nl32x2-switched", "gen2").switch_tray_switches_per_rack == 8


# ---- bandwidth ---------------------------------------------------------------------


def test_cross_rack_is_a_quarter_of_the_active_backplane_per_chip(kb):
    # Lane budget (seed 004, "Scale Up Networking Architecture"): 16 cross-rack lanes
    # against 64 active backplane lanes, so the source's "< 10%" does not follow.
    f = fab(kb, "trn3-nl32x2-switched", "gen1")
    ratio = T.topology_metric("trn3-nl32x2-switched", "gen1", "cross_to_backplane_ratio", kb)
    assert ratio == pytest.approx(16 / 64)
    assert f.cross_rack_bandwidth_per_chip.to("GB/s").magnitude == pytest.approx(16 * 64 / 8)


def test_two_rack_bisection_is_the_cross_rack_links(kb):
    # 144 chips x 16 lanes x 64 Gbit/s / 2 racks, one direction = 72 x 128 GB/s.
    f = fab(kb, "trn3-nl72x2-switched", "gen1")
    assert f.bisection_bandwidth.to("TB/s").magnitude == pytest.approx(72 * 128 / 1000)
    assert f.bisection_cut == "racks"


def test_single_tier_switch_bisection_is_half_the_injection(kb):
    f = fab(kb, "gb200-nvl72")
    assert f.bisection_bandwidth.to("GB/s").magnitude == pytest.approx(
        36 * f.injection_bandwidth.to("GB/s").magnitude
    )


def test_all_to_all_time_scales_with_message_size(kb):
    f = fab(kb, "trn3-nl32x2-switched", "gen2")
    t1, _ = f.all_to_all_time(Q_(1, "MB"))
    t2, _ = f.all_to_all_time(Q_(2, "MB"))
    assert t2.to("us").magnitude == pytest.approx(2 * t1.to("us").magnitude)


def test_all_to_all_on_two_racks_is_bound_by_the_cross_rack_links(kb):
    # 32 x 32 pairs cross the cut each way, 1 MB each, over 32 x 128 GB/s = 250 us.
    t, bound = fab(kb, "trn3-nl32x2-switched", "gen1").all_to_all_time(Q_(1, "MB"))
    assert bound == "bisection"
    assert t.to("us").magnitude == pytest.approx(32 * 32 * 1e6 / (32 * 128e9) * 1e6)


# ---- entry points --------------------------------------------------------------------


def test_unknown_generation_names_the_choices(kb):
    with pytest.raises(KeyError, match="gen2"):
        T.fabric("trn3-nl32x2-switched", "gen9", kb)


def test_topology_metric_reads_chip_pairs(kb):
    assert T.topology_metric("trn3-nl72x2-switched", "gen1", "hops:A/1/A:B/2/C", kb) == 4


def test_summary_table_has_one_row_per_fabric_and_plain_columns(kb):
    df = T.summary_table(kb)
    assert len(df) == len(kb.table("fabrics"))
    assert {"bisection_TBps", "injection_GBps", "max_hops_in_rack"} <= set(df.columns)
    assert df["bisection_TBps"].dtype.kind == "f"


@pytest.mark.parametrize(("domain", "gen"), ALL)
def test_every_domain_answers_topology_json(domain, gen):
    args = ["topology", domain, "--json"] + (["--switch-gen", gen] if gen else [])
    r = CliRunner().invoke(app, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    # chips per domain from the SKU names (NLxx = chips per rack) and NVIDIA's NVL72;
    # hop bounds: a 4x4 torus is at most 2+2 links apart (3 hops), 4x4x4 at most 6 (5 hops),
    # NVL72 is one NVSwitch hop
    chips = {
        "trn3-nl32x2-switched": 64,
        "trn3-nl72x2-switched": 144,
        "trn2-nl16-2d-torus": 16,
        "trn2-nl32x2-3d-torus": 64,
        "gb200-nvl72": 72,
    }[domain]
    assert out["chips"] == chips
    assert out["switches_per_rack"] == (
        out["switch_tray_switches_per_rack"] + out["tray_switches_per_rack"]
    )
    assert out["switches_per_domain"] == out["switches_per_rack"] * out["racks"]
    assert out["max_hops_in_rack"] <= out["max_hops_in_domain"]
    hand = {"trn2-nl16-2d-torus": 3, "trn2-nl32x2-3d-torus": 5, "gb200-nvl72": 1}
    if domain in hand:
        assert out["max_hops_in_domain"] == hand[domain]
    assert out["bisection_bandwidth"]["value"] > 0 and out["path_examples"]
    for e in out["path_examples"]:
        assert {"from", "to", "path", "hops"} <= set(e)
        assert e["hops"] == len(e["path"]) - 2


def test_topology_package_keeps_its_public_names_and_small_modules():
    import importlib
    from pathlib import Path

    for name in T.__all__:
        assert hasattr(T, name), name
    for module in ("spec", "build", "hops", "bandwidth", "collectives", "report", "fabric"):
        importlib.import_module(f"trnkb.topology.{module}")
    sizes = {p.name: len(p.read_text().splitlines()) for p in Path(T.__file__).parent.glob("*.py")}
    assert max(sizes.values()) <= 400, sizes


@pytest.mark.parametrize("domain, gen", [("trn3-nl72x2-switched", "gen1"),
                                         ("trn3-nl32x2-switched", "gen1"),
                                         ("trn2-nl32x2-3d-torus", None)])
def test_a_groups_hops_are_its_shortest_paths_over_the_whole_fabric(kb, domain, gen):
    # what a collective over a packed group reads (searched from the group's chips only);
    # expected: networkx shortest paths over the whole graph, minus the final link
    import networkx as nx

    f = T.fabric(domain, gen, kb)
    group = f.chips[:8] + f.chips[-2:]  # a packed group, and two chips of the other rack
    got = f.hops_among(group)
    for i, a in enumerate(group):
        for j, b in enumerate(group):
            assert got[i, j] == max(nx.shortest_path_length(f.graph, a, b) - 1, 0), (a, b)
