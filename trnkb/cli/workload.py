"""``trnkb workload``: train, serve and plan-search a model on a system, with ranges.

    trnkb workload train --model llama-3.1-70b --system trn3-nl72x2-switched --chips 1024 \\
        --tokens 15e12
    trnkb workload serve --model deepseek-v3 --system gb300-nvl72 --chips 72 --batch 64 \\
        --input-len 2048 --output-len 512
    trnkb workload plans --model llama-3.1-70b --system gb300-nvl72 --chips 1024
    trnkb workload serve --model llama-2-70b --system gb300-nvl72 --chips 8 \\
        --benchmark mlperf-inf-llama2-70b-server --input-len 1024
    trnkb workload serve --model llama-2-70b --system gb300-nvl72 --chips 8 --curve

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
    "--pricing", help="owner (alias tco: analyst owner cost or the TCO formula) or cloud (the "
                      "sourced prices a renter pays per chip-hour; `trnkb prices`).")]
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
_LIMITS = {"--chips": 10_000_000, "--batch": 10_000_000, "--concurrency": 1_000_000,
           "--requests": 100_000, "--max-seqs": 100_000, "--replicas": 100_000,
           "--input-len": 100_000_000,
           "--output-len": 100_000_000, "--seq-len": 100_000_000, "--tp": 65_536,
           "--prefill-tp": 65_536, "--top": 100_000}


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


def _lora(text: str | None, bench: str | None, specs: Path | None,
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
    r = _int(rank, "--lora")
    names = tuple(t.strip() for t in targets.split(",") if t.strip()) or ("qkv", "o")
    return LoRA(int(r or 0), names), seq_len


def _disagg(text: str | None, prefill_tp: int | None, tp: int | None) -> Any:
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


def _serve_args(prefill_tp: str | None, disagg: str | None, slo: str | None) -> None:
    """Refuse, before any work, a --prefill-tp that is not a chip count or comes without
    --disagg (it would be ignored), and an --slo that names no valid target."""
    _int(prefill_tp, "--prefill-tp")
    if prefill_tp is not None and disagg is None:
        raise ValueError("--prefill-tp sizes the prefill instances of --disagg; give --disagg "
                         "(e.g. 2P1D) or leave --prefill-tp out")
    if slo is not None:
        from trnkb.workload.slo import parse_slo

        parse_slo(slo)


def _simulated(m: Model, s: System, specs: Path | None, *, chips: str, input_len: str | None,
               output_len: str | None, precision: str, kv_precision: str | None,
               tp: str | None, dp: str | None, pp: str | None, replicas: str | None,
               disagg: str | None, prefill_tp: str | None, concurrency: str | None,
               rate: str | None, slo: str | None, curve: bool, bench: str | None,
               requests: str | None, max_seqs: str | None, set_: list[str] | None,
               pricing: str, batching: str = "continuous") -> Any:
    """The simulator's answer for ``serve`` (a result, or the curve as a dict)."""
    from trnkb import workload as W
    from trnkb.workload.benchmarks import benchmark
    from trnkb.workload.fromkb import normalise_id

    b = benchmark(bench, specs) if bench is not None else None
    ins = _int(input_len, "--input-len")
    outs = _int(output_len, "--output-len")
    if b is not None:
        for flag, mine, theirs in (("--input-len", ins, b.input_len),
                                   ("--output-len", outs, b.output_len)):
            if mine is None and theirs is None:
                raise ValueError(f"benchmark {b.id} has no sourced {flag[2:]} "
                                 f"({b.missing or 'not published'}); pass {flag}")
        if b.kind != "inference":
            raise ValueError(f"benchmark {b.id} is a {b.kind} benchmark; use it with "
                             f"`trnkb workload train`")
    in_len: Any = ins or (b.input_len if b and b.input_len else 2048)
    out_len: Any = outs or (b.output_len if b and b.output_len else 512)
    in_len = W.Lengths(float(in_len)) if isinstance(in_len, float) else in_len
    out_len = W.Lengths(float(out_len)) if isinstance(out_len, float) else out_len
    conc = _int(concurrency, "--concurrency")
    rate_v = _number(rate, "--rate") if rate is not None else None
    tp_v = _int(tp, "--tp")
    kw: dict[str, Any] = {
        "input_len": in_len, "output_len": out_len, "precision": precision,
        "kv_precision": kv_precision, "tp": tp_v, "dp": _int(dp, "--dp"),
        "pp": _int(pp, "--pp") or 1, "replicas": _int(replicas, "--replicas") or 1,
        "disagg": _disagg(disagg, _int(prefill_tp, "--prefill-tp"), tp_v),
        "requests": _int(requests, "--requests"), "max_seqs": _int(max_seqs, "--max-seqs"),
        "assumptions": _overrides(set_), "pricing": pricing, "batching": batching}
    n = _count(chips, "--chips")
    target = slo if slo is not None else (b.slo if b is not None and b.slo and conc is None
                                          and rate_v is None else None)
    if curve or (b is not None and b.load == "concurrency" and conc is None and rate_v is None):
        rows = W.frontier(m, s, n, **kw)
        return {"model": m.id, "system": s.id, "chips": n,
                "benchmark": b.id if b is not None else None,
                "input_len": getattr(in_len, "mean", in_len),
                "output_len": getattr(out_len, "mean", out_len), "curve": rows}
    if target:  # an empty --slo was refused by _serve_args
        res = W.max_throughput(m, s, n, target, **kw)
    else:
        res = W.simulate(m, s, n, rate=rate_v, concurrency=conc, **kw)
    if b is not None:
        res.settings["benchmark"] = b.id
        res.extra["benchmark"] = b.to_dict()
        if b.model and normalise_id(b.model) != normalise_id(m.id):
            res.notes.append(f"benchmark {b.id} is defined for {b.model}, not {m.id}")
    return res


def _print_curve(out: dict[str, Any]) -> None:
    print(f"frontier: {out['model']} on {out['chips']} x {out['system']} "
          f"({_num(out['input_len'])} in / {_num(out['output_len'])} out)")
    print("  clients  tok/s/chip (range)              tok/s/user (range)")
    for r in out["curve"]:
        c, u = r["tokens_per_s_per_chip"], r["tokens_per_s_per_user"]
        print(f"  {r['concurrency']:>7}  {_num(c['central']):>8} ({_num(c['low'])} to "
              f"{_num(c['high'])})  {_num(u['central']):>8} ({_num(u['low'])} to "
              f"{_num(u['high'])})")


def register(app: typer.Typer) -> None:
    wl = typer.Typer(
        help="Train and serve models on systems: time, chips, tokens/s, cost, with ranges.",
        no_args_is_help=True, add_completion=False, rich_markup_mode=None)
    app.add_typer(wl, name="workload")
    from trnkb.cli.fleet import register_fleet

    register_fleet(wl)  # plan-fleet, cost-target, train-plan (issue 21)

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
                  lora: Annotated[str | None, typer.Option(
                      "--lora", help="LoRA fine-tuning on a frozen base: RANK or "
                                     "RANK:TARGETS, e.g. 16:qkv,o (targets qkv, o, gate, up, "
                                     "down).")] = None,
                  bench: Annotated[str | None, typer.Option(
                      "--benchmark", help="Training benchmark id from specs/benchmarks.yaml "
                                          "(sets --seq-len and --lora), e.g. "
                                          "mlperf-train-llama2-70b-lora.")] = None,
                  switch_gen: GenOpt = None, set_: SetOpt = None, pricing: PricingOpt = "tco",
                  specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """Time, cost and energy to train MODEL on CHIPS chips of SYSTEM for TOKENS tokens."""
        from trnkb import workload as W
        try:
            precision = _precision(precision)
            lora_obj, seq_len = _lora(lora, bench, specs, seq_len)
            m, s = _objects(specs, model, system, switch_gen)
            prec = precision or s.fallback_precision("bf16")
            extra = _overrides(set_)
            if mfu_from_engine:
                from trnkb.workload.engine_mfu import engine_mfu

                extra = {"mfu": engine_mfu(trnkb.load(specs), m, s.chip, dtype=prec), **extra}
            res = W.train(m, s, _count(chips, "--chips"), plan, _number(tokens, "--tokens"),
                          prec,
                          seq_len=_count(seq_len, "--seq-len"),
                          batch_tokens=_number(batch_tokens, "--batch-tokens"),
                          recipe="bf16-lora" if lora_obj and recipe == "bf16-adam" else recipe,
                          assumptions=extra, pricing=pricing, lora=lora_obj)
            if precision is None and prec != "bf16":
                res.notes.append(
                    f"{s.chip} has no bf16 peak in the knowledge base; trained at {prec}")
        except (KeyError, ValueError) as e:
            _fail(e)
        print_json(res.to_dict()) if as_json else _print(res)

    @wl.command("serve")
    def serve_cmd(model: ModelOpt, system: SystemOpt, chips: ChipsOpt = "8",
                  batch: Annotated[str, typer.Option(
                      "--batch", help="Sequences decoded together on the replica (closed-form "
                                      "answer only).")] = "64",
                  input_len: Annotated[str | None, typer.Option(
                      "--input-len", help="Prompt tokens per sequence (default 2048, or the "
                                          "benchmark's).")] = None,
                  output_len: Annotated[str | None, typer.Option(
                      "--output-len", help="Generated tokens per sequence (default 512, or the "
                                           "benchmark's).")] = None,
                  precision: PrecisionOpt = None,
                  kv_precision: Annotated[str | None, typer.Option(
                      "--kv-precision", help="KV-cache format (default: --precision).")] = None,
                  tp: Annotated[str | None, typer.Option(
                      "--tp", help="Tensor-parallel width (default: the largest power of two "
                                   "dividing the chips and the heads).")] = None,
                  dp: Annotated[str | None, typer.Option(
                      "--dp", help="Attention data-parallel groups per stage (MoE: experts over "
                                   "tp x dp chips, DEP). Simulator.")] = None,
                  pp: Annotated[str | None, typer.Option(
                      "--pp", help="Pipeline stages. Simulator.")] = None,
                  replicas: Annotated[str | None, typer.Option(
                      "--replicas", help="Copies of the CHIPS-chip replica. Simulator.")] = None,
                  disagg: Annotated[str | None, typer.Option(
                      "--disagg", help="Disaggregated prefill/decode, e.g. 2P1D: 2 prefill "
                                       "instances of --prefill-tp chips, 1 decode instance of "
                                       "the replica layout. Simulator.")] = None,
                  prefill_tp: Annotated[str | None, typer.Option(
                      "--prefill-tp", help="Chips (tensor parallel) of one prefill instance "
                                           "under --disagg (default: --tp).")] = None,
                  concurrency: Annotated[str | None, typer.Option(
                      "--concurrency", help="Closed loop of N clients: latency and throughput "
                                            "at this load (simulator).")] = None,
                  rate: Annotated[str | None, typer.Option(
                      "--rate", help="Poisson arrivals at R requests/s (simulator).")] = None,
                  slo: Annotated[str | None, typer.Option(
                      "--slo", help="Highest throughput meeting p-latency targets, e.g. "
                                    "ttft_p99=2s,tpot_p99=80ms (simulator).")] = None,
                  curve: Annotated[bool, typer.Option(
                      "--curve", help="Throughput-interactivity frontier: tokens/s per chip "
                                      "against tokens/s per user, with ranges "
                                      "(simulator).")] = False,
                  bench: Annotated[str | None, typer.Option(
                      "--benchmark", help="Benchmark id from specs/benchmarks.yaml: sets lengths, "
                                          "SLO and load (e.g. mlperf-inf-llama2-70b-server, "
                                          "dashboard-1k-1k).")] = None,
                  requests: Annotated[str | None, typer.Option(
                      "--requests", help="Requests to simulate (default: enough for steady "
                                         "percentiles).")] = None,
                  max_seqs: Annotated[str | None, typer.Option(
                      "--max-seqs", help="Most sequences running per attention group (default: "
                                         "what the KV cache holds, at most 1024).")] = None,
                  batching: Annotated[str | None, typer.Option(
                      "--batching", help="continuous (vLLM, SGLang, TensorRT-LLM) or static "
                                         "(Transformers NeuronX's compiled batch). "
                                         "Simulator.")] = None,
                  switch_gen: GenOpt = None, set_: SetOpt = None, pricing: PricingOpt = "tco",
                  specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """TTFT, TPOT, tokens/s per chip, per MW and per dollar serving MODEL on one replica.

        Without a load option: the closed-form answer at --batch. With --concurrency, --rate,
        --slo, --curve, --benchmark or a layout option: the step-level simulator
        (continuous batching, chunked prefill, KV admission), p50/p90/p99 latencies.
        """
        from trnkb import workload as W
        sim = any(x is not None for x in (dp, pp, replicas, disagg, concurrency, rate, slo, bench,
                                          requests, max_seqs, batching)) or curve
        try:
            precision = _precision(precision)
            _serve_args(prefill_tp, disagg, slo)
            m, s = _objects(specs, model, system, switch_gen)
            if not sim:
                res = W.serve(m, s, _count(chips, "--chips"), _count(batch, "--batch"),
                              _count("2048" if input_len is None else input_len, "--input-len"),
                              _count("512" if output_len is None else output_len,
                                     "--output-len"),
                              precision or "bf16", kv_precision=kv_precision,
                              tp=_int(tp, "--tp"), assumptions=_overrides(set_), pricing=pricing)
            else:
                out = _simulated(m, s, specs, chips=chips, input_len=input_len,
                                 output_len=output_len, precision=precision or "bf16",
                                 kv_precision=kv_precision, tp=tp, dp=dp, pp=pp,
                                 replicas=replicas, disagg=disagg, prefill_tp=prefill_tp,
                                 concurrency=concurrency, rate=rate, slo=slo, curve=curve,
                                 bench=bench, requests=requests, max_seqs=max_seqs,
                                 set_=set_, pricing=pricing, batching=batching or "continuous")
        except (KeyError, ValueError) as e:
            _fail(e)
        if sim:
            if isinstance(out, dict):
                if as_json:
                    print_json(out)
                    return
                _print_curve(out)
                return
            if as_json:
                print_json(out.to_dict())
                return
            _print(out)
            if "slo" in out.extra:
                found = out.extra["slo"]
                print(f"  slo: {'met' if found['met'] else 'NOT met'} at "
                      f"{_num(found['rate_per_s'])} requests/s "
                      + ", ".join(f"{k}<={_num(v, 3)} s" for k, v in found["targets"].items()))
            return
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
