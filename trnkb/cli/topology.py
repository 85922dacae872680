"""Scale-up fabric command: ``trnkb topology [DOMAIN] [--switch-gen G] [--json]``."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table as RichTable

import trnkb
from trnkb import topology
from trnkb.cli.kbcmds import JsonOpt, SpecsOpt, print_json
from trnkb.cli.validate import choice, positive_quantity
from trnkb.units.qtypes import Quantity

console = Console()


def _size(text: str) -> Quantity:
    """The ``--message-size`` option read by the one parser (:func:`trnkb.units.parse`)."""
    q = positive_quantity(text, "--message-size", "information", "1MB, 64KiB")
    return q


def _fmt(q: dict[str, Any] | None) -> str:
    return "-" if q is None else f"{q['value']:g} {q['unit']}"


def _print_fabric(s: dict[str, Any]) -> None:
    gen = s["switch_generation"]
    title = s["fabric"] + (f" (switch generation {gen})" if gen else "")
    t = RichTable(title=title, show_header=False)
    t.add_column("figure")
    t.add_column("value")
    for key in ("chips", "racks", "planes", "switches_per_rack", "switch_tray_switches_per_rack",
                "tray_switches_per_rack", "switches_per_domain", "max_hops_in_rack",
                "max_hops_in_domain", "mean_hops"):
        t.add_row(key, "-" if s[key] is None else str(s[key]))
    t.add_row("hop_histogram", ", ".join(f"{h}: {n}" for h, n in s["hop_histogram"].items()))
    for u in s["switch_usage"]:
        t.add_row(f"{u['kind']} {u['switch']} lanes",
                  f"{u['lanes_used']} of {u['lanes_available']}")
        t.add_row(f"{u['kind']} {u['switch']} ports",
                  f"{u['ports_used']} of {u['ports_available']}")
    for m, lanes in s["chip_lanes"].items():
        t.add_row(f"chip {m} lanes", f"{lanes['used']} of {lanes['budget']}")
    for key in ("injection_bandwidth", "in_rack_bandwidth_per_chip",
                "backplane_bandwidth_per_chip", "cross_rack_bandwidth_per_chip",
                "bisection_bandwidth"):
        t.add_row(key + " (per direction)", _fmt(s[key]))
    a2a = s["all_to_all"]
    t.add_row(f"all-to-all, {_fmt(a2a['message_size'])} per pair",
              f"{_fmt(a2a['time'])} ({a2a['bound']} bound)")
    console.print(t)
    p = RichTable(title=f"paths (hop = {s['hop_definition']})")
    for col in ("example", "from", "to", "hops", "path"):
        p.add_column(col)
    for e in s["path_examples"]:
        p.add_row(e["label"], e["from"], e["to"], str(e["hops"]), " > ".join(e["path"]))
    console.print(p)


def register(app: typer.Typer) -> None:
    @app.command("topology")
    def topology_cmd(
        domain: Annotated[str | None, typer.Argument(
            help="Scale-up domain (racks id), e.g. trn3-nl72x2-switched. "
                 "Omit for the summary of all.")] = None,
        switch_gen: Annotated[str | None, typer.Option(
            "--switch-gen",
            help="gen1, pex90144-x8, pex90144-x4, gen2 or gen3 (Trainium3 switched racks).",
        )] = None,
        message_size: Annotated[str, typer.Option(
            "--message-size",
            help="Bytes each chip sends to each other chip in the all-to-all estimate.",
        )] = "1MB",
        specs: SpecsOpt = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Scale-up fabric model: switch counts, hops, bandwidths and worked paths."""
        kb = trnkb.load(specs) if specs is not None else None
        size = _size(message_size)
        if domain is None:
            df = topology.summary_table(kb, size)
            if json_out:
                print_json(df.astype(object).where(df.notna(), None).to_dict("records"))
                return
            t = RichTable(title=f"scale-up fabrics (all-to-all of {message_size} per pair)")
            for c in df.columns:
                t.add_column(c)
            for row in df.itertuples(index=False):
                t.add_row(*("-" if v is None or v != v
                            else f"{v:.4g}" if isinstance(v, float) else str(v)
                            for v in row))
            console.print(t)
            return
        fabrics = (kb or trnkb.load()).table("fabrics")
        choice(domain, sorted(set(fabrics["domain"])), "domain")
        if switch_gen is not None and "generation" in fabrics:
            choice(switch_gen, sorted({g for g in fabrics["generation"] if isinstance(g, str)}),
                   "--switch-gen")
        s = topology.fabric(domain, switch_gen, kb).summary(size)
        if json_out:
            print_json(s)
        else:
            _print_fabric(s)


