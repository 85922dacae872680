"""Published Trainium kernel timings against the engine's predictions.

``CASES`` lists every published timing found (nki-samples performance thresholds, Neuron
docs tutorials), with the device where it is stated. :func:`table` runs the engine on
each modelled case and renders the markdown table of ``docs/engine-validation.md``;
a test regenerates it and compares, so the document cannot drift from the engine.

A threshold is an upper bound a test asserts (``p99 <= x``), not a measurement: a
prediction below it is consistent with it, and its "error" is how far below.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

from trnkb.units import format_number

__all__ = ["CASES", "Case", "predict", "table", "write_page"]

PUBLISHED_SIG = 6  # a published time keeps every digit its source gives (172.93, 117,000)


@dataclass(frozen=True)
class Case:
    """One published timing. ``call`` is None when the engine does not model the kernel."""

    source: str
    kernel: str
    device: str
    shape: str
    dtype: str
    published_us: float
    kind: str  # "threshold (p99 <=)", "threshold (p1 <= 1.05 x)", "measured"
    chip: str | None = None  # the chip the engine runs (stated device, or assumed)
    # ("gemm", m, k, n, dtype) or ("attention", sq, skv, d, heads)
    call: tuple[Any, ...] | None = None
    note: str = ""


SAMPLES = "aws-neuron/nki-samples"
CASES: tuple[Case, ...] = (
    Case(f"{SAMPLES} test/unit/test_double_row_matmul.py (commit 025b2914)",
         "quantized double-row matmul", "trn2 (the test returns unless the host is trn2)",
         "M 512, K 16384, N 1024", "bf16 x fp8 (double row)", 320, "threshold (p99 <=)",
         "trainium2", ("gemm", 512, 16384, 1024, "fp8"),
         "engine runs both operands in FP8 double row; the kernel quantizes per column"),
    Case(f"{SAMPLES} test/unit/test_SD_attention_small_head.py (commit 01ef6a28)",
         "fused self-attention (Stable Diffusion, small head)", "not stated",
         "batch 1, seq 4096, d 128, 1 head", "bf16", 480, "threshold (p1 <= 1.05 x)",
         "trainium2", ("attention", 4096, 4096, 128, 1),
         "device unknown: engine run on Trainium2; threshold 536 us at commit 4e49a397"),
    Case(f"{SAMPLES} test/unit/test_SD_attention_small_head.py (commit 01ef6a28)",
         "fused self-attention (Stable Diffusion, small head)", "not stated",
         "batch 1, seq 4096, d 64, 1 head", "fp16", 600, "threshold (p1 <= 1.05 x)",
         "trainium2", ("attention", 4096, 4096, 64, 1),
         "device unknown: engine run on Trainium2 in bf16 (fp16 runs at the bf16 rate)"),
    Case(f"{SAMPLES} test/unit/test_SD_attention_small_head.py (commit 01ef6a28)",
         "fused self-attention (Stable Diffusion, small head)", "not stated",
         "batch 1, seq 4096, d 128, 1 head", "fp32", 675, "threshold (p1 <= 1.05 x)",
         note="not modelled: the engine's attention is bf16 only"),
    Case(f"{SAMPLES} test/unit/test_flash_attn_bwd.py", "flash attention backward",
         "not stated", "batch 1, 4 heads, seq 32768, d 128", "bf16", 117000,
         "threshold (marked xfail)", note="not modelled: backward pass"),
    Case("aws-neuron-sdk nki/tutorials/fused_mamba.rst (commit 7c165a3e)", "fused Mamba",
         "not stated (likely trn1)", "batch 1, seq 512, channels 256, state 16", "fp32", 172.93,
         "measured", note="not modelled: a VectorE scan kernel; Trainium1 has no core row"),
    Case("aws-neuron-sdk nki/tutorials/fused_mamba.rst (commit 7c165a3e)", "fused Mamba v2",
         "not stated (likely trn1)", "seq 512, channels 4096", "fp32", 1610, "measured",
         note="not modelled (as above)"),
)


def predict(case: Case, kb: KnowledgeBase | None = None) -> float | None:
    """The engine's prediction for ``case`` in microseconds (None if not modelled)."""
    if case.call is None:
        return None
    import trnkb
    from trnkb.engine import NeuronCore, attention, gemm

    assert case.chip is not None, f"{case.kernel}: a modelled case names its chip"
    core = NeuronCore.from_kb(kb if kb is not None else trnkb.load(), case.chip)
    kind, *args = case.call
    if kind == "gemm":
        m, k, n, dtype = args
        r = gemm(core, m, k, n, dtype=dtype, execute=False)
    else:
        sq, skv, d, heads = args
        r = attention(core, sq, skv, d, heads=heads, execute=False)
    return float(r.seconds.to("us").magnitude)


def table(kb: KnowledgeBase | None = None) -> str:
    """The markdown table: source, kernel, device, shape, dtype, published, engine, error.

    Times are in µs, written by :func:`trnkb.units.format_number`: the published figure with
    every digit its source gives (``320``, ``117,000``, ``172.93``), the engine's to 4
    significant figures."""
    head = ("| source | kernel | device | shape | dtype | published (µs) | kind | engine chip | "
            "engine (µs) | error | note |\n|---|---|---|---|---|---|---|---|---|---|---|")
    rows = [head]
    for c in CASES:
        p = predict(c, kb)
        pred = "—" if p is None else format_number(p)
        err = "—" if p is None else f"{(p - c.published_us) / c.published_us:+.0%}"
        published = format_number(c.published_us, sig=PUBLISHED_SIG)
        rows.append(f"| {c.source} | {c.kernel} | {c.device} | {c.shape} | {c.dtype} | "
                    f"{published} | {c.kind} | {c.chip or '—'} | {pred} | {err} | {c.note} |")
    return "\n".join(rows)


PAGE_MARKERS = ("<!-- validation-table:start -->\n", "\n<!-- validation-table:end -->")


def write_page(path: str | Path | None = None, kb: KnowledgeBase | None = None) -> Path:
    """Regenerate the table between the markers of ``docs/engine-validation.md`` (the prose
    around it is written by hand); returns the path written."""
    page = Path(path) if path is not None else Path(__file__).parents[2] / "docs" / (
        "engine-validation.md")
    text = page.read_text(encoding="utf-8")
    start, end = PAGE_MARKERS
    head, _, rest = text.partition(start)
    _, found, tail = rest.partition(end)
    if not found:
        raise ValueError(f"{page}: the generated-table markers are missing")
    page.write_text(head + start + table(kb) + end + tail, encoding="utf-8")
    return page


if __name__ == "__main__":  # python -m trnkb.audit.engine_validation
    print(f"wrote {write_page()}")
