"""HBM: the stack build against reported capacity and bandwidth; memory per logical
device (LNC)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from trnkb.calc import memory
from trnkb.compare.tables import sources_of
from trnkb.kb import KnowledgeBase

MEMORY_COLUMNS = ["id", "chip", "generation", "stacks", "stack_height", "die_density_Gbit",
                  "pin_rate_Gbps", "bus_width_bit", "capacity_GB", "capacity_derived_GB",
                  "bandwidth_TBps", "bandwidth_derived_TBps", "bandwidth_ratio", "source"]


def memory_view(kb: KnowledgeBase, chips: Sequence[str] | None = None) -> pd.DataFrame:
    """HBM per chip: the stack build, reported capacity and bandwidth, and what the build
    implies (:func:`trnkb.calc.memory.hbm_capacity`, :func:`~trnkb.calc.memory.hbm_bandwidth`).

    Returns
    -------
    DataFrame
        :data:`MEMORY_COLUMNS`: capacities in GB, bandwidths in TB/s, die density in Gbit,
        pin rate in Gbit/s, bus width in bit per stack; ``bandwidth_ratio`` is derived over
        reported; ``source`` joins the sources of the row's values. Derived columns are
        empty unless every input is sourced.
    """
    hbm = kb.table("hbm")
    if chips is not None:
        hbm = hbm.set_index("chip").loc[[c for c in chips if c in set(hbm["chip"])]].reset_index()

    def mag(row: str, field: str, unit: str) -> float | None:
        v = kb.get(row, field)
        return float(v.to(unit).magnitude) if v is not None else None

    out = []
    for row, chip in zip(hbm["id"], hbm["chip"], strict=True):
        stacks, height = kb.get(row, "stacks"), kb.get(row, "stack_height")
        density = kb.get(row, "die_density")
        width, pin = kb.get(row, "bus_width_per_stack"), kb.get(row, "pin_rate")
        cap = (memory.hbm_capacity(stacks, height, density).value
               if None not in (stacks, height, density) else None)
        bw = (memory.hbm_bandwidth(stacks, width, pin).value
              if None not in (stacks, width, pin) else None)
        reported_bw = mag(row, "bandwidth", "TB/s")
        out.append({
            "id": row, "chip": chip, "generation": kb.get(row, "generation"),
            "stacks": int(stacks.magnitude) if stacks is not None else None,
            "stack_height": int(height.magnitude) if height is not None else None,
            "die_density_Gbit": mag(row, "die_density", "Gbit"),
            "pin_rate_Gbps": mag(row, "pin_rate", "Gbit/s"),
            "bus_width_bit": mag(row, "bus_width_per_stack", "bit"),
            "capacity_GB": mag(row, "capacity", "GB"),
            "capacity_derived_GB": float(cap.to("GB").magnitude) if cap is not None else None,
            "bandwidth_TBps": reported_bw,
            "bandwidth_derived_TBps": float(bw.to("TB/s").magnitude) if bw is not None else None,
            "bandwidth_ratio": (float(bw.to("TB/s").magnitude) / reported_bw
                                if bw is not None and reported_bw else None),
            "source": " + ".join(sources_of(kb, [row])),
        })
    df = pd.DataFrame(out, columns=MEMORY_COLUMNS)
    for c in MEMORY_COLUMNS[3:5]:
        df[c] = df[c].astype("Int64")
    for c in MEMORY_COLUMNS[5:-1]:
        df[c] = df[c].astype("Float64")
    return df


def lnc_memory(kb: KnowledgeBase, chip: str) -> pd.DataFrame:
    """HBM per logical device for each LNC setting named in the chip's ``logical_core_modes``
    (``LNC=2`` ...), by :func:`trnkb.calc.memory.lnc_memory`.

    Returns ``chip, lnc, logical_devices, memory_GB, source``; empty when the chip has no
    LNC modes, cores or HBM capacity in the KB.
    """
    cols = ["chip", "lnc", "logical_devices", "memory_GB", "source"]
    modes, cores, cap = (kb.get(chip, f) for f in ("logical_core_modes", "cores", "hbm_capacity"))
    if None in (modes, cores, cap):
        return pd.DataFrame(columns=cols)
    src = " + ".join(sources_of(kb, [chip], ["logical_core_modes", "cores", "hbm_capacity"]))
    out = []
    for lnc in sorted({int(x) for x in re.findall(r"LNC\s*=\s*(\d+)", str(modes))}):
        r = memory.lnc_memory(cap, cores, lnc)
        out.append({"chip": chip, "lnc": lnc,
                    "logical_devices": int(r.output("logical_devices").magnitude),
                    "memory_GB": float(r.value.to("GB").magnitude), "source": src})
    return pd.DataFrame(out, columns=cols)
