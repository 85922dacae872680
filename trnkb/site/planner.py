"""The planner page: serving and training answers for a model on a system, offline, from the
Python model.

The page's data is :func:`trnkb.site.serving_grid.grid`, computed when the site is built
(nothing is modelled in the browser): pick a model, a system, the precision, the
prompt/output lengths (or the benchmark they come from) and the pricing view, then read

- at a tokens/s-per-user target: the simulator's operating point (tokens/s per chip, per
  user and per MW, $/Mtok, TTFT, TPOT), each with its range and the three inputs that move it
  most, and the throughput-interactivity frontier drawn with its band;
- under a $/Mtok ceiling: the most interactive point (central, optimistic, pessimistic);
- for a power budget: the racks, chips, fleet tokens/s and $/Mtok it buys;
- for a training run of N tokens in D days: chips, racks, days, cost, energy.

``_static/planner.js`` only selects among those results (see the rules in
:mod:`trnkb.site.serving_grid`); the URL fragment holds the choice, so a link reproduces it.
"""

from __future__ import annotations

import json
from typing import Any


def _sel(name: str, label: str) -> str:
    return f'<label>{label} <select id="pl-{name}"></select></label> '


def _num(name: str, label: str, value: str, width: str = "6rem") -> str:
    return (f'<label>{label} <input id="pl-{name}" type="number" min="0" step="any" '
            f'value="{value}" style="width:{width}"></label> ')


def _section(ident: str, title: str, controls: str, caption: str) -> str:
    return (f'<section class="pl-section" id="pl-{ident}-section"><h2>{title}</h2>'
            f'<div class="ex-controls" role="group" aria-label="{title}">{controls}</div>'
            f'<p id="pl-{ident}-summary" class="trnkb-caption" aria-live="polite"></p>'
            f'<div class="trnkb-table-wrap"><table id="pl-{ident}-table" class="trnkb-table">'
            f'</table></div><p class="trnkb-caption">{caption}</p></section>')


def planner_page(data: dict[str, Any]) -> str:
    """MyST page: the planner's controls, the grid as JSON and its script."""
    blob = json.dumps(data, separators=(",", ":"), allow_nan=False)
    blob = blob.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    n_serve = sum(len(v.get(p, {}).get("points", [])) for v in data["serve"].values()
                  for p in data["axes"]["pricing"])
    n_train = len(data["train"])
    workload = ('<div class="ex-controls" role="group" aria-label="workload">'
                + _sel("model", "Model") + _sel("system", "System")
                + _sel("precision", "Precision") + _sel("lengths", "Prompt / output tokens")
                + _sel("pricing", "Pricing")
                + '<a id="pl-permalink" href="#">link to this answer</a></div>')
    html = (
        '<div id="trnkb-planner" class="trnkb-explorer">' + workload
        + _section("serve", "Serving at a tokens/s-per-user target",
                   _num("target", "Target tokens/s per user", "20"),
                   "The operating point: among the simulated loads (1, 2, 4 ... 1024 "
                   "concurrent clients on one replica), the one with the most tokens/s per chip "
                   "whose central tokens/s per user meets the target (the rule of "
                   "<code>trnkb workload plan-fleet</code>).")
        + '<div id="pl-curve" class="ex-scatter"></div>'
        + _section("cost", "Under a cost ceiling",
                   _num("ceiling", "Most USD per million output tokens", "2"),
                   "The highest tokens/s per user whose cost per million tokens is at or under "
                   "the ceiling: at the central inputs, when the cost's low end must meet it "
                   "(optimistic) and when its high end must (pessimistic); as "
                   "<code>trnkb workload cost-target</code>.")
        + _section("power", "For a power budget",
                   _num("power", "Facility power, MW", "50"),
                   "At the operating point above: chips = facility power / (chip power x PUE), "
                   "racks = whole racks of those chips, fleet tokens/s = MW x tokens/s per MW; "
                   "as <code>trnkb workload plan-fleet</code>.")
        + _section("train", "Training a model",
                   _sel("tokens", "Tokens") + _sel("days", "Target days"),
                   "Chips for the run to finish in the target days at one rack's measured "
                   "rate, rounded up to whole racks, then the run at that size (its days can "
                   "exceed the target: scaling costs); bf16 (fp8 where the chip has no bf16 "
                   "peak), sequences of 8192 tokens, 16 Mi tokens per step; as "
                   "<code>trnkb workload train-plan</code>.")
        + "</div>")
    return ("# Planner\n\nWhat a model costs to serve and to train on each headline system: "
            "tokens/s per chip, per user and per megawatt, cost per million tokens (owner or "
            "cloud pricing), time to first token and per output token at a target "
            "interactivity; the most interactive point under a cost ceiling; the racks, "
            "tokens/s and cost a power budget buys; and the chips, days, cost and energy of "
            "a training run. Each figure comes with its range (low to high over the model's "
            "ranged inputs) and the three inputs that move it most. Every number was computed "
            "by the Python workload model (`trnkb.workload`: the serving simulator and "
            "`train_plan`) when this site was built, "
            f"{n_serve:,} serving points and {n_train:,} training plans; the page only looks "
            "them up and selects, offline. The link keeps the choice. Ranges that overlap "
            "do not rank two systems; [cost.md](cost.md) explains the pricing views. The "
            "owner cost rests on a named assumption where no analyst owner cost per chip-hour "
            "is published: capex per chip (`capex_per_chip`, a placeholder with no public "
            "source) with the depreciation, cost of capital, power price and utilisation "
            "ranges of docs/cost.md.\n\n"
            + html + "\n\n"
            + f'<script type="application/json" id="pl-data">{blob}</script>\n\n'
            '<script src="_static/planner.js"></script>\n')
