"""Reports on fabrics: worked paths, the JSON summary, the chart-ready table, claim metrics.

Plain functions of built fabrics (:class:`~trnkb.topology.fabric.Fabric`); the entry points
in :mod:`trnkb.topology.fabric` wrap them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trnkb.topology.spec import chip_name
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:  # pandas is imported where a table is made
    from collections.abc import Iterable

    import pandas as pd

    from trnkb.topology.fabric import Fabric

# The worked paths of the source, as (label, from chip, to chip, locator). The hop counts
# the source gives for them are claims (see tests/test_topology.py and the claims
# registry); only the chip pairs live here. Chips are (rack, node, position).
_SEED = "004_406711927e432c17.txt"
_Chip = tuple[str, int, str]
_NL32 = "Trainium3 NL32x2 Switched with Gen1 Switch Trays"
_NL72 = "Trainium3 NL72x2 Switched on Gen1 Switch Trays"
SOURCE_PATHS: dict[str, tuple[tuple[str, _Chip, _Chip, str], ...]] = {
    "trn3-nl32x2-switched": (
        ("Path A", ("A", 1, "A"), ("A", 16, "A"), _NL32),
        ("Path B", ("A", 1, "A"), ("A", 2, "B"), _NL32),
        ("Path C", ("A", 1, "A"), ("B", 2, "B"), _NL32),
    ),
    "trn3-nl72x2-switched": (
        ("Path A", ("A", 1, "A"), ("A", 2, "A"), _NL72),
        ("Path B", ("A", 1, "A"), ("A", 2, "C"), _NL72),
        ("Path C", ("A", 1, "A"), ("B", 2, "C"), _NL72),
    ),
}


def path_examples(f: Fabric) -> list[dict[str, Any]]:
    """The source's worked paths for this domain, then the worst pair in a rack and in the
    domain."""
    out = []
    for label, pa, pb, locator in SOURCE_PATHS.get(f.spec.domain, ()):
        ca, cb = chip_name(*pa), chip_name(*pb)
        out.append({**_example(f, label, ca, cb), "source": f"{_SEED}: {locator}"})
    a, b, _ = f.worst_pair(in_rack=True)
    out.append(_example(f, "worst case in a rack", a, b))
    if f.spec.racks > 1:
        a, b, _ = f.worst_pair()
        out.append(_example(f, "worst case in the domain", a, b))
    return out


def _example(f: Fabric, label: str, a: str, b: str) -> dict[str, Any]:
    return {"label": label, "from": a, "to": b, "path": f.path(a, b), "hops": f.hops(a, b),
            "source": "computed"}


def fabric_summary(f: Fabric, message_size: Quantity | None = None) -> dict[str, Any]:
    """Everything measured on one fabric, JSON-ready (quantities as ``{"value", "unit"}``)."""
    m = message_size if message_size is not None else Q_(1, "MB")
    t, bound = f.all_to_all_time(m)
    usage = f.switch_usage()
    return {
        "fabric": f.spec.id,
        "domain": f.spec.domain,
        "switch_generation": f.spec.generation,
        "wiring": f.spec.wiring,
        "chips": len(f.chips),
        "racks": f.spec.racks,
        "planes": f.spec.planes if f.spec.wiring != "torus" else None,
        "switches_per_rack": f.switches_per_rack,
        "switch_tray_switches_per_rack": f.switch_tray_switches_per_rack,
        "tray_switches_per_rack": f.tray_switches_per_rack,
        "switches_per_domain": f.switches_per_domain,
        "switch_usage": usage.astype(object).where(usage.notna(), None).to_dict("records"),
        "chip_lanes": {m_: {"used": u, "budget": b}
                       for m_, (u, b) in f.chip_lane_usage().items()},
        "hop_definition":
            "forwarding devices (switches or chips) between the two chips = links - 1",
        "max_hops_in_rack": f.max_hops(in_rack=True),
        "max_hops_in_domain": f.max_hops(),
        "mean_hops": round(f.mean_hops(), 4),
        "hop_histogram": {str(k): v for k, v in f.hop_histogram().items()},
        "injection_bandwidth": _q(f.injection_bandwidth, "GB/s"),
        "in_rack_bandwidth_per_chip": _q(f.in_rack_bandwidth_per_chip, "GB/s"),
        "backplane_bandwidth_per_chip": _q(f.backplane_bandwidth_per_chip, "GB/s"),
        "cross_rack_bandwidth_per_chip": _q(f.cross_rack_bandwidth_per_chip, "GB/s"),
        "bisection_bandwidth": _q(f.bisection_bandwidth, "TB/s"),
        "bisection_cut": f.bisection_cut,
        "all_to_all": {"message_size": _q(m, "MB"), "time": _q(t, "us"), "bound": bound},
        "path_examples": path_examples(f),
    }


def _q(q: Quantity | None, unit: str) -> dict[str, Any] | None:
    if q is None:
        return None
    return {"value": round(float(q.to(unit).magnitude), 6), "unit": unit}


def metric(f: Fabric, name: str) -> Any:
    """One measured figure of ``f`` by name (see :func:`trnkb.topology.topology_metric`)."""
    if name.startswith("hops:"):
        a, b = (chip_name(r, int(n), p)
                for r, n, p in (x.split("/") for x in name[5:].split(":")))
        return f.hops(a, b)
    if name == "max_hops_in_rack":
        return f.max_hops(in_rack=True)
    if name == "max_hops_in_domain":
        return f.max_hops()
    if name in ("cross_to_backplane_ratio", "cross_to_in_rack_ratio"):
        num = f.cross_rack_bandwidth_per_chip
        den = (f.backplane_bandwidth_per_chip if name == "cross_to_backplane_ratio"
               else f.in_rack_bandwidth_per_chip)
        if num is None or den is None:
            missing = name.removeprefix("cross_to_")
            raise KeyError(f"{f.spec.id} has no {missing} bandwidth for {name}")
        return (num / den).to("").magnitude
    if not hasattr(f, name):
        raise KeyError(f"no topology metric {name!r}")
    v = getattr(f, name)
    return v() if callable(v) else v


def summary_rows(fabrics: Iterable[Fabric],
                 message_size: Quantity | None = None) -> pd.DataFrame:
    """One row per fabric, plain magnitudes with the unit in the column name (chart-ready)."""
    rows: list[dict[str, Any]] = []
    m = message_size if message_size is not None else Q_(1, "MB")

    def mag(q: Quantity | None, u: str) -> float | None:
        return None if q is None else float(q.to(u).magnitude)

    for f in fabrics:
        t, bound = f.all_to_all_time(m)
        rows.append({
            "fabric": f.spec.id, "domain": f.spec.domain, "generation": f.spec.generation or "",
            "chips": len(f.chips), "racks": f.spec.racks,
            "planes": f.spec.planes if f.spec.wiring != "torus" else None,
            "switch_tray_switches_per_rack": f.switch_tray_switches_per_rack,
            "tray_switches_per_rack": f.tray_switches_per_rack,
            "switches_per_domain": f.switches_per_domain,
            "max_hops_in_rack": f.max_hops(in_rack=True), "max_hops_in_domain": f.max_hops(),
            "mean_hops": f.mean_hops(),
            "injection_GBps": mag(f.injection_bandwidth, "GB/s"),
            "cross_rack_GBps_per_chip": mag(f.cross_rack_bandwidth_per_chip, "GB/s"),
            "in_rack_GBps_per_chip": mag(f.in_rack_bandwidth_per_chip, "GB/s"),
            "bisection_TBps": mag(f.bisection_bandwidth, "TB/s"),
            "all_to_all_us": mag(t, "us"), "all_to_all_bound": bound,
        })
    import pandas as pd

    df = pd.DataFrame(rows)
    df.attrs["message_size_MB"] = float(m.to("MB").magnitude)
    return df
