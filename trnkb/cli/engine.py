"""``trnkb engine``: run GEMM and attention on the reference NeuronCore model."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from trnkb.cli.params import Whole

if TYPE_CHECKING:  # the engine (numpy, pint, the KB) is imported when a command runs,
    # so `trnkb engine --help` and argument refusals do not pay for it
    from trnkb.engine import NeuronCore, Result, Tiling

err = Console(stderr=True)
# the engine's limit on any one size (trnkb.engine.limits.MAX_DIM, not imported: it brings
# numpy and the engine into `trnkb engine --help`; tests/cli/test_numbers.py keeps them equal)
MAX_DIM = 1 << 20


def _size(option: str, what: str, low: int = 1) -> Any:
    """An engine size option: a whole number up to the engine's limit on any one size."""
    return typer.Option(option, parser=Whole(option, MAX_DIM, low), help=what)


class Dtype(StrEnum):
    bf16 = "bf16"
    fp8 = "fp8"
    mxfp8 = "mxfp8"
    mxfp4 = "mxfp4"


class ExpEngine(StrEnum):
    scalar = "scalar"
    vector = "vector"


Chip = Annotated[str, typer.Option("--chip", help="Chip whose NeuronCore to model.")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON (no progress bar).")]
Execute = Annotated[bool, typer.Option("--execute/--no-execute",
                                       help="Compute numerics too, or cost only.")]
Specs = Annotated[Path | None, typer.Option("--specs", help="Spec directory (default: shipped).")]
Seed = Annotated[int, typer.Option("--seed", parser=Whole("--seed", 2**32 - 1, low=0),
                                   help="Seed of the random operands (with --execute).")]
Cores = Annotated[int, typer.Option("--cores", min=1, parser=Whole("--cores"),  # min: --help
                                    help="NeuronCores to shard over (1: one core; 8: the chip).")]
Lnc = Annotated[int, typer.Option(
    "--lnc", parser=Whole("--lnc"),
    help="Physical cores per logical NeuronCore (1 or 2 on Trainium2/3; AWS's default "
         "is 2): the run is one logical core sharing its HBM bank.")]
FixedCosts = Annotated[bool, typer.Option(
    "--fixed-costs/--no-fixed-costs",
    help="Add kernel launch, start/end and per-output-block costs (specs/cores.yaml).")]
TimelineOut = Annotated[Path | None, typer.Option(
    "--timeline", help="Write a Chrome trace (JSON; open in ui.perfetto.dev) to this file.")]


@contextmanager
def _progress(enabled: bool, what: str) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr; yields a ``progress(done, total)`` callback."""
    if not enabled:
        yield None
        return
    cols = (TextColumn(what), BarColumn(), TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn())
    with Progress(*cols, console=err, transient=True) as bar:
        task = bar.add_task(what, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _print(res: Result, as_json: bool) -> None:
    if as_json:
        print(json.dumps(res.to_dict(), indent=2))
        return
    d = res.to_dict()
    t = Table(title=f"{res.kernel} on {res.chip} ({res.dtype})", show_header=False)
    t.add_row("time", f"{res.seconds.to('us').magnitude:,.1f} µs")
    t.add_row("achieved", f"{res.achieved.to('TFLOPS').magnitude:,.1f} TFLOP/s")
    n = res.chip_figures.get("cores", 1)
    t.add_row("peak (one core)" if n == 1 else f"peak ({n} cores)",
              f"{res.peak.to('TFLOPS').magnitude:,.1f} TFLOP/s")
    t.add_row("utilization", f"{res.utilization:.1%}")
    t.add_row("bound by (critical path)", res.bound_by)
    t.add_row("busiest engine", res.busiest)
    for e, v in res.critical.items():
        t.add_row(f"critical path {e}", f"{v * 1e6:,.1f} µs")
    for e, v in res.stalls.items():
        t.add_row(f"stall {e}", f"{v * 1e6:,.1f} µs")
    for key, v in res.chip_figures.items():
        if isinstance(v, float):
            t.add_row(key.replace("_", " "), f"{v:,.4g}")
    for e, q in res.busy.items():
        cyc = (f" ({d['cycles'][e]:,} cycles{' per core' if n > 1 else ''})"
               if e in d["cycles"] else "")
        t.add_row(f"busy {e}" + (" (sum over cores)" if n > 1 else ""),
                  f"{q.to('us').magnitude:,.1f} µs{cyc}")
    for level, b in res.bytes.items():
        t.add_row(f"bytes {level}", f"{b.to('MB').magnitude:,.2f} MB")
    if res.error is not None:
        t.add_row("error vs float64", f"rel RMS {res.error['rel_rms']:.3g}, "
                                      f"max abs {res.error['max_abs']:.3g}")
    Console().print(t)
    for note in res.notes:
        print(note)


_TRACE_SIGNATURE = '{"otherData": {"generator": "trnkb engine --timeline"'


def _finish(res: Result, as_json: bool, timeline: Path | None) -> None:
    if timeline is not None:  # the export's rules: atomic, no symlinks, no foreign files
        import json

        from trnkb.engine.profile import chrome_trace
        from trnkb.output.safefile import write_file

        trace = chrome_trace(res)
        other = {"generator": "trnkb engine --timeline", **trace.pop("otherData", {})}
        write_file(timeline, json.dumps({"otherData": other, **trace}), _TRACE_SIGNATURE,
                   "--timeline")
        err.print(f"wrote Chrome trace {timeline}")
    _print(res, as_json)


def _core(chip: str, specs: Path | None) -> NeuronCore:
    """The NeuronCore of ``--chip`` (near misses suggested) for ``--specs``, from the
    engine's snapshot of the specs (:mod:`trnkb.engine.snapshot`: no knowledge-base load
    for the shipped specs)."""
    from trnkb.cli.validate import choice
    from trnkb.engine.model import NeuronCore
    from trnkb.engine.snapshot import all_inputs

    cores = all_inputs(specs)
    choice(chip, [c.chip for c in cores], "--chip")
    return NeuronCore.from_inputs(next(c for c in cores if c.chip == chip))


def _cores(core: NeuronCore, cores: int) -> None:
    if cores > core.cores_per_chip:
        raise typer.BadParameter(f"{core.chip} has {core.cores_per_chip} NeuronCores; got "
                                 f"--cores {cores}", param_hint="--cores")


def _lnc(core: NeuronCore, lnc: int, cores: int) -> None:
    try:
        core.check_lnc(lnc)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--lnc") from None
    if lnc > 1 and cores > 1:
        raise typer.BadParameter("--lnc runs one logical core; --cores shards over physical "
                                 "cores: give one of them", param_hint="--lnc")


def _parse_tiling(text: str | None) -> Tiling | None:
    """``None``, a published kernel's name, or ``MxNxK`` multiples."""
    from trnkb.engine import Tiling, named_tiling

    if text is None:
        return None
    parts = text.lower().split("x")
    if len(parts) == 3 and all(p.isdigit() and int(p) >= 1 for p in parts):
        m, n, k = (int(p) for p in parts)
        return Tiling(m, n, k)
    try:
        return named_tiling(text)
    except ValueError as e:
        raise typer.BadParameter(f"{e}; or give MxNxK multiples such as 2048x2048x1024",
                                 param_hint="--tiling") from None


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="Run GEMM and attention on a modelled NeuronCore (time and numerics).",
                      no_args_is_help=True)

    @sub.command("gemm")
    def gemm_cmd(chip: Chip = "trainium3",
                 m: Annotated[int, _size("--m", "Rows of A and C.")] = 4096,
                 k: Annotated[int, _size("--k", "Contraction size.")] = 4096,
                 n: Annotated[int, _size("--n", "Columns of B and C.")] = 4096,
                 dtype: Annotated[Dtype, typer.Option(
                     help="bf16, fp8, mxfp8 or mxfp4.")] = Dtype.bf16,
                 weight_dtype: Annotated[Dtype | None, typer.Option(
                     help="mxfp4 with --dtype mxfp8: 4-bit weights (W4A8).")] = None,
                 quantize_activations: Annotated[bool, typer.Option(
                     help="MX: A arrives in BF16 and VectorE quantizes it.")] = False,
                 execute: Execute = True, seed: Seed = 0, specs: Specs = None,
                 cores: Cores = 1, lnc: Lnc = 1,
                 tiling: Annotated[str | None, typer.Option(
                     "--tiling", help="Kernel padding: a published kernel's name "
                     "(nkilib-gemm-trn3-lnc2) or MxNxK multiples, e.g. 2048x2048x1024; "
                     "cost only when it pads.")] = None,
                 fixed_costs: FixedCosts = True, timeline: TimelineOut = None,
                 as_json: Json = False) -> None:
        """C = A @ B on NeuronCores: critical path, busy time, FLOP/s vs peak, error vs float64."""
        from trnkb.cli.validate import gemm_args

        gemm_args(m, k, n, execute, seed)
        from trnkb.engine import chip_gemm, gemm

        dt, wdt = dtype.value, weight_dtype.value if weight_dtype else None
        core = _core(chip, specs)
        _cores(core, cores)
        _lnc(core, lnc, cores)
        til = _parse_tiling(tiling)
        if cores > 1 and til is None:
            res = chip_gemm(core, m, k, n, dtype=dt, cores=cores, execute=execute, seed=seed,
                            weight_dtype=wdt, quantize_activations=quantize_activations)
        else:
            if cores > 1:
                raise typer.BadParameter("--tiling runs one logical core; drop --cores",
                                         param_hint="--tiling")
            try:
                with _progress(not as_json and lnc == 1, "gemm") as cb:
                    res = gemm(core, m, k, n, dtype=dt, execute=execute, seed=seed,
                               weight_dtype=wdt, quantize_activations=quantize_activations,
                               progress=cb, lnc=lnc, tiling=til, fixed_costs=fixed_costs)
            except ValueError as e:
                raise typer.BadParameter(str(e), param_hint="--tiling/--execute") from None
        _finish(res, as_json, timeline)

    @sub.command("attention")
    def attention_cmd(chip: Chip = "trainium3",
                      seq: Annotated[int, _size("--seq", "Query length.")] = 4096,
                      seq_kv: Annotated[int | None, _size(
                          "--seq-kv", "Key/value length (default: --seq).")] = None,
                      head_dim: Annotated[int, _size("--head-dim", "Head dimension.")] = 128,
                      heads: Annotated[int, _size("--heads", "Query heads.")] = 1,
                      heads_kv: Annotated[int | None, _size(
                          "--heads-kv", "KV heads (GQA/MQA; default --heads).")] = None,
                      causal: Annotated[bool, typer.Option(
                          help="Causal mask (bottom-right aligned).")] = False,
                      exp_engine: Annotated[ExpEngine | None, typer.Option(
                          help="scalar or vector (default: vector where the core has it).")] = None,
                      execute: Execute = True, seed: Seed = 0, specs: Specs = None,
                      cores: Cores = 1, lnc: Lnc = 1, fixed_costs: FixedCosts = True,
                      timeline: TimelineOut = None, as_json: Json = False) -> None:
        """Flash-attention forward on NeuronCores: which engine bounds it, and why.

        With --cores > 1 or --lnc 2 the run is cost only (shards over heads or query tiles;
        a GQA decode over KV heads and key ranges)."""
        from trnkb.cli.validate import attention_args

        attention_args(seq, seq_kv, head_dim, heads, execute, seed)
        if heads_kv is not None:
            Whole("--heads-kv", heads)(heads_kv)
        from trnkb.engine import attention, chip_attention

        exp = exp_engine.value if exp_engine else None
        core = _core(chip, specs)
        _cores(core, cores)
        _lnc(core, lnc, cores)
        if lnc > 1:
            res = attention(core, seq, seq_kv or seq, head_dim, heads=heads, causal=causal,
                            execute=False, lnc=lnc, heads_kv=heads_kv, exp_engine=exp,
                            fixed_costs=fixed_costs)
        elif cores > 1:
            res = chip_attention(core, seq, seq_kv or seq, head_dim, heads=heads, causal=causal,
                                 cores=cores, heads_kv=heads_kv, exp_engine=exp)
        else:
            with _progress(not as_json, "attention") as cb:
                res = attention(core, seq, seq_kv or seq, head_dim, heads=heads, causal=causal,
                                execute=execute, seed=seed, exp_engine=exp,
                                heads_kv=heads_kv, progress=cb, fixed_costs=fixed_costs)
        _finish(res, as_json, timeline)

    @sub.command("mla")
    def mla_cmd(chip: Chip = "trainium3",
                seq_kv: Annotated[int, _size("--seq-kv", "Tokens in each latent KV cache.")] = 8192,
                heads: Annotated[int, _size(
                    "--heads", "Query heads on these cores (DeepSeek-V3: 128; a TP shard its "
                    "share).")] = 128,
                batch: Annotated[int, _size("--batch", "Sequences decoding one token each.")] = 1,
                kv_lora_rank: Annotated[int, _size("--kv-lora-rank", "Latent width (V3: 512).")]
                = 512,
                rope_dim: Annotated[int, _size("--rope-dim", "Shared RoPE key width (V3: 64).",
                                               low=0)] = 64,
                nope_dim: Annotated[int, _size(
                    "--nope-dim", "Per-head non-RoPE query width absorbed into W_UK (V3: 128).")]
                = 128,
                v_head_dim: Annotated[int, _size("--v-head-dim", "Per-head output width (V3: "
                                                                 "128).")] = 128,
                specs: Specs = None, cores: Cores = 1, lnc: Lnc = 1,
                timeline: TimelineOut = None, as_json: Json = False) -> None:
        """MLA decode (DeepSeek-style latent attention, absorbed weights), cost only.

        The latent cache is read once for all heads; the absorbed W_UK and W_UV are read
        once per core. Sequences are split over --cores (keys too when the batch is
        smaller than the cores)."""
        from trnkb.engine import mla_decode

        core = _core(chip, specs)
        _cores(core, cores)
        _lnc(core, lnc, cores)
        try:
            res = mla_decode(core, seq_kv, heads=heads, batch=batch, kv_lora_rank=kv_lora_rank,
                             rope_dim=rope_dim, nope_dim=nope_dim, v_head_dim=v_head_dim,
                             cores=cores, lnc=lnc if lnc > 1 else None)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="--heads/--rope-dim") from None
        _finish(res, as_json, timeline)

    app.add_typer(sub, name="engine")
