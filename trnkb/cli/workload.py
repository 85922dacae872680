"""``trnkb workload``: train, serve and plan-search a model on a system, with ranges.

    trnkb workload train --model llama-3.1-70b --system trn3-nl72x2-switched --chips 1024 \\
        --tokens 15e12
    trnkb workload serve --model deepseek-v3 --system gb300-nvl72 --chips 72 --batch 64 \\
        --input-len 2048 --output-len 512
    trnkb workload plans --model llama-3.1-70b --system gb300-nvl72 --chips 1024

``--json`` prints the central value, the range and the inputs that move each metric, every
assumption and every input's source. Bad arguments exit 1 with one line.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

import trnkb
from trnkb.cli.kbcmds import JsonOpt, SpecsOpt, print_json
from trnkb.units import format_number

if TYPE_CHECKING:
    from trnkb.workload import Input, Model, Ranged, System, WorkloadResult

__all__ = ["register"]

ModelOpt = Annotated[str, typer.Option(
    "--model", help="Model id (trnkb list models), e.g. llama-3.1-70b.")]
SystemOpt = Annotated[str, typer.Option(
    "--system", help="Rack / scale-up domain id (trnkb list racks).")]
ChipsOpt = Annotated[str, typer.Option("--chips", help="Chips used.")]
SeqLenOpt = Annotated[str, typer.Option("--seq-len", help="Tokens per training sequence.")]
PrecisionOpt = Annotated[str | None, typer.Option(
    "--precision",
    help="bf16, fp8, mxfp8, int8, fp4, mxfp4 (default bf16, or the nearest the chip has).")]
GenOpt = Annotated[str | None, typer.Option(
    "--switch-gen", help="Switch generation of the fabric.")]
PricingOpt = Annotated[str, typer.Option(
    "--pricing", help="tco (the TCO model) or cloud (a sourced public price per chip-hour).")]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", help="Override an input: NAME=VALUE or NAME=LOW:CENTRAL:HIGH (e.g. mfu=0.4).")]


def _number(text: str, what: str) -> float:
    try:
        x = float(text.replace("_", ""))
    except ValueError:
        raise ValueError(f"{what} must be a number, not {text!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{what} must be a positive number, not {text!r}")
    return x


# Upper bounds keep a hostile value from turning into hours of work.
_LIMITS = {"--chips": 10_000_000, "--batch": 10_000_000, "--input-len": 100_000_000,
           "--output-len": 100_000_000, "--seq-len": 100_000_000, "--tp": 65_536, "--top": 100_000}


def _int(text: str | None, what: str) -> int | None:
    """A whole number of at least 1 (and at most its limit), refused with one line (typer's
    own errors take three); the range check is robust's :func:`trnkb.cli.validate.positive_int`."""
    from trnkb.cli.validate import positive_int

    if text is None:
        return None
    t = str(text).replace("_", "").strip()
    if not t.lstrip("+-").isdigit() or len(t) > 12:
        raise ValueError(f"{what} must be a whole number, not {str(text)[:40]!r}")
    return positive_int(int(t), what, _LIMITS.get(what))


def _precision(text: str | None) -> str | None:
    """None (the default) or a precision the workload layer knows."""
    from trnkb.workload.models import WEIGHT_BYTES
    from trnkb.workload.system import PRECISION_FIELDS

    known = sorted(set(WEIGHT_BYTES) | set(PRECISION_FIELDS))
    if text is None:
        return None
    if text not in known:
        raise ValueError(f"--precision must be one of {', '.join(known)}, not {text[:40]!r}")
    return text


def _count(text: str, what: str) -> int:
    """A required whole-number option (see :func:`_int`)."""
    n = _int(text, what)
    if n is None:
        raise ValueError(f"{what} is required")
    return n


def _overrides(items: list[str] | None) -> dict[str, Input]:
    from trnkb.workload.ranges import Input

    out: dict[str, Input] = {}
    for item in items or []:
        name, sep, val = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set expects NAME=VALUE or NAME=LOW:CENTRAL:HIGH, not {item!r}")
        parts = [_number(p, f"--set {name}") for p in val.split(":")]
        if len(parts) == 1:
            parts = parts * 3
        if len(parts) != 3 or not parts[0] <= parts[1] <= parts[2]:
            raise ValueError(f"--set {name}: give one value or LOW:CENTRAL:HIGH in order")
        lo, mid, hi = parts
        out[name.strip()] = Input(name.strip(), lo, mid, hi, "", "user", "set by the user")
    return out


def _objects(specs: Path | None, model_id: str, system_id: str,
             gen: str | None) -> tuple[Model, System]:
    from trnkb import workload as W

    kb = trnkb.load(specs)
    return W.model(kb, model_id), W.system(kb, system_id, gen)


def _num(x: float | None, sig: int = 4) -> str:
    """A prediction for people: ``sig`` significant digits, separators, no exponent
    (``320,100``; large ones rounded too: a model has no seven-digit precision)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return format_number(float(f"{x:.{sig}g}"), sig)


def _fmt(r: Ranged) -> str:
    """``320,100 (148,300 to 562,100) /s/MW``: counts per second are written ``/s``."""
    unit = r.unit.removeprefix("1") if r.unit.startswith("1/") else r.unit
    unit = "days" if unit == "day" else unit
    return f"{_num(r.mid)} ({_num(r.lo)} to {_num(r.hi)}) {unit}".rstrip()


def _print(res: WorkloadResult) -> None:
    print(f"{res.kind}: {res.model} on {res.chips} x {res.system} ({res.precision})")
    plan: Any = res.plan
    if plan is not None:
        print(f"  plan: {plan.label}")
    for k, r in res.metrics.items():
        drivers = ", ".join(d[0] for d in r.drivers[:3])
        print(f"  {k}: {_fmt(r)}" + (f"   moved most by: {drivers}" if drivers else ""))
    for n in res.notes:
        print(f"  note: {n}")


def _fail(e: Exception) -> NoReturn:
    from trnkb.spec.specfile import _one_line

    msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    print(_one_line(f"error: {msg}"), file=sys.stderr)
    raise typer.Exit(1) from None


def register(app: typer.Typer) -> None:
    wl = typer.Typer(
        help="Train and serve models on systems: time, chips, tokens/s, cost, with ranges.",
        no_args_is_help=True, add_completion=False, rich_markup_mode=None)
    app.add_typer(wl, name="workload")

    @wl.command("train")
    def train_cmd(model: ModelOpt, system: SystemOpt, chips: ChipsOpt,
                  tokens: Annotated[str, typer.Option(
                      "--tokens", help="Token budget, e.g. 15e12.")] = "15e12",
                  plan: Annotated[str | None, typer.Option(
                      "--plan",
                      help="e.g. tp=4,pp=2,zero=1; default: the fastest plan that fits.",
                  )] = None,
                  precision: PrecisionOpt = None,
                  seq_len: SeqLenOpt = "8192",
                  batch_tokens: Annotated[str, typer.Option(
                      "--batch-tokens",
                      help="Tokens per optimizer step (global batch x sequence).")] = "4194304",
                  recipe: Annotated[str, typer.Option(
                      "--recipe", help="bf16-adam, fp8-adam, scaling-book")] = "bf16-adam",
                  mfu_from_engine: Annotated[bool, typer.Option(
                      "--mfu-from-engine",
                      help="Trainium: take the MFU from the reference engine's "
                           "simulation of one layer.")] = False,
                  switch_gen: GenOpt = None, set_: SetOpt = None, pricing: PricingOpt = "tco",
                  specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """Time, cost and energy to train MODEL on CHIPS chips of SYSTEM for TOKENS tokens."""
        from trnkb import workload as W
        try:
            precision = _precision(precision)
            m, s = _objects(specs, model, system, switch_gen)
            prec = precision or s.fallback_precision("bf16")
            extra = _overrides(set_)
            if mfu_from_engine:
                from trnkb.workload.engine_mfu import engine_mfu

                extra = {"mfu": engine_mfu(trnkb.load(specs), m, s.chip, dtype=prec), **extra}
            res = W.train(m, s, _count(chips, "--chips"), plan, _number(tokens, "--tokens"),
                          prec,
                          seq_len=_count(seq_len, "--seq-len"),
                          batch_tokens=_number(batch_tokens, "--batch-tokens"), recipe=recipe,
                          assumptions=extra, pricing=pricing)
            if precision is None and prec != "bf16":
                res.notes.append(
                    f"{s.chip} has no bf16 peak in the knowledge base; trained at {prec}")
        except (KeyError, ValueError) as e:
            _fail(e)
        print_json(res.to_dict()) if as_json else _print(res)

    @wl.command("serve")
    def serve_cmd(model: ModelOpt, system: SystemOpt, chips: ChipsOpt = "8",
                  batch: Annotated[str, typer.Option(
                      "--batch", help="Sequences decoded together on the replica.")] = "64",
                  input_len: Annotated[str, typer.Option(
                      "--input-len", help="Prompt tokens per sequence.")] = "2048",
                  output_len: Annotated[str, typer.Option(
                      "--output-len", help="Generated tokens per sequence.")] = "512",
                  precision: PrecisionOpt = None,
                  kv_precision: Annotated[str | None, typer.Option(
                      "--kv-precision", help="KV-cache format (default: --precision).")] = None,
                  tp: Annotated[str | None, typer.Option(
                      "--tp", help="Tensor-parallel width (default: the largest power of two "
                                   "dividing the chips and the heads).")] = None,
                  switch_gen: GenOpt = None, set_: SetOpt = None, pricing: PricingOpt = "tco",
                  specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """TTFT, TPOT, tokens/s per chip, per MW and per dollar serving MODEL on one replica."""
        from trnkb import workload as W
        try:
            precision = _precision(precision)
            m, s = _objects(specs, model, system, switch_gen)
            res = W.serve(m, s, _count(chips, "--chips"), _count(batch, "--batch"),
                          _count(input_len, "--input-len"), _count(output_len, "--output-len"),
                          precision or "bf16", kv_precision=kv_precision,
                          tp=_int(tp, "--tp"), assumptions=_overrides(set_), pricing=pricing)
        except (KeyError, ValueError) as e:
            _fail(e)
        if as_json:
            print_json(res.to_dict())
            return
        _print(res)
        print("  batch  TPOT ms  tok/s/chip  tok/s/user")
        for row in res.extra.get("curve", []):
            print(f"  {row['batch']:>5}  {_num(row['tpot_ms'], 3):>7}"
                  f"  {_num(row['tokens_per_s_per_chip']):>10}"
                  f"  {_num(row['tokens_per_s_per_user']):>10}")

    @wl.command("plans")
    def plans_cmd(model: ModelOpt, system: SystemOpt, chips: ChipsOpt,
                  tokens: Annotated[str, typer.Option(
                      "--tokens", help="Token budget, e.g. 15e12.")] = "15e12",
                  precision: PrecisionOpt = None,
                  seq_len: SeqLenOpt = "8192",
                  top: Annotated[str, typer.Option("--top", help="How many plans to list.")] = "10",
                  switch_gen: GenOpt = None, set_: SetOpt = None, specs: SpecsOpt = None,
                  as_json: JsonOpt = False) -> None:
        """The parallelism plans that fit, fastest first (central inputs)."""
        from trnkb import workload as W
        try:
            n, top_n = _count(chips, "--chips"), _count(top, "--top")
            seq = _count(seq_len, "--seq-len")
            precision = _precision(precision)
            m, s = _objects(specs, model, system, switch_gen)
            rows = W.plans(m, s, n, _number(tokens, "--tokens"),
                           precision or s.fallback_precision("bf16"), seq_len=seq,
                           assumptions=_overrides(set_), top=top_n)
        except (KeyError, ValueError) as e:
            _fail(e)
        data = [{"plan": r["plan"].label, "step_time_s": r["step_time"], "days": r["days"],
                 "memory_GB": r["memory"] / 1e9, "achieved_mfu": r["achieved_mfu"]} for r in rows]
        if as_json:
            print_json({"model": m.id, "system": s.id, "chips": n, "plans": data})
            return
        if not data:
            print(f"no plan fits {m.id} on {n} chips of {s.id}")
        for d in data:
            print(f"{_num(d['days']):>9} days  step {_num(d['step_time_s']):>7} s"
                  f"  {_num(d['memory_GB']):>6} GB/chip  "
                  f"MFU {d['achieved_mfu']:.2f}  {d['plan']}")
