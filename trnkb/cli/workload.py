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

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

import trnkb
from trnkb.cli import workload_args as A
from trnkb.cli import workload_show as S
from trnkb.cli.kbcmds import JsonOpt, SpecsOpt, print_json

if TYPE_CHECKING:
    from trnkb.workload import Model, System

ModelOpt = Annotated[str, typer.Option(
    "--model", help="Model id (trnkb list models), e.g. llama-3.1-70b.")]
SystemOpt = Annotated[str, typer.Option(
    "--system", help="Rack / scale-up domain id (trnkb list racks).")]
ChipsOpt = Annotated[int, A.whole_opt("--chips", "Chips used.")]
SeqLenOpt = Annotated[int, A.whole_opt("--seq-len", "Tokens per training sequence.")]
TokensOpt = Annotated[float, A.number_opt("--tokens", "Token budget, e.g. 15e12.")]
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


def _simulated(m: Model, s: System, specs: Path | None, *, chips: int, input_len: int | None,
               output_len: int | None, precision: str, kv_precision: str | None,
               tp: int | None, dp: int | None, pp: int | None, replicas: int | None,
               disagg: str | None, prefill_tp: int | None, concurrency: int | None,
               rate: float | None, slo: str | None, curve: bool, bench: str | None,
               requests: int | None, max_seqs: int | None, set_: list[str] | None,
               pricing: str, batching: str = "continuous", stack: str | None = None) -> Any:
    """The simulator's answer for ``serve`` (a result, or the curve as a dict)."""
    from trnkb import workload as W
    from trnkb.workload.benchmarks import benchmark
    from trnkb.workload.fromkb import normalise_id

    b = benchmark(bench, specs) if bench is not None else None
    ins, outs = input_len, output_len
    if b is not None:
        for flag, mine, theirs in (("--input-len", ins, b.input_len),
                                   ("--output-len", outs, b.output_len)):
            if mine is None and theirs is None:
                bound = (f"; published bound: at most {b.input_max:.0f} tokens"
                         if flag == "--input-len" and b.input_max else "")
                raise ValueError(f"benchmark {b.id} has no sourced mean {flag[2:]} "
                                 f"({b.missing or 'not published'}{bound}); pass {flag}")
        if b.kind != "inference":
            raise ValueError(f"benchmark {b.id} is a {b.kind} benchmark; use it with "
                             f"`trnkb workload train`")
    in_len: Any = ins or (b.input_len if b and b.input_len else 2048)
    out_len: Any = outs or (b.output_len if b and b.output_len else 512)
    in_len = W.Lengths(float(in_len)) if isinstance(in_len, float) else in_len
    out_len = W.Lengths(float(out_len)) if isinstance(out_len, float) else out_len
    conc, rate_v, n = concurrency, rate, chips
    kw: dict[str, Any] = {
        "input_len": in_len, "output_len": out_len, "precision": precision,
        "kv_precision": kv_precision, "tp": tp, "dp": dp, "pp": pp or 1,
        "replicas": replicas or 1, "disagg": A.disagg(disagg, prefill_tp, tp),
        "requests": requests, "max_seqs": max_seqs, "assumptions": A.overrides(set_),
        "pricing": pricing, "batching": batching, "stack": stack}
    target = slo if slo is not None else (b.slo if b is not None and b.slo and conc is None
                                          and rate_v is None else None)
    if curve or (b is not None and b.load == "concurrency" and conc is None and rate_v is None):
        rows = W.frontier(m, s, n, **kw)
        return {"model": m.id, "system": s.id, "chips": n,
                "benchmark": b.id if b is not None else None,
                "input_len": getattr(in_len, "mean", in_len),
                "output_len": getattr(out_len, "mean", out_len), "curve": rows}
    if target:  # an empty --slo was refused by A.serve_args
        res = W.max_throughput(m, s, n, target, **kw)
    else:
        res = W.simulate(m, s, n, rate=rate_v, concurrency=conc, **kw)
    if b is not None:
        res.settings["benchmark"] = b.id
        res.extra["benchmark"] = b.to_dict()
        if b.model and normalise_id(b.model) != normalise_id(m.id):
            res.notes.append(f"benchmark {b.id} is defined for {b.model}, not {m.id}")
    return res


def register(app: typer.Typer) -> None:
    wl = typer.Typer(
        help="Train and serve models on systems: time, chips, tokens/s, cost, with ranges.",
        no_args_is_help=True, add_completion=False, rich_markup_mode=None)
    app.add_typer(wl, name="workload")
    from trnkb.cli.fleet import register_fleet

    register_fleet(wl)  # plan-fleet, cost-target, train-plan (issue 21)

    @wl.command("train")
    def train_cmd(model: ModelOpt, system: SystemOpt, chips: ChipsOpt,
                  tokens: TokensOpt = A.TOKENS,
                  plan: Annotated[str | None, typer.Option(
                      "--plan",
                      help="e.g. tp=4,pp=2,zero=1; default: the fastest plan that fits.",
                  )] = None,
                  precision: PrecisionOpt = None,
                  seq_len: SeqLenOpt = 8192,
                  batch_tokens: Annotated[float, A.number_opt(
                      "--batch-tokens", "Tokens per optimizer step (global batch x sequence)."
                  )] = 4194304,
                  recipe: Annotated[str, typer.Option(
                      "--recipe", help="bf16-adam, fp8-adam, scaling-book; with --lora bf16-lora "
                                  "(default) or fp8-lora (frozen base in fp8)")] = "bf16-adam",
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
                  eval_tokens: Annotated[float | None, A.number_opt(
                      "--eval-tokens", "Tokens the run's evaluations forward in all "
                                       "(evaluations x samples x sequence), timed inside "
                                       "the days, e.g. 7.1e6; default: the --benchmark's "
                                       "evaluation schedule over --tokens, else none.")
                  ] = None,
                  attention_precision: Annotated[str | None, typer.Option(
                      "--attention-precision", help="Precision of the attention FLOPs when "
                                                    "it differs from --precision (the GEMMs'), "
                                                    "e.g. fp8 with --precision fp4.")] = None,
                  switch_gen: GenOpt = None, set_: SetOpt = None, pricing: PricingOpt = "tco",
                  specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """Time, cost and energy to train MODEL on CHIPS chips of SYSTEM for TOKENS tokens."""
        from trnkb import workload as W
        try:
            precision = A.precision(precision)
            lora_obj, seq_len = A.lora(lora, bench, specs, seq_len)
            m, s = A.objects(specs, model, system, switch_gen)
            prec = precision or s.fallback_precision("bf16")
            extra = A.overrides(set_)
            if mfu_from_engine:
                from trnkb.workload.engine_mfu import engine_mfu

                extra = {"mfu": engine_mfu(trnkb.load(specs), m, s.chip, dtype=prec), **extra}
            res = W.train(m, s, chips, plan, tokens, prec, seq_len=seq_len,
                          batch_tokens=batch_tokens,
                          recipe="bf16-lora" if lora_obj and recipe == "bf16-adam" else recipe,
                          assumptions=extra, pricing=pricing, lora=lora_obj,
                          eval_tokens=(eval_tokens if eval_tokens is not None else
                                       A.bench_eval_tokens(bench, specs, tokens, seq_len)),
                          attention_precision=A.precision(attention_precision,
                                                              "--attention-precision"))
            if precision is None and prec != "bf16":
                res.notes.append(
                    f"{s.chip} has no bf16 peak in the knowledge base; trained at {prec}")
        except (KeyError, ValueError) as e:
            A.fail(e)
        print_json(res.to_dict()) if as_json else S.show_result(res)

    @wl.command("serve")
    def serve_cmd(model: ModelOpt, system: SystemOpt, chips: ChipsOpt = 8,
                  batch: Annotated[int, A.whole_opt(
                      "--batch", "Sequences decoded together on the replica (closed-form "
                                 "answer only).")] = 64,
                  input_len: Annotated[int | None, A.whole_opt(
                      "--input-len", "Prompt tokens per sequence (default 2048, or the "
                                     "benchmark's).")] = None,
                  output_len: Annotated[int | None, A.whole_opt(
                      "--output-len", "Generated tokens per sequence (default 512, or the "
                                      "benchmark's).")] = None,
                  precision: PrecisionOpt = None,
                  kv_precision: Annotated[str | None, typer.Option(
                      "--kv-precision", help="KV-cache format (default: --precision).")] = None,
                  tp: Annotated[int | None, A.whole_opt(
                      "--tp", "Tensor-parallel width (default: the largest power of two "
                              "dividing the chips and the heads).")] = None,
                  dp: Annotated[int | None, A.whole_opt(
                      "--dp", "Attention data-parallel groups per stage (MoE: experts over "
                              "tp x dp chips, DEP). Simulator.")] = None,
                  pp: Annotated[int | None, A.whole_opt(
                      "--pp", "Pipeline stages. Simulator.")] = None,
                  replicas: Annotated[int | None, A.whole_opt(
                      "--replicas", "Copies of the CHIPS-chip replica. Simulator.")] = None,
                  disagg: Annotated[str | None, typer.Option(
                      "--disagg", help="Disaggregated prefill/decode, e.g. 2P1D: 2 prefill "
                                       "instances of --prefill-tp chips, 1 decode instance of "
                                       "the replica layout. Simulator.")] = None,
                  prefill_tp: Annotated[int | None, A.whole_opt(
                      "--prefill-tp", "Chips (tensor parallel) of one prefill instance "
                                      "under --disagg (default: --tp).")] = None,
                  concurrency: Annotated[int | None, A.whole_opt(
                      "--concurrency", "Closed loop of N clients: latency and throughput "
                                       "at this load (simulator).")] = None,
                  rate: Annotated[float | None, A.number_opt(
                      "--rate", "Poisson arrivals at R requests/s (simulator).")] = None,
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
                  requests: Annotated[int | None, A.whole_opt(
                      "--requests", "Requests to simulate (default: enough for steady "
                                    "percentiles).")] = None,
                  max_seqs: Annotated[int | None, A.whole_opt(
                      "--max-seqs", "Most sequences running per attention group (default: "
                                    "what the KV cache holds, at most 1024).")] = None,
                  batching: Annotated[str | None, typer.Option(
                      "--batching", help="continuous (vLLM, SGLang, TensorRT-LLM) or static "
                                         "(Transformers NeuronX's compiled batch). "
                                         "Simulator.")] = None,
                  stack: Annotated[str | None, typer.Option(
                      "--stack", help="Serving software whose prefill rules apply, e.g. "
                                      "'Transformers NeuronX (Neuron 2.18.0)' (no flash "
                                      "attention before 2.19). Simulator.")] = None,
                  switch_gen: GenOpt = None, set_: SetOpt = None, pricing: PricingOpt = "tco",
                  specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """TTFT, TPOT, tokens/s per chip, per MW and per dollar serving MODEL on one replica.

        Without a load option: the closed-form answer at --batch. With --concurrency, --rate,
        --slo, --curve, --benchmark or a layout option: the step-level simulator
        (continuous batching, chunked prefill, KV admission), p50/p90/p99 latencies.
        """
        from trnkb import workload as W
        sim = any(x is not None for x in (dp, pp, replicas, disagg, concurrency, rate, slo, bench,
                                          requests, max_seqs, batching, stack)) or curve
        try:
            precision = A.precision(precision)
            A.serve_args(prefill_tp, disagg, slo)
            m, s = A.objects(specs, model, system, switch_gen)
            if not sim:
                res = W.serve(m, s, chips, batch, 2048 if input_len is None else input_len,
                              512 if output_len is None else output_len,
                              precision or "bf16", kv_precision=kv_precision,
                              tp=tp, assumptions=A.overrides(set_),
                              pricing=pricing)
            else:
                out = _simulated(m, s, specs, chips=chips, input_len=input_len,
                                 output_len=output_len, precision=precision or "bf16",
                                 kv_precision=kv_precision, tp=tp, dp=dp, pp=pp,
                                 replicas=replicas, disagg=disagg, prefill_tp=prefill_tp,
                                 concurrency=concurrency, rate=rate, slo=slo, curve=curve,
                                 bench=bench, requests=requests, max_seqs=max_seqs,
                                 set_=set_, pricing=pricing,
                                 batching="continuous" if batching is None else batching,
                                 stack=stack)
        except (KeyError, ValueError) as e:
            A.fail(e)
        if sim:
            if isinstance(out, dict):
                if as_json:
                    print_json(out)
                    return
                S.show_curve(out)
                return
            if as_json:
                print_json(out.to_dict())
                return
            S.show_result(out)
            S.show_slo(out.extra.get("slo"))
            return
        if as_json:
            print_json(res.to_dict())
            return
        S.show_result(res)
        S.show_batches(res.extra.get("curve", []))

    @wl.command("plans")
    def plans_cmd(model: ModelOpt, system: SystemOpt, chips: ChipsOpt,
                  tokens: TokensOpt = A.TOKENS,
                  precision: PrecisionOpt = None,
                  seq_len: SeqLenOpt = 8192,
                  top: Annotated[int, A.whole_opt("--top", "How many plans to list.")] = 10,
                  switch_gen: GenOpt = None, set_: SetOpt = None, specs: SpecsOpt = None,
                  as_json: JsonOpt = False) -> None:
        """The parallelism plans that fit, fastest first (central inputs)."""
        from trnkb import workload as W
        try:
            n = chips
            precision = A.precision(precision)
            m, s = A.objects(specs, model, system, switch_gen)
            rows = W.plans(m, s, n, tokens, precision or s.fallback_precision("bf16"),
                           seq_len=seq_len, assumptions=A.overrides(set_), top=top)
        except (KeyError, ValueError) as e:
            A.fail(e)
        data = [{"plan": r["plan"].label, "step_time_s": r["step_time"], "days": r["days"],
                 "memory_GB": r["memory"] / 1e9, "achieved_mfu": r["achieved_mfu"]} for r in rows]
        if as_json:
            print_json({"model": m.id, "system": s.id, "chips": n, "plans": data})
            return
        S.show_plans(data, f"{m.id} on {n} chips of {s.id}")
