"""``trnkb workload`` arguments: numbers (typed options, :mod:`trnkb.cli.params`), precisions,
overrides and layouts, checked before any work starts; a bad one is refused with one
``error:`` line and exit 1 (:func:`fail`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from trnkb.cli.params import Positive, Shown, Whole

if TYPE_CHECKING:
    from trnkb.workload import Input, Model, System


# Upper bounds keep a hostile value from turning into hours of work.
LIMITS = {"--chips": 10_000_000, "--batch": 10_000_000, "--concurrency": 1_000_000,
          "--requests": 100_000, "--max-seqs": 100_000, "--replicas": 100_000,
          "--input-len": 100_000_000, "--output-len": 100_000_000, "--seq-len": 100_000_000,
          "--tp": 65_536, "--dp": 65_536, "--pp": 65_536, "--prefill-tp": 65_536,
          "--top": 100_000}

TOKENS = Shown("15e12")  # the default token budget, shown as written


def whole_opt(option: str, help: str) -> Any:
    """A whole-number option: at least 1, at most its :data:`LIMITS` entry (parsed by
    :class:`~trnkb.cli.params.Whole` as the command line is read)."""
    return typer.Option(option, parser=Whole(option, LIMITS.get(option)), help=help)


def number_opt(option: str, help: str) -> Any:
    """A positive finite number option (:class:`~trnkb.cli.params.Positive`)."""
    return typer.Option(option, parser=Positive(option), help=help)


def precision(text: str | None, what: str = "--precision") -> str | None:
    """None (the default) or a precision the workload layer knows."""
    from trnkb.workload.models import WEIGHT_BYTES
    from trnkb.workload.system import PRECISION_FIELDS

    known = sorted(set(WEIGHT_BYTES) | set(PRECISION_FIELDS))
    if text is None:
        return None
    if text not in known:
        raise ValueError(f"{what} must be one of {', '.join(known)}, not {text[:40]!r}")
    return text


def overrides(items: list[str] | None) -> dict[str, Input]:
    from trnkb.workload.ranges import Input

    out: dict[str, Input] = {}
    for item in items or []:
        name, sep, val = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set expects NAME=VALUE or NAME=LOW:CENTRAL:HIGH, not {item!r}")
        parts = [Positive(f"--set {name}")(p) for p in val.split(":")]
        if len(parts) == 1:
            parts = parts * 3
        if len(parts) != 3 or not parts[0] <= parts[1] <= parts[2]:
            raise ValueError(f"--set {name}: give one value or LOW:CENTRAL:HIGH in order")
        lo, mid, hi = parts
        out[name.strip()] = Input(name.strip(), lo, mid, hi, "", "user", "set by the user")
    return out


def objects(specs: Path | None, model_id: str, system_id: str,
            gen: str | None) -> tuple[Model, System]:
    """The model and the system (remembered across processes: :mod:`trnkb.cli.workload_objects`)."""
    from trnkb.cli.workload_objects import objects as remembered

    return remembered(specs, model_id, system_id, gen)


def fail(e: Exception) -> NoReturn:
    from trnkb.spec.specfile import _one_line

    msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    print(_one_line(f"error: {msg}"), file=sys.stderr)
    raise typer.Exit(1) from None


def lora(text: str | None, bench: str | None, specs: Path | None,
         seq_len: int) -> tuple[Any, int]:
    """(LoRA or None, --seq-len) from ``--lora RANK[:TARGETS]`` and a training benchmark."""
    from trnkb.workload.benchmarks import benchmark
    from trnkb.workload.lora import LoRA

    if bench is not None:
        b = benchmark(bench, specs)
        if b.kind != "training":
            raise ValueError(f"benchmark {b.id} is an inference benchmark; use it with "
                             f"`trnkb workload serve`")
        lo = b.extra.get("lora")
        if lo and text is None:
            text = f"{lo['rank']}:{lo['targets'].replace('_proj', '')}"
        sl = b.extra.get("seq_len")
        if sl:
            seq_len = int(sl["value"])
    if text is None:
        return None, seq_len
    rank, _, targets = text.partition(":")
    names = tuple(t.strip() for t in targets.split(",") if t.strip()) or ("qkv", "o")
    return LoRA(Whole("--lora")(rank), names), seq_len


def bench_eval_tokens(bench: str | None, specs: Path | None, tokens: float, seq_len: int) -> float:
    """Tokens a training ``--benchmark``'s evaluation schedule forwards within ``--tokens``."""
    from trnkb.workload.benchmarks import benchmark
    from trnkb.workload.evals import benchmark_eval_tokens

    if bench is None:
        return 0.0
    return benchmark_eval_tokens(benchmark(bench, specs).extra, tokens, seq_len)


def disagg(text: str | None, prefill_tp: int | None, tp: int | None) -> Any:
    """``xPyD`` -> (x, y, prefill Layout)."""
    import re

    from trnkb.workload import Layout

    if text is None:
        return None
    hit = re.fullmatch(r"\s*(\d{1,4})\s*[Pp]\s*(\d{1,4})\s*[Dd]\s*", text)
    if not hit or int(hit.group(1)) < 1 or int(hit.group(2)) < 1:
        raise ValueError(f"--disagg expects xPyD with x, y >= 1 (e.g. 2P1D), not {text[:40]!r}")
    ptp = prefill_tp or tp
    if ptp is None:
        raise ValueError("--disagg needs --prefill-tp (chips of one prefill instance) or --tp")
    return int(hit.group(1)), int(hit.group(2)), Layout(ptp, 1, 1)


def serve_args(prefill_tp: int | None, disagg: str | None, slo: str | None) -> None:
    """Refuse, before any work, a --prefill-tp without --disagg (it would be ignored), and an
    --slo that names no valid target."""
    if prefill_tp is not None and disagg is None:
        raise ValueError("--prefill-tp sizes the prefill instances of --disagg; give --disagg "
                         "(e.g. 2P1D) or leave --prefill-tp out")
    if slo is not None:
        from trnkb.workload.slo import parse_slo

        parse_slo(slo)


