"""``trnkb check``: derived versus reported values; differences beyond 2% listed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, cast

import typer


def check_command(as_json: bool = typer.Option(False, "--json", help="Print JSON."),
                  show_all: bool = typer.Option(False, "--all",
                                                help="List the agreeing pairs too.")) -> None:
    """Compare every derived value with the reported values of the same field."""
    import trnkb
    from trnkb.audit.check import THRESHOLD, check, coverage

    kb = trnkb.load()
    df, cov = check(kb), coverage(kb)
    if as_json:
        print(json.dumps({"threshold": THRESHOLD, "coverage": cov,
                          "pairs": df.to_dict(orient="records")}, indent=2, default=str))
        return
    print(f"coverage: {cov['checked']} of {cov['derived']} derived values checked "
          f"({cov['share']:.0%}); {cov['with_reported']} have a reported value of the same "
          f"field, {cov['without_reported']} have none, {cov['not_comparable']} pair(s) skipped "
          "as not comparable (different density or direction: dense, sparse, per direction, "
          "bidirectional or unstated)")
    n = int(df["flagged"].sum())
    print(f"{len(df)} derived-vs-reported pair(s); {n} differ by more than {THRESHOLD:.0%}"
          + (":" if n else "."))
    rows = df if show_all else df[df["flagged"]]
    for r in cast(Iterable[Any], rows.itertuples()):  # rows of the check table
        unit = f" {r.unit}" if r.unit else ""
        print(f"  {r.id}.{r.field}: reported {r.reported:,.6g}{unit} [{r.reported_source}], "
              f"derived {r.derived:,.6g}{unit} ({r.check}), "
              f"difference {r.relative_difference:.1%}" + (f"; {r.note}" if r.note else ""))


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)
