"""``trnkb check``: derived versus reported values, differences beyond 2% flagged."""

from __future__ import annotations

import json

import typer


def check_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Compare every KB value that can also be computed with its derived value."""
    import trnkb
    from trnkb.check import THRESHOLD, check

    df = check(trnkb.load())
    if as_json:
        print(json.dumps({"threshold": THRESHOLD, "pairs": df.to_dict(orient="records")},
                         indent=2, default=str))
        return
    if df.empty:
        print("no derived-vs-reported pairs (the KB lacks the inputs)")
        return
    for r in df.itertuples():
        mark = "!!" if r.flagged else "ok"
        print(f"{mark} {r.id}.{r.field}: reported {r.reported:.6g} {r.unit} "
              f"[{r.reported_source}] vs derived {r.derived:.6g} {r.unit} "
              f"({r.check}) diff {r.relative_difference:.1%}" + (f" [{r.note}]" if r.note else ""))
    n = int(df["flagged"].sum())
    print(f"{len(df)} pair(s); {n} differ by more than {THRESHOLD:.0%}")


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)
