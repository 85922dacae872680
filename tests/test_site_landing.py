"""The landing page's first screen: where Trainium3 stands on every headline figure.

Expected ranks are counted here from the knowledge base's own values (``kb.value``), not
from :func:`trnkb.compare.standing`, which the page uses.
"""

import re

from trnkb.compare import HEADLINE
from trnkb.kb import load
from trnkb.site import landing
from trnkb.units import format_number


def _values(kb, field, unit):
    out = {}
    for c in HEADLINE:
        try:
            out[c] = kb.value(c, field).to(unit).magnitude
        except KeyError:  # no source gives it
            pass
    return out


def test_standings_rank_trainium3_on_each_headline_figure_with_its_unit():
    kb = load()
    text = landing.standings(kb)
    assert text.startswith("AWS Trainium3 against the 8 headline chips: ")
    for field, unit in (("dense_fp8", "TFLOP/s"), ("hbm_bandwidth", "TB/s")):
        given = _values(kb, field, unit)
        mine = given["trainium3"]
        rank = 1 + sum(v > mine for v in given.values())
        label = field.replace("_", " ").replace("fp8", "FP8").replace("hbm", "HBM")
        expected = f"{label} {format_number(mine)} {unit} (rank {rank} of {len(given)}"
        assert expected in text, (expected, text)


def test_standings_name_every_chip_tied_at_the_top_and_say_what_no_source_gives():
    kb = load()
    text = landing.standings(kb)
    bf16 = re.search(r"dense BF16 [^;]+; highest ([^)]+) at", text)
    assert bf16 is not None, text
    values = _values(kb, "dense_bf16", "TFLOPS")
    tied = [c for c, v in values.items() if v == max(values.values())]
    names = kb.table("chips").set_index("id")["name"]
    for c in tied:
        assert str(names[c]).split(" (")[0] in bf16.group(1)
    if "trainium3" not in _values(kb, "tdp", "W"):
        assert text.endswith("No source gives its TDP.")


def test_landing_compares_hbm_on_the_physical_basis_with_the_vendor_labels():
    from trnkb.site.landing import headline_table, memory_sentence

    kb = load()
    t = headline_table(kb).set_index("chip")
    # 4 and 8 stacks of 12 dies of 24 Gbit (2**30 bits): 144 and 288 GiB
    assert t.loc["trainium3", "HBM physical (GiB)"] == 4 * 12 * 24 / 8
    assert t.loc["gb300", "HBM physical (GiB)"] == 8 * 12 * 24 / 8
    assert t.loc["trainium3", "HBM vendor label"] == "144 GiB"  # AWS writes GiB
    assert t.loc["gb300", "HBM vendor label"] == "288 GB"       # NVIDIA writes GB
    text = memory_sentence(kb)
    assert "NVIDIA GB300 0.5 (144 / 288 GiB" in text and "0.537" in text


def test_landing_ranks_hbm_on_the_physical_basis_never_on_a_converted_label():
    kb = load()
    text = landing.standings(kb)
    # physical capacity counted here from the hbm table: stacks x height x Gbit / 8 (GiB)
    built = {}
    for row in kb.ids("hbm"):
        parts = [kb.get(row, f) for f in ("stacks", "stack_height", "die_density")]
        chip = str(kb.get(row, "chip"))
        if chip in HEADLINE and all(p is not None for p in parts):
            built[chip] = (parts[0].magnitude * parts[1].magnitude
                           * parts[2].to("Gbit").magnitude / 8)
    rank = 1 + sum(v > built["trainium3"] for v in built.values())
    assert (f"HBM capacity {format_number(built['trainium3'])} GiB physical, labelled 144 GiB "
            f"(rank {rank} of the {len(built)} chips whose stack build is sourced") in text
    assert "NVIDIA GB300 at 288 GiB, labelled 288 GB: 0.5 of it" in text
    table = landing.headline_table(kb)
    assert not any(c.startswith("hbm_capacity") for c in table.columns)  # 154.6 GB never shown
    assert "154.6" not in text
