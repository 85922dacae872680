"""``trnkb workload plan-fleet | cost-target | train-plan``: planner answers, with ranges.

    trnkb workload plan-fleet --model llama-3.1-70b --system gb300-nvl72 --power-mw 50 \\
        --tokens-per-user 50 --precision fp8
    trnkb workload cost-target --model llama-3.1-70b --system mi355x-8 --max-usd-per-mtok 0.5
    trnkb workload train-plan --model llama-3.1-70b --system trn3-nl72x2-switched \\
        --tokens 15e12 --days 30

Every answer gives central, low and high, and the inputs its $ figure rests on (sourced or
assumption, with their share of the range). ``--pricing owner`` (default) or ``cloud``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from trnkb.cli import workload_args as A
from trnkb.cli.kbcmds import JsonOpt, SpecsOpt, _console, _rich_table, print_json

_Model = Annotated[str, typer.Option("--model", help="Model id (trnkb list models).")]
_System = Annotated[str, typer.Option("--system", help="Rack id (trnkb list racks).")]
_Prec = Annotated[str, typer.Option("--precision", help="Weight format: bf16, fp8, fp4...")]
_Pricing = Annotated[str, typer.Option(
    "--pricing", help="owner (analyst owner cost or the TCO formula) or cloud (`trnkb prices`).")]
_Chips = Annotated[int | None, A.whole_opt(
    "--chips", "Chips per serving replica (default: the smallest power of two from 8 "
               "whose KV cache holds a sequence per attention replica).")]
_In = Annotated[int, A.whole_opt("--input-len", "Prompt tokens per request.")]
_Out = Annotated[int, A.whole_opt("--output-len", "Generated tokens per request.")]
_Engine = Annotated[str, typer.Option(
    "--engine", help="simulate (the step-level serving simulator, concurrency sweep) or "
                     "closed-form (serve's roofline, batch sweep).")]


def _r(d: dict[str, Any] | None, sig: int = 3) -> str:
    if not d or d.get("central") is None:
        return "n/a"
    return f"{d['central']:.{sig}g} ({d['low']:.{sig}g} to {d['high']:.{sig}g})"


def _shares(rows: list[dict[str, Any]]) -> None:
    t = _rich_table("rests on (input)", "kind", "share of the range")
    for s in rows[:6]:
        t.add_row(s["input"], s["kind"], f"{s['share']:.0%}")
    _console().print(t)


def _serving(specs: Any, model: str, system: str, precision: str, chips: int | None,
             input_len: int, output_len: int) -> tuple[Any, Any, dict[str, Any]]:
    """The options plan-fleet and cost-target share, checked: (model, system, keywords)."""
    A.precision(precision)
    m, s = A.objects(specs, model, system, None)
    return m, s, {"input_len": input_len, "output_len": output_len, "chips": chips}


def register_fleet(wl: typer.Typer) -> None:
    """Add the planner commands to the ``trnkb workload`` group."""
    @wl.command("plan-fleet")
    def plan_fleet_cmd(model: _Model, system: _System,
                       power_mw: Annotated[float, A.number_opt(
                           "--power-mw", "Facility power budget, MW.")] = 50,
                       tokens_per_user: Annotated[float, A.number_opt(
                           "--tokens-per-user", "Target tokens/s per user.")] = 50,
                       precision: _Prec = "fp8", chips: _Chips = None,
                       input_len: _In = 2048, output_len: _Out = 512,
                       pricing: _Pricing = "owner", engine: _Engine = "simulate",
                       specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """Racks, tokens/s and $/Mtok that POWER_MW of facility power buys at a target
        tokens/s per user."""
        from trnkb.workload.fleet import plan_fleet
        try:
            m, s, kw = _serving(specs, model, system, precision, chips, input_len, output_len)
            r = plan_fleet(m, s, power_mw, tokens_per_user, precision,
                           pricing=pricing, engine=engine, **kw)
        except (KeyError, ValueError) as e:
            A.fail(e)
        if as_json:
            print_json(r)
            return
        reach = "" if r["reachable"] else " (target NOT reached; most interactive point shown)"
        print(f"{r['system']}: {r['model']} {r['precision']}, {r['power_mw']:g} MW, "
              f"{r['pricing']} pricing{reach}")
        print(f"  operating point   load {r['load']} ({r['engine']}) on {r['replica_chips']} "
              f"chips, {r['tokens_per_s_per_user']:.3g} tok/s/user")
        print(f"  racks             {r['racks']['central']} ({r['racks']['low']} to "
              f"{r['racks']['high']}) of {r['racks']['chips_per_rack']} chips")
        print(f"  fleet tokens/s    {_r(r['fleet_tokens_per_s'])}")
        print(f"  $/Mtok            {_r(r['usd_per_million_tokens'])}")
        _shares(r["usd_per_million_tokens_rests_on"])

    @wl.command("cost-target")
    def cost_target_cmd(model: _Model, system: _System,
                        max_usd_per_mtok: Annotated[float, A.number_opt(
                            "--max-usd-per-mtok", "Cost ceiling, USD per million output "
                                                  "tokens.")] = 1,
                        precision: _Prec = "fp8", chips: _Chips = None,
                        input_len: _In = 2048, output_len: _Out = 512,
                        pricing: _Pricing = "owner", engine: _Engine = "simulate",
                        specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """The tokens/s per user SYSTEM reaches at or under a $/Mtok ceiling."""
        from trnkb.workload.fleet import cost_target
        try:
            m, s, kw = _serving(specs, model, system, precision, chips, input_len, output_len)
            r = cost_target(m, s, max_usd_per_mtok, precision,
                            pricing=pricing, engine=engine, **kw)
        except (KeyError, ValueError) as e:
            A.fail(e)
        if as_json:
            print_json(r)
            return
        t = r["tokens_per_s_per_user"]

        def f(x: float | None) -> str:
            return "not reachable" if x is None else f"{x:.3g}"
        print(f"{r['system']}: {r['model']} {r['precision']} at <= "
              f"${r['max_usd_per_million_tokens']:g}/Mtok ({r['pricing']} pricing)")
        print(f"  tok/s/user  central {f(t['central'])}, optimistic {f(t['optimistic'])}, "
              f"pessimistic {f(t['pessimistic'])}")
        _shares(r["rests_on"])

    @wl.command("train-plan")
    def train_plan_cmd(model: _Model, system: _System,
                       tokens: Annotated[float, A.number_opt("--tokens", "Tokens.")]
                       = A.TOKENS,
                       days: Annotated[float, A.number_opt("--days", "Days.")] = 30,
                       precision: _Prec = "bf16", pricing: _Pricing = "owner",
                       specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
        """Chips and racks to train MODEL on TOKENS tokens in DAYS days; cost and energy."""
        from trnkb.workload.fleet import train_plan
        try:
            A.precision(precision)
            m, s = A.objects(specs, model, system, None)
            r = train_plan(m, s, tokens, days, precision, pricing=pricing)
        except (KeyError, ValueError) as e:
            A.fail(e)
        if as_json:
            print_json(r)
            return
        print(f"{r['system']}: {r['model']} on {r['tokens']:.3g} tokens in {r['target_days']:g} "
              f"days ({r['pricing']} pricing)")
        print(f"  {r['chips']} chips = {r['racks']} racks, plan {r['plan']}")
        print(f"  days        {_r(r['days'])}")
        print(f"  cost USD    {_r(r['cost_usd'])}")
        print(f"  energy MWh  {_r(r['energy_mwh'])}")
        _shares(r["cost_rests_on"])
