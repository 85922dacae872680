"""Declared derived values: computed at load from their inputs, refused when malformed.

Expected values are computed here by hand from the figures the test writes (or from the
cited sources), never by the code under test.
"""

import re
import subprocess
from pathlib import Path

import pytest

import trnkb
from trnkb.spec.specfile import SpecError

ROOT = Path(__file__).resolve().parent.parent
RACK = """\
- id: trn3-nl32x2-switched
  name: Trainium3 NL32x2 Switched
  vendor: AWS
  chip: {value: trainium3, source: semianalysis-trn3, locator: "NL32x2", kind: reported}
  chips_per_rack: {value: 32, source: semianalysis-trn3, locator: "NL32x2", kind: reported}
  domain_size: {value: 64, source: semianalysis-trn3, locator: "NL32x2", kind: reported}
"""


def with_rack(specs: Path, *lines: str) -> Path:
    (specs / "racks.yaml").write_text(RACK + "".join(f"  {x}\n" for x in lines))
    return specs


def errors_of(specs: Path) -> list[str]:
    with pytest.raises(SpecError) as e:
        trnkb.load(specs)
    return e.value.errors


def test_domain_total_is_computed_with_every_input_source(good_specs):
    kb = trnkb.load(with_rack(good_specs, "domain_bf16: {derive: product, kind: derived, "
                              "inputs: {chips: self.domain_size, per_chip: self.chip.dense_bf16}}"))
    # 64 chips x 671 TFLOPS = 42,944 TFLOPS = 42.944 PFLOPS (AWS's Gen1 UltraServer table
    # gives exactly 42,944 TFLOPS)
    assert kb.value("trn3-nl32x2-switched", "domain_bf16").to("TFLOPS").magnitude == \
        pytest.approx(42944)
    prov = kb.provenance("trn3-nl32x2-switched", "domain_bf16")
    assert prov["kind"] == "derived"
    assert "[semianalysis-trn3]" in prov["derivation"] and "[aws-neuron-trn3]" in prov["derivation"]


def test_literal_inputs_and_divisors(good_specs):
    kb = trnkb.load(with_rack(
        good_specs, "scaleout_per_chip: {derive: product, kind: derived, inputs: "
        "{instance: {value: 12800 Gbit/s, source: aws-neuron-trn3, locator: \"EFA\"}, "
        "among_chips: self.domain_size}}"))
    # 12,800 Gbit/s over 64 chips = 200 Gbit/s
    assert kb.value("trn3-nl32x2-switched", "scaleout_per_chip").to("Gbit/s").magnitude == \
        pytest.approx(200)


def test_a_source_can_be_chosen_with_at(good_specs):
    chips = good_specs / "chips.yaml"
    chips.write_text(chips.read_text() + "  sram: {derive: copy, kind: derived, "
                     "inputs: {of: {value: 256 MiB, source: aws-neuron-trn3, locator: \"x\"}}}\n")
    kb = trnkb.load(with_rack(
        good_specs, "domain_hbm_capacity: {derive: product, kind: derived, inputs: "
        "{chips: self.domain_size, per_chip: trainium3.hbm_capacity@aws-neuron-trn3}}"))
    # 64 x 144 GiB = 9,216 GiB (AWS's Gen1 UltraServer table)
    assert kb.value("trn3-nl32x2-switched", "domain_hbm_capacity").to("GiB").magnitude == \
        pytest.approx(9216)


@pytest.mark.parametrize("decl, problem", [
    ("domain_bf16: {derive: product, kind: derived, inputs: {chips: self.domain_size, "
     "per_chip: trainium9.dense_bf16}}", "unknown input trainium9.dense_bf16: no row 'trainium9'"),
    ("domain_bf16: {derive: product, kind: derived, inputs: {chips: self.domain_size, "
     "per_chip: self.chip.dense_bf17}}", "table chips has no field 'dense_bf17'"),
    ("domain_bf16: {derive: product, kind: derived, inputs: {chips: self.domain_size, "
     "per_chip: self.chip.hbm_capacity}}", "wrong dimension"),
    ("domain_bf16: {derive: frobnicate, kind: derived, inputs: {a: self.domain_size}}",
     "unknown formula 'frobnicate'"),
    ("domain_bf16: {derive: ratio, kind: derived, inputs: {a: self.domain_size, "
     "b: self.chips_per_rack}}", "ratio takes inputs numerator, denominator"),
    ("domain_bf16: {derive: product, inputs: {a: self.domain_size, b: self.chips_per_rack}}",
     "must say 'kind: derived'"),
    ("domain_bf16: {value: 43 PFLOPS, source: aws-neuron-trn3, locator: \"x\", kind: derived}",
     "never typed"),
    ("racks_per_domain: {derive: ratio, kind: derived, inputs: {numerator: self.domain_size, "
     "denominator: {value: 0, source: aws-neuron-trn3, locator: \"x\"}}}", "cannot compute"),
    # a number as an input name ({1: ...}) is refused by the YAML reader before derive sees
    # it: tests/data/bad/key_number_in_value_block.yaml
    ("scaleout_per_chip: {derive: per-direction, kind: derived, inputs: {bidirectional: "
     "{value: 400 Gbit/s, source: aws-neuron-trn3, locator: \"x\", direction: per-direction}}}",
     "per-direction needs a bidirectional input"),
    ("domain_scaleup_bandwidth: {derive: product, kind: derived, direction: per-direction, "
     "inputs: {chips: self.domain_size, per_chip: {value: 2.56 TB/s, source: aws-neuron-trn3, "
     "locator: \"x\", direction: bidirectional}}}", "wrong direction"),
])
def test_bad_declarations_are_refused_with_file_line_field(good_specs, decl, problem):
    errors = errors_of(with_rack(good_specs, decl))
    assert any(problem in e for e in errors), errors
    line = len(RACK.splitlines()) + 1
    assert any(re.match(rf"^\S*racks\.yaml:{line}: trn3-nl32x2-switched\.\w+: ", e)
               for e in errors), errors


def test_a_cycle_is_refused(good_specs):
    errors = errors_of(with_rack(
        good_specs,
        "domain_bf16: {derive: product, kind: derived, inputs: {a: self.chips_per_rack, "
        "b: self.racks_per_domain}}",
        "racks_per_domain: {derive: ratio, kind: derived, inputs: {numerator: self.domain_bf16, "
        "denominator: self.chips_per_rack}}"))
    assert any("cycle: " in e and "racks_per_domain" in e and "domain_bf16" in e
               for e in errors), errors


def test_shipped_specs_declare_every_derived_value(kb):
    # every line that says kind: derived is a declaration, none types a number
    for path in sorted((ROOT / "specs").glob("*.yaml")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "kind: derived" in line:
                assert "derive:" in line, f"{path.name}:{n} types a derived value"
    # benchmarks.yaml is not KB facts: trnkb.workload.benchmarks derives its lengths
    out = subprocess.run("grep -h 'kind: derived' $(ls specs/*.yaml | grep -v benchmarks.yaml)",
                         shell=True, cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
    assert len(out) == int((kb.facts["kind"] == "derived").sum())


def test_shipped_derived_values_match_their_arithmetic(kb):
    # GB200 NVL72: 72 x 2,500 TFLOPS dense BF16 (Lockwood's GB200 table) = 180 PFLOPS
    assert kb.value("gb200-nvl72", "domain_bf16").to("PFLOPS").magnitude == pytest.approx(180)
    # H100: half of the 2:4 sparse 1,979 TFLOPS BF16 of the NVIDIA table = 989.5
    vals = kb.values("h100", "dense_bf16")
    assert vals[vals.kind == "derived"].iloc[0]["value"].to("TFLOPS").magnitude == \
        pytest.approx(989.5)
    # H100 NVLink: 900 GB/s both directions -> 450 GB/s per direction
    assert kb.value("h100", "scaleup_bandwidth").to("GB/s").magnitude == pytest.approx(450)
    # TPU7x pod: 9,216 x 192 GiB = 1,769,472 GiB = 1.89996e15 B
    assert kb.value("tpu-v7-pod", "domain_hbm_capacity").to("B").magnitude == \
        pytest.approx(9216 * 192 * 2**30)


def test_docs_example_runs(tmp_path, good_specs):
    text = (ROOT / "docs" / "spec-format.md").read_text()
    example = re.search(r"<!-- derived-example -->\n```yaml\n(.*?)```", text, re.S).group(1)
    (good_specs / "racks.yaml").write_text(example)
    kb = trnkb.load(good_specs)
    # the example: 64 chips x 671 TFLOPS = 42.944 PFLOPS; 12,800 Gbit/s / 64 = 200 Gbit/s
    assert kb.value("trn3-nl32x2-switched", "domain_bf16").to("PFLOPS").magnitude == \
        pytest.approx(42.944)
    assert kb.value("trn3-nl32x2-switched", "scaleout_per_chip").to("Gbit/s").magnitude == \
        pytest.approx(200)


def test_density_and_direction_are_attributes_with_one_accessor(kb):
    # AMD does not say whether MI455X's 20 PF FP8 is dense or sparse (cloudnews, AMD goals)
    assert kb.attributes("mi455x", "dense_fp8") == {
        "density": "unstated", "direction": "", "qualifier": "dense or sparse not stated"}
    # H100 NVLink: 900 GB/s both directions (NVIDIA HGX H100 post)
    assert kb.attributes("h100", "scaleup_bandwidth_bidir")["direction"] == "bidirectional"
    assert kb.attributes("h100", "scaleup_bandwidth")["direction"] == "per-direction"
    assert kb.attributes("h100", "sparse_bf16")["density"] == "sparse"
    # HBM bandwidth is not a link: no direction
    assert kb.attributes("h100", "hbm_bandwidth")["direction"] == ""


def test_rubin_dense_fp4_is_the_training_figure(kb):
    # CES 2026: 35 PF NVFP4 training (dense) per GPU; 50 PF is the inference figure
    assert kb.value("rubin", "dense_fp4").to("PFLOPS").magnitude == pytest.approx(35)
    assert kb.value("vr-nvl144", "domain_fp4").to("EFLOPS").magnitude == pytest.approx(2.5)
    other = kb.values("rubin", "dense_fp4")
    assert (other["density"] == "unstated").sum() == 1  # the 50 PF inference figure
