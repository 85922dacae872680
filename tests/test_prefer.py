"""The preference rule: which value of a field the wide tables use."""

import pytest

from trnkb.spec import prefer

INFO = {"aws": (prefer.SOURCE_RANK["vendor"], "2026-08-21"),
        "aws-old": (prefer.SOURCE_RANK["vendor"], "2023"),
        "semi": (prefer.SOURCE_RANK["seed"], "2025-12-04"),
        "press": (prefer.SOURCE_RANK["press"], "2026")}


def fact(source, kind="reported", **kw):
    return {"source": source, "kind": kind, **kw}


def test_vendor_beats_analyst_seed_and_press():
    group = [fact("semi"), fact("press"), fact("aws")]
    assert prefer.choose(group, INFO) == 2


def test_the_vendors_current_page_beats_an_older_one():
    assert prefer.choose([fact("aws-old"), fact("aws")], INFO) == 1


def test_estimates_and_unstated_attributes_come_last():
    assert prefer.choose([fact("aws", "estimate"), fact("press")], INFO) == 1
    assert prefer.choose([fact("aws", density="unstated"), fact("press", density="dense")],
                         INFO) == 1


def test_a_derived_value_ranks_by_its_weakest_input():
    derived = fact("aws", "derived", input_sources=["aws", "press"])
    assert prefer.choose([derived, fact("semi")], INFO) == 1


def test_an_override_wins():
    assert prefer.choose([fact("aws"), fact("press", override=True)], INFO) == 1


def test_shipped_trainium_memory_is_the_vendors_gib(kb):
    # AWS's Neuron pages write 96 GiB (Trn2) and 144 GiB (Trn3)
    assert str(kb.value("trainium2", "hbm_capacity").units) == "gibibyte"
    assert kb.provenance("trainium3", "hbm_capacity")["source"] == "aws-neuron-trainium3"


def test_every_shipped_override_says_why():
    from trnkb.kb import default_specs_dir

    overrides = 0
    for path in sorted(default_specs_dir().glob("*.yaml")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "preferred: true" in line:
                overrides += 1
                assert "note:" in line, f"{path.name}:{n}: override without a note"
    assert overrides <= 20  # exceptions stay exceptions


@pytest.mark.parametrize("row, field, other_source", [
    ("trainium3", "dense_fp8", "neuron-nki-arch-trn3"),
    ("neuronlink-v4-trn3", "total_lanes", "aws-neuron-trn3-connectivity"),
    ("neuronlink-v4-trn3", "pcb_lanes", "aws-neuron-trn3-connectivity"),
])
def test_aws_conflicts_are_visible(kb, row, field, other_source):
    c = kb.conflicts
    hit = c[(c["id"] == row) & (c["field"] == field) & (c["other_source"] == other_source)]
    assert len(hit) == 1
