"""``trnkb workload`` arguments: numbers, precisions, overrides and layouts, checked before
any work starts; a bad one is refused with one ``error:`` line and exit 1 (:func:`fail`)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

import trnkb

if TYPE_CHECKING:
    from trnkb.workload import Input, Model, System


def number(text: str, what: str) -> float:
    try:
        x = float(text.replace("_", ""))
    except ValueError:
        raise ValueError(f"{what} must be a number, not {text!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{what} must be a positive number, not {text!r}")
    return x


# Upper bounds keep a hostile value from turning into hours of work.
LIMITS = {"--chips": 10_000_000, "--batch": 10_000_000, "--concurrency": 1_000_000,
           "--requests": 100_000, "--max-seqs": 100_000, "--replicas": 100_000,
           "--input-len": 100_000_000,
           "--output-len": 100_000_000, "--seq-len": 100_000_000, "--tp": 65_536,
           "--prefill-tp": 65_536, "--top": 100_000}


def whole(text: str | None, what: str) -> int | None:
    """A whole number of at least 1 (and at most its limit), refused with one line (typer's
    own errors take three); the range check is robust's :func:`trnkb.cli.validate.positive_int`."""
    from trnkb.cli.validate import positive_int

    if text is None:
        return None
    t = str(text).replace("_", "").strip()
    if not t.lstrip("+-").isdigit() or len(t) > 12:
        raise ValueError(f"{what} must be a whole number, not {str(text)[:40]!r}")
    return positive_int(int(t), what, LIMITS.get(what))


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


def count(text: str, what: str) -> int:
    """A required whole-number option (see :func:`whole`)."""
    n = whole(text, what)
    if n is None:
        raise ValueError(f"{what} is required")
    return n


def overrides(items: list[str] | None) -> dict[str, Input]:
    from trnkb.workload.ranges import Input

    out: dict[str, Input] = {}
    for item in items or []:
        name, sep, val = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set expects NAME=VALUE or NAME=LOW:CENTRAL:HIGH, not {item!r}")
        parts = [number(p, f"--set {name}") for p in val.split(":")]
        if len(parts) == 1:
            parts = parts * 3
        if len(parts) != 3 or not parts[0] <= parts[1] <= parts[2]:
            raise ValueError(f"--set {name}: give one value or LOW:CENTRAL:HIGH in order")
        lo, mid, hi = parts
        out[name.strip()] = Input(name.strip(), lo, mid, hi, "", "user", "set by the user")
    return out


def objects(specs: Path | None, model_id: str, system_id: str,
             gen: str | None) -> tuple[Model, System]:
    from trnkb import workload as W

    kb = trnkb.load(specs)
    return W.model(kb, model_id), W.system(kb, system_id, gen)


def fail(e: Exception) -> NoReturn:
    from trnkb.spec.specfile import _one_line

    msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    print(_one_line(f"error: {msg}"), file=sys.stderr)
    raise typer.Exit(1) from None


def lora(text: str | None, bench: str | None, specs: Path | None,
          seq_len: str) -> tuple[Any, str]:
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
            seq_len = str(sl["value"])
    if text is None:
        return None, seq_len
    rank, _, targets = text.partition(":")
    r = whole(rank, "--lora")
    names = tuple(t.strip() for t in targets.split(",") if t.strip()) or ("qkv", "o")
    return LoRA(int(r or 0), names), seq_len


def bench_eval_tokens(bench: str | None, specs: Path | None, tokens: str, seq_len: str) -> float:
    """Tokens a training ``--benchmark``'s evaluation schedule forwards within ``--tokens``."""
    from trnkb.workload.benchmarks import benchmark
    from trnkb.workload.evals import benchmark_eval_tokens

    if bench is None:
        return 0.0
    return benchmark_eval_tokens(benchmark(bench, specs).extra, number(tokens, "--tokens"),
                                 whole(seq_len, "--seq-len") or 1)


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


def serve_args(prefill_tp: str | None, disagg: str | None, slo: str | None) -> None:
    """Refuse, before any work, a --prefill-tp that is not a chip count or comes without
    --disagg (it would be ignored), and an --slo that names no valid target."""
    whole(prefill_tp, "--prefill-tp")
    if prefill_tp is not None and disagg is None:
        raise ValueError("--prefill-tp sizes the prefill instances of --disagg; give --disagg "
                         "(e.g. 2P1D) or leave --prefill-tp out")
    if slo is not None:
        from trnkb.workload.slo import parse_slo

        parse_slo(slo)


