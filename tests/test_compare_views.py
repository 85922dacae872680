"""Comparison views no other test called (issue 15 §1): rows, columns and units a view must
hold for chips with sourced values, checked against the sources or hand arithmetic.

"Seed 004" is SemiAnalysis, "AWS Trainium3 Deep Dive" (004_406711927e432c17.txt).
"""

import pytest

from trnkb import compare
from trnkb import topology as T
from trnkb.compare import memory, network, power, tables
from trnkb.units import Q_, parse


def test_accelerators_list_every_vendors_accelerator_and_no_cpu(kb):
    ids = compare.accelerators(kb)
    # one chip per vendor family with figures in specs/chips.yaml
    assert {"trainium3", "trainium2", "h100", "b200", "mi300x", "tpu-v5p"} <= set(ids)
    # Graviton4 and Grace are CPUs (AWS / NVIDIA product pages), not accelerators
    assert "graviton4" not in ids and "grace" not in ids
    assert len(ids) == len(set(ids))


def test_rack_skus_of_trainium3_are_the_four_seed_004_skus(kb):
    skus = compare.rack_skus(kb, "trainium3")
    # seed 004 names NL16 2D Torus, NL32x2 3D Torus, NL32x2 Switched and NL72x2 Switched;
    # world sizes 16, 64, 64 and 144 chips
    assert len(skus) == 4
    for name, chips in (("NL16 2D Torus", 16), ("NL32x2 3D Torus", 64),
                        ("NL32x2 Switched", 64), ("NL72x2 Switched", 144)):
        assert any(name in s and f"({chips} chips" in s for s in skus), name


def test_claims_view_has_one_row_per_claim_and_counts_add_up(kb):
    from trnkb.audit.claims import validate_claims

    view = compare.claims_view(kb)
    claims = validate_claims(kb)
    assert list(view["id"]) == [c.id for c in claims]
    assert {"verdict", "claimed", "computed", "source", "statement"} <= set(view.columns)
    counts = compare.verdict_counts(view)
    assert list(counts.columns) == ["source", "verdict", "claims"]
    # counted by hand from the view: every (source, verdict) pair and the total
    assert counts["claims"].sum() == len(view)
    by_hand = view.groupby(["source", "verdict"]).size()
    for _, r in counts.iterrows():
        assert r["claims"] == by_hand[(r["source"], r["verdict"])]


def test_memory_view_rebuilds_trainium3_hbm_from_stacks(kb):
    m = memory.memory_view(kb).set_index("id")
    row = m.loc["trainium3-hbm"]
    # seed 004: 4 stacks of 12-high 24 Gbit HBM3E at 9.6 Gbit/s per pin, 1024-bit bus:
    # 4 x 12 x 24 Gbit / 8 = 144 GB; 4 x 1024 x 9.6 Gbit/s / 8 = 4.9152 TB/s
    assert (row["stacks"], row["stack_height"], row["die_density_Gbit"]) == (4, 12, 24)
    assert row["capacity_derived_GB"] == pytest.approx(4 * 12 * 24 / 8)
    assert row["bandwidth_derived_TBps"] == pytest.approx(4 * 1024 * 9.6 / 8 / 1000)
    # the vendor's 4.9 TB/s (AWS Trainium3 page) against the derived figure
    assert row["bandwidth_TBps"] == pytest.approx(4.9)
    assert row["bandwidth_ratio"] == pytest.approx(4.9152 / 4.9, rel=1e-4)


def test_lnc_memory_splits_trainium3_hbm_per_logical_device(kb):
    df = memory.lnc_memory(kb, "trainium3").set_index("lnc")
    # 8 physical cores (AWS Neuron docs); 144 GiB (AWS) / (8 / LNC) logical devices
    total_gb = 144 * 2**30 / 1e9
    assert list(df["logical_devices"]) == [8 // lnc for lnc in df.index]
    for lnc, r in df.iterrows():
        assert r["memory_GB"] == pytest.approx(total_gb / (8 // lnc))


def test_hop_histograms_of_a_4x4_torus_by_hand(kb):
    f = T.fabric("trn2-nl16-2d-torus", None, kb)
    h = network.hop_histograms([f]).set_index("hops")
    # 4x4 torus (wrap-around): per chip, links away 1:4, 2:6, 3:4, 4:1 -> hops = links - 1;
    # unordered pairs: 16 x n / 2
    assert dict(h["pairs"]) == {0: 32, 1: 48, 2: 32, 3: 8}
    assert h["pairs"].sum() == 16 * 15 // 2
    assert h["share"].sum() == pytest.approx(1.0)


def test_graph_layout_draws_every_chip_and_link_of_the_torus(kb):
    f = T.fabric("trn2-nl16-2d-torus", None, kb)
    nodes, edges = network.graph_layout(f)
    # 16 chips; a 4x4 torus has 2 x 16 = 32 links (each chip 4 links, each link 2 chips)
    assert len(nodes) == 16 and set(nodes["kind"]) == {"chip"}
    assert f.graph.number_of_edges() == 32
    # 24 neighbour links in the grid, 8 wrap-around links each drawn as two stubs
    assert (edges["medium"] == "torus").sum() == 24
    assert (edges["medium"] == "torus (wrap-around)").sum() == 2 * 8
    assert {"x", "y", "x2", "y2", "medium"} <= set(edges.columns)
    assert nodes[["x", "y"]].drop_duplicates().shape[0] == 16  # no two chips drawn on top
    again, _ = network.graph_layout(f)
    assert again.equals(nodes)  # byte-stable drawing


def test_port_speeds_are_distinct_bit_rates_in_order(kb):
    speeds = network.port_speeds(kb)
    mags = [s.to("Gbit/s").magnitude for s in speeds]
    assert mags == sorted(set(mags))
    assert 100 in mags and 400 in mags  # seed 004: 100G and 400G scale-out ports
    assert all(str(s.dimensionality) == "[information] / [time]" for s in speeds)


def test_fabric_sweep_reproduces_seed_004s_three_layer_figure(kb):
    df = network.fabric_sweep(kb)
    r = df[(df["switch_Tbps"] == 12.8) & (df["port_Gbps"] == 100)].set_index("layers")
    # 12.8 Tbit/s / 100 Gbit/s = radix 128; folded Clos: 1 layer 128, 2 layers k^2/2 = 8192,
    # 3 layers k^3/4 = 524,288 endpoints (seed 004's "524,288" figure)
    assert list(r["radix"]) == [128, 128, 128]
    assert list(r["endpoints"]) == [128, 128**2 // 2, 128**3 // 4]
    assert r.loc[3, "source"]


def test_tor_fabrics_radix_is_switch_over_port_bandwidth(kb):
    df = network.tor_fabrics(kb)
    assert len(df)
    for _, r in df.iterrows():
        assert r["radix"] == round(r["switch_Tbps"] * 1000 / r["port_Gbps"])
        assert r["tors"] == r["pods"] * r["tors_per_pod"]


def test_campus_power_divides_facility_power_by_pue(kb):
    df = power.campus_power(kb).set_index(["id", "archetype"])
    # Project Rainier 2.2 GW (datacenternews); IT = facility / PUE, by hand
    r = df.loc[("project-rainier-indiana", "air-evaporative")]
    assert r["facility_MW"] == pytest.approx(2200)
    assert r["it_MW"] == pytest.approx(2200 / r["pue"])
    assert r["overhead_MW"] == pytest.approx(2200 - 2200 / r["pue"])


def test_tco_sweep_is_linear_in_the_power_price():
    # tests/calc/test_tco.py's hand example: energy 1 kW x 1.25 x 8766 h x price per kWh;
    # capital 2,500 USD/yr; per utilised hour divide by 8766 x 0.5
    args = {"capex": "10000 USD", "lifetime": "4 year", "cost_of_capital": 0,
            "chip_power": "1 kW", "power_price": "0.1 USD/kWh", "pue": 1.25, "utilization": 0.5}
    df = power.tco_sweep(args, "power_price", ["0.1 USD/kWh", "0.2 USD/kWh"])
    hand = [(2500 + 1.25 * 8766 * p) / (8766 * 0.5) for p in (0.1, 0.2)]
    assert list(df["USD_per_hour"]) == pytest.approx(hand, rel=1e-4)
    with pytest.raises(KeyError, match="assumptions"):
        power.tco_sweep(args, "rent", [1])


def test_unit_str_writes_the_unambiguous_symbol():
    assert tables.unit_str(Q_("1 TB/s").units) == "TB/s"
    assert tables.unit_str(parse("1 Gbit/s").units) == "Gbit/s"


def test_rows_of_the_hbm_table_for_a_chip_have_unit_headers(kb):
    df = tables.rows(kb, "hbm", chip="trainium3")
    assert list(df["id"]) == ["trainium3-hbm"]
    assert "bandwidth (TB/s)" in df.columns or any("(TB/s)" in c for c in df.columns)
    with pytest.raises(KeyError):
        tables.rows(kb, "hbm", chip="no-such-chip")


def test_rows_with_sources_name_the_source_of_each_shown_value(kb):
    df = tables.rows(kb, "hbm", chip="trainium3", columns=["bandwidth"], sources=True)
    assert list(df.columns) == ["id", "bandwidth (TB/s)", "sources"]
    expected = kb.provenance("trainium3-hbm", "bandwidth")["source"]
    assert df.loc[0, "sources"] == expected
    assert "sources" not in tables.rows(kb, "hbm", chip="trainium3").columns


def test_sources_of_and_cited_name_the_vendor_source(kb):
    src = tables.sources_of(kb, ["trainium3"], ["hbm_bandwidth"])
    assert src == [kb.provenance("trainium3", "hbm_bandwidth")["source"]]
    cited = tables.cited(kb, ["semianalysis-trn3"])
    assert list(cited["id"]) == ["semianalysis-trn3"]
    assert cited.loc[0, "publisher"] == "SemiAnalysis"  # seed 004's publisher


def test_conflicts_view_filters_by_table_and_keeps_both_sources(kb):
    df = tables.conflicts(kb, "chips")
    assert len(df) and set(df["table"]) == {"chips"}
    # issue 9 lists b200.hbm_capacity: 180 GB [nvidia-dgx-b200-guide] vs 192 GB (6.2%)
    r = df[(df["id"] == "b200") & (df["field"] == "hbm_capacity")].iloc[0]
    assert {r["preferred"], r["other"]} == {"180 GB", "192 GB"}
    assert r["relative_difference"] == pytest.approx(12 / 192, rel=1e-3)


def test_assumptions_table_writes_units_and_says_which_inputs_are_sourced(kb):
    # notebook 06 printed the raw dict: {'chip_power': <Quantity(1.4, 'kilowatt')>, ...}
    df = power.assumptions_table({"capex": "30000 USD", "cost_of_capital": 0.1,
                                  "chip_power": Q_(1400, "W"), "pue": Q_(1.2, "")},
                                 sources={"chip_power": "verda-gb300-blog"})
    assert list(df["input"]) == ["capex", "cost of capital", "chip power", "PUE"]
    assert list(df["value"]) == ["30,000 USD", "10%", "1,400 W", "1.2"]
    assert list(df["basis"]) == ["assumption", "assumption", "knowledge base", "assumption"]
    assert df["source"].tolist()[2] == "verda-gb300-blog" and df["source"].isna().sum() == 3
