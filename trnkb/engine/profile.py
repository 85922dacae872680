"""A profile a person can read: per-engine timelines, HBM bandwidth over time, Chrome traces.

* :func:`lanes` — the result's records as bars (one per instruction, or per run of equal
  back-to-back instructions), one lane per core and engine / DMA queue, in microseconds.
* :func:`hbm_bandwidth` — bytes moved by DMA per time bin, as GB/s.
* :func:`chrome_trace` / :func:`write_chrome_trace` — the Trace Event Format JSON that
  Perfetto (ui.perfetto.dev) and chrome://tracing open: complete events (``ph: "X"``)
  with ``ts``/``dur`` in microseconds, one process per core and one thread per engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from trnkb.engine.result import ENGINES, Result

LANES = (*ENGINES[:4], "dma in", "dma out")  # DMA split by direction: loads and stores


def _lane_names(r: dict[str, Any]) -> NDArray[Any]:
    eng = np.asarray(ENGINES, dtype=object)[r["engine"]]
    out = np.asarray([o.endswith("->hbm") for o in r["op"]], bool)
    return np.where(eng == "dma", np.where(out, "dma out", "dma in"), eng)


def lanes(res: Result) -> pd.DataFrame:
    """Bars ``core, engine, lane, op, count, start_us, end_us`` (a run of ``count`` equal
    instructions is one bar from its first start to its last end). DMA transfers sit in
    two lanes, ``dma in`` (to SBUF) and ``dma out`` (to HBM); both share the core's DMA
    engines."""
    r = res.records
    start = r["start"] * 1e6
    end = (r["start"] + r["dur"] * r["count"]) * 1e6
    eng = _lane_names(r)
    core = r["core"].astype(int)
    multi = len(np.unique(core)) > 1
    lane = [f"core {c} {e}" if multi else e for c, e in zip(core, eng, strict=True)]
    return pd.DataFrame({"core": core, "engine": pd.Series(eng, dtype="str"),
                         "lane": pd.Series(lane, dtype="str"),
                         "op": pd.Series(list(r["op"]), dtype="str"),
                         "count": r["count"].astype(int), "start_us": start, "end_us": end})


def hbm_bandwidth(res: Result, bins: int = 200) -> pd.DataFrame:
    """HBM bandwidth over time: ``start_us, end_us, GB_per_s`` per bin (all cores).

    Each DMA transfer's bytes are spread evenly over its time on the link.
    """
    r = res.records
    dma = (r["engine"] == ENGINES.index("dma")) & (r["nbytes"] > 0)
    s, d, b = r["start"][dma], r["dur"][dma], r["nbytes"][dma]
    span = max(res.seconds.to("s").magnitude, 1e-12)
    edges = np.linspace(0.0, span, bins + 1)
    width = edges[1] - edges[0]
    out = np.zeros(bins)
    rate = b / np.maximum(d, 1e-15)
    # overlap of [s, s+d) with each bin, vectorised over bins in chunks of transfers
    for lo in range(0, len(s), 4096):
        ss, ee, rr = s[lo:lo + 4096, None], (s + d)[lo:lo + 4096, None], rate[lo:lo + 4096, None]
        ov = np.clip(np.minimum(ee, edges[None, 1:]) - np.maximum(ss, edges[None, :-1]), 0, None)
        out += (ov * rr).sum(axis=0)
    return pd.DataFrame({"start_us": edges[:-1] * 1e6, "end_us": edges[1:] * 1e6,
                         "GB_per_s": out / width / 1e9})


def chrome_trace(res: Result) -> dict[str, Any]:
    """The run as a Trace Event Format document (``{"traceEvents": [...]}``).

    One process per core (``pid``), one thread per lane (``tid``: 0 tensor, 1 vector,
    2 scalar, 3 gpsimd, 4 DMA to SBUF, 5 DMA to HBM);
    every instruction, or run of equal back-to-back instructions (``args.count``), is a
    complete event ``ph: "X"`` with ``ts`` and ``dur`` in microseconds.
    """
    r = res.records
    events: list[dict[str, Any]] = []
    for c in sorted(set(r["core"].astype(int).tolist())):
        events.append({"ph": "M", "name": "process_name", "pid": c, "tid": 0,
                       "args": {"name": f"NeuronCore {c} ({res.chip})"}})
        for t, e in enumerate(LANES):
            events.append({"ph": "M", "name": "thread_name", "pid": c, "tid": t,
                           "args": {"name": e}})
    start = r["start"] * 1e6
    dur = r["dur"] * r["count"] * 1e6
    tids = [LANES.index(x) for x in _lane_names(r)]
    for i in range(len(start)):
        ev = {"ph": "X", "name": r["op"][i], "pid": int(r["core"][i]), "tid": tids[i],
              "ts": float(start[i]), "dur": float(dur[i]),
              "args": {"count": int(r["count"][i])}}
        if r["nbytes"][i]:
            ev["args"]["bytes"] = float(r["nbytes"][i])
        events.append(ev)
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"kernel": res.kernel, "chip": res.chip, "dtype": res.dtype,
                          "makespan_us": res.seconds.to("us").magnitude,
                          "bound_by": res.bound_by}}


def write_chrome_trace(res: Result, path: str | Path) -> Path:
    """Write :func:`chrome_trace` to ``path`` (JSON) and return the path."""
    p = Path(path)
    p.write_text(json.dumps(chrome_trace(res)))
    return p
