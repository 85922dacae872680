"""``trnkb prices``: every price in the knowledge base with its source and date.

    trnkb prices
    trnkb prices --chip mi300x --json

Each row: instance price, chips per instance, the derived price per chip-hour, the offer
(on-demand, capacity-block, spot, commitment, index, owner-tco), the view that uses it
(``cloud`` or ``owner``, see ``trnkb workload serve --pricing``), source, date and kind.
"""

from __future__ import annotations

from typing import Annotated

import typer

from trnkb.cli.kbcmds import JsonOpt, SpecsOpt, print_json


def prices_command(chip: Annotated[str | None, typer.Option(
                       "--chip", help="Only the prices of this chip (trnkb list chips).")] = None,
                   specs: SpecsOpt = None, as_json: JsonOpt = False) -> None:
    """Every accelerator price (cloud and owner cost per chip-hour) with source and date."""
    import trnkb
    from trnkb.spec.specfile import suggest
    from trnkb.workload.prices import price_rows

    kb = trnkb.load(specs)
    ids = [str(c) for c in kb.table("chips")["id"]]
    if chip is not None and chip not in ids:  # one line, the echo capped, a near miss named
        raise ValueError(f"--chip: no chip {chip[:40]!r}{suggest(chip, ids)}; "
                         "see `trnkb list chips`")
    rows = price_rows(kb, chip)
    if as_json:
        print_json(rows)
        return
    print(f"{'id':<38} {'chip':<9} {'offer':<14} {'view':<5} {'$/h':>8} {'chips':>5} "
          f"{'$/chip-h':>8}  source (date, kind)")
    for r in rows:
        q = {"approximately": "~", "at-least": ">="}.get(r["qualifier"], "")
        print(f"{r['id']:<38} {r['chip']:<9} {r['offer']:<14} {r['view']:<5} "
              f"{q + format(r['price_usd_per_hour'], '.2f'):>8} {r['chips_per_instance']:>5} "
              f"{r['price_per_chip_usd_per_hour']:>8.3f}  {r['source']} ({r['date']}, {r['kind']})")


def register(app: typer.Typer) -> None:
    app.command("prices")(prices_command)
