"""The planner page: serving answers for a model on a system, offline, from the Python model.

The page's data is :func:`trnkb.site.serving_grid.grid`, computed when the site is built
(nothing is modelled in the browser): pick a model, a system, the precision, the chips of
one replica and the prompt/output lengths, and read tokens/s per chip and per MW, cost per
million tokens, TTFT and TPOT with their ranges and the three inputs that move each most,
and the throughput-interactivity curve over batch sizes, with the largest batch that still
meets a tokens/s-per-user target. ``_static/planner.js`` draws it; the URL fragment holds
the choice, so a link reproduces it.
"""

from __future__ import annotations

import json
from typing import Any


def planner_page(data: dict[str, Any]) -> str:
    """MyST page: the planner's controls, the grid as JSON and its script."""
    blob = json.dumps(data, separators=(",", ":"), allow_nan=False)
    blob = blob.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    n = len(data["points"])
    controls = (
        '<div id="trnkb-planner" class="trnkb-explorer">'
        '<div class="ex-controls" role="group" aria-label="workload">'
        '<label>Model <select id="pl-model"></select></label> '
        '<label>System <select id="pl-system"></select></label> '
        '<label>Precision <select id="pl-precision"></select></label> '
        '<label>Chips per replica <select id="pl-chips"></select></label> '
        '<label>Prompt / output tokens <select id="pl-lengths"></select></label> '
        '<label>Target tokens/s per user <input id="pl-target" type="number" min="0" '
        'step="1" value="20" style="width:6rem"></label> '
        '<a id="pl-permalink" href="#">link to this answer</a></div>'
        '<p id="pl-summary" class="trnkb-caption" aria-live="polite"></p>'
        '<div class="trnkb-table-wrap"><table id="pl-table" class="trnkb-table"></table></div>'
        '<div id="pl-curve" class="ex-scatter"></div></div>')
    return ("# Planner\n\nServing a model on a system: tokens/s per chip and per megawatt, the "
            "cost per million tokens (TCO pricing), time to first token and time per output "
            "token, each with its range (low to high over the model's ranged inputs) and the "
            "three inputs that move it most, and the throughput-interactivity curve over "
            "batch sizes. Every number was computed by the Python workload model "
            "(`trnkb workload serve`, batch 64) when this site was built, "
            f"{n} combinations in all; the page only looks them up, offline. The link keeps "
            "the choice. Ranges that overlap do not rank two systems. The cost rests on a "
            "named assumption where no analyst owner cost per chip-hour is published: capex "
            "per chip (`capex_per_chip`, a placeholder with no public source) with the "
            "depreciation, cost of capital, power price and utilisation ranges of "
            "docs/cost.md.\n\n"
            + controls + "\n\n"
            + f'<script type="application/json" id="pl-data">{blob}</script>\n\n'
            '<script src="_static/planner.js"></script>\n')
