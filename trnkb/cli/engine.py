"""``trnkb engine``: run GEMM and attention on the reference NeuronCore model."""

from __future__ import annotations

import json
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import trnkb
from trnkb.cli.validate import attention_args, chip_with_core, gemm_args
from trnkb.engine import NeuronCore, Result, attention, gemm

err = Console(stderr=True)


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


@contextmanager
def _progress(enabled: bool, what: str):
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
    t.add_row("peak (one core)", f"{res.peak.to('TFLOPS').magnitude:,.1f} TFLOP/s")
    t.add_row("utilization", f"{res.utilization:.1%}")
    t.add_row("bound by", res.bound_by)
    for e, v in res.busy.items():
        cyc = f" ({d['cycles'][e]:,} cycles)" if e in d["cycles"] else ""
        t.add_row(f"busy {e}", f"{v.to('us').magnitude:,.1f} µs{cyc}")
    for level, b in res.bytes.items():
        t.add_row(f"bytes {level}", f"{b.to('MB').magnitude:,.2f} MB")
    if res.error is not None:
        t.add_row("error vs float64", f"rel RMS {res.error['rel_rms']:.3g}, "
                                      f"max abs {res.error['max_abs']:.3g}")
    Console().print(t)
    for note in res.notes:
        print(note)


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="Run GEMM and attention on a modelled NeuronCore (time and numerics).",
                      no_args_is_help=True)

    @sub.command("gemm")
    def gemm_cmd(chip: Chip = "trainium3",
                 m: Annotated[int, typer.Option("--m", help="Rows of A and C.")] = 4096,
                 k: Annotated[int, typer.Option("--k", help="Contraction size.")] = 4096,
                 n: Annotated[int, typer.Option("--n", help="Columns of B and C.")] = 4096,
                 dtype: Annotated[Dtype, typer.Option(help="bf16, fp8, mxfp8 or mxfp4.")] = Dtype.bf16,
                 weight_dtype: Annotated[Dtype | None, typer.Option(
                     help="mxfp4 with --dtype mxfp8: 4-bit weights (W4A8).")] = None,
                 execute: Execute = True, seed: int = 0, specs: Specs = None,
                 as_json: Json = False) -> None:
        """C = A @ B on one NeuronCore: time per engine, FLOP/s vs peak, error vs float64."""
        gemm_args(m, k, n, execute, seed)
        kb = trnkb.load(specs)
        core = NeuronCore.from_kb(kb, chip_with_core(kb, chip))
        with _progress(not as_json, "gemm") as cb:
            res = gemm(core, m, k, n, dtype=dtype.value, execute=execute, seed=seed,
                       weight_dtype=weight_dtype.value if weight_dtype else None, progress=cb)
        _print(res, as_json)

    @sub.command("attention")
    def attention_cmd(chip: Chip = "trainium3",
                      seq: Annotated[int, typer.Option(help="Query length.")] = 4096,
                      seq_kv: Annotated[int | None, typer.Option(
                          help="Key/value length (default: --seq).")] = None,
                      head_dim: Annotated[int, typer.Option(help="Head dimension.")] = 128,
                      heads: int = 1,
                      causal: Annotated[bool, typer.Option(help="Causal mask.")] = False,
                      exp_engine: Annotated[ExpEngine | None, typer.Option(
                          help="scalar or vector (default: vector where the core has it).")] = None,
                      execute: Execute = True, seed: int = 0, specs: Specs = None,
                      as_json: Json = False) -> None:
        """Flash-attention forward on one NeuronCore: which engine bounds it, and why."""
        attention_args(seq, seq_kv, head_dim, heads, execute, seed)
        kb = trnkb.load(specs)
        core = NeuronCore.from_kb(kb, chip_with_core(kb, chip))
        with _progress(not as_json, "attention") as cb:
            res = attention(core, seq, seq_kv or seq, head_dim, heads=heads, causal=causal,
                            execute=execute, seed=seed, progress=cb,
                            exp_engine=exp_engine.value if exp_engine else None)
        _print(res, as_json)

    app.add_typer(sub, name="engine")
