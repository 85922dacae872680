"""What a kernel run produced: makespan, busy time, the critical path, the records.

The critical path is read back from the schedule: start from the instruction that
finishes last and walk to whatever its start waited for (the previous instruction on
its engine, or the instruction whose result it read, or the DMA it queued behind),
until time 0. Time on the path is split by engine (``critical``); the fixed latencies
on it (DMA completion, TensorE fill and drain) are ``stalls``. ``bound_by`` is the
engine with the most time on the path, which can differ from the busiest engine. In a
chip run, the time a transfer waited for the chip's shared HBM link (other cores'
transfers) is on the path as ``hbm``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    import pandas as pd

    from trnkb.engine.model import NeuronCore

ENGINES = ("tensor", "vector", "scalar", "gpsimd", "dma")
STALL_KIND = {"dma": "dma latency", "tensor": "tensor fill/drain"}


@dataclass(eq=False)
class Result:
    """A kernel run. Quantities carry units; ``to_dict`` converts at the edge.

    Attributes
    ----------
    seconds : makespan (s), including the last DMA's fixed latency.
    busy : per engine, the time it was busy (s); ``dma`` is the time the core's DMA
        engines were moving data (summed over cores in a chip run).
    cycles : per compute engine, busy time x its clock (per core: averaged in a chip run).
    flops : useful FLOPs of the operation (2mnk for GEMM).
    peak : derived peak of the cores used, from :func:`trnkb.calc.flops.peak_flops`.
    bytes : moved per level: ``hbm`` (DMA to/from HBM), ``sbuf`` and ``psum``.
    records : dict of arrays, one row per instruction or run of equal instructions
        (``engine`` index into ENGINES, ``op``, ``start``, ``dur`` each, ``count``,
        ``lat`` (latency after the end), ``nbytes`` (DMA), ``hbm_wait`` (DMA: the delay
        the chip's shared HBM link added), ``core``).
    """

    kernel: str
    chip: str
    dtype: str
    seconds: Quantity
    busy: dict[str, Quantity]
    cycles: dict[str, int]
    flops: Quantity
    peak: Quantity
    bytes: dict[str, Quantity]
    records: dict[str, Any]
    output: NDArray[Any] | None = None
    error: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    chip_figures: dict[str, Any] = field(default_factory=dict)
    # fixed costs outside the simulated schedule (launch, start/end, per output block), s
    fixed: dict[str, float] = field(default_factory=dict)

    def add_fixed(self, name: str, seconds: float) -> None:
        """Charge a fixed cost (s) the schedule does not simulate: added to ``seconds``
        and reported with the stalls, so the critical path and stalls still sum to it."""
        if seconds:
            self.fixed[name] = self.fixed.get(name, 0.0) + seconds
            self.seconds = self.seconds + Q_(seconds, "s")

    @classmethod
    def from_records(cls, kernel: str, core: NeuronCore, dtype: str, flops: float,
                     busy: dict[str, float], bytes: dict[str, float], records: dict[str, Any],
                     cores: int = 1, **kw: Any) -> Result:
        start = records["start"]
        end = start + records["dur"] * records["count"]
        done = end + records["lat"]
        makespan = float(done.max()) if len(done) else 0.0
        clocks = {e: core.clock(e).to("Hz").magnitude for e in ENGINES[:4]}
        return cls(kernel=kernel, chip=core.chip, dtype=dtype, seconds=Q_(makespan, "s"),
                   busy={e: Q_(busy[e], "s") for e in ENGINES},
                   cycles={e: round(busy[e] * clocks[e] / cores) for e in ENGINES[:4]},
                   flops=Q_(flops, "FLOP"), peak=core.peak_flops(dtype, cores),
                   bytes={k: Q_(v, "B") for k, v in bytes.items()}, records=records, **kw)

    # ---- figures ----------------------------------------------------------------
    @property
    def achieved(self) -> Quantity:
        """Achieved FLOP/s: flops / makespan."""
        q: Quantity = (self.flops / self.seconds).to("TFLOPS")
        return q

    @property
    def utilization(self) -> float:
        """Achieved over the derived peak of the cores used."""
        return float((self.achieved / self.peak).to("").magnitude)

    @property
    def busiest(self) -> str:
        """The engine with the most busy time (not necessarily what bounds the run)."""
        return max(self.busy, key=lambda e: self.busy[e].magnitude)

    @cached_property
    def _path(self) -> tuple[dict[str, float], dict[str, float]]:
        return critical_path(self.records)

    @property
    def critical(self) -> dict[str, float]:
        """Seconds of the critical path spent on each engine; in a chip run, ``hbm`` is the
        time a transfer on the path waited for other cores' use of the shared HBM link."""
        return self._path[0]

    @property
    def stalls(self) -> dict[str, float]:
        """Seconds of the critical path spent in fixed latencies (DMA, TensorE pipeline)
        and in the fixed costs outside the schedule (:attr:`fixed`)."""
        return {**self._path[1], **self.fixed}

    @property
    def bound_by(self) -> str:
        """The engine the makespan waits on most: the largest share of the critical path."""
        crit = self.critical
        return max(crit, key=lambda e: crit[e]) if crit else self.busiest

    @property
    def timeline(self) -> pd.DataFrame:
        """One row per instruction: core, engine, op, start, end (s); runs expanded."""
        import pandas as pd  # here, not at import: a run that only prints costs needs none

        r = self.records
        n = r["count"]
        idx = np.repeat(np.arange(len(n)), n)
        first = np.repeat(np.cumsum(n) - n, n)
        k = np.arange(len(idx)) - first
        start = r["start"][idx] + k * r["dur"][idx]
        ops = np.asarray(r["op"], dtype=object)
        return pd.DataFrame({
            "core": r["core"][idx].astype(int),
            "engine": pd.Series(np.asarray(ENGINES, dtype=object)[r["engine"][idx]], dtype="str"),
            "op": pd.Series(ops[idx] if len(idx) else [], dtype="str"),
            "start": start, "end": start + r["dur"][idx],
            "nbytes": np.where(r["count"][idx] == 1, r["nbytes"][idx], 0.0)})

    def to_dict(self) -> dict[str, Any]:
        """Plain numbers in SI units (s, FLOP, FLOP/s, bytes) for JSON."""
        out = {
            "kernel": self.kernel, "chip": self.chip, "dtype": self.dtype, **self.params,
            "seconds": self.seconds.to("s").magnitude,
            "cycles": {k: int(v) for k, v in self.cycles.items()},
            "busy_seconds": {k: v.to("s").magnitude for k, v in self.busy.items()},
            "busiest_engine": self.busiest,
            "bound_by": self.bound_by,
            "critical_path_seconds": dict(self.critical),
            "stall_seconds": dict(self.stalls),
            "flops": self.flops.to("FLOP").magnitude,
            "achieved_flops_per_s": self.achieved.to("FLOPS").magnitude,
            "peak_flops_per_s": self.peak.to("FLOPS").magnitude,
            "utilization": self.utilization,
            "bytes": {k: v.to("B").magnitude for k, v in self.bytes.items()},
            "notes": list(self.notes),
        }
        if self.chip_figures:
            out["chip_figures"] = dict(self.chip_figures)
        if self.error is not None:
            out["error"] = dict(self.error)
        return out


def critical_path(r: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """(seconds per engine on the critical path, seconds of latency stalls on it)."""
    n = len(r["start"])
    if n == 0:
        return {}, {}
    start, dur, count, lat = r["start"], r["dur"], r["count"], r["lat"]
    end = start + dur * count
    done = end + lat
    eng, core = r["engine"].astype(np.int64), r["core"].astype(np.int64)
    lane = core * len(ENGINES) + eng
    order = np.lexsort((start, lane))
    ls, st, en = lane[order], start[order], end[order]
    tol = 1e-9 * max(1e-6, float(done.max()))
    contig = np.zeros(n, bool)
    contig[1:] = (ls[1:] == ls[:-1]) & (np.abs(st[1:] - en[:-1]) <= tol)
    head_pos = np.maximum.accumulate(np.where(~contig, np.arange(n), 0))
    head = np.empty(n, np.int64)
    head[order] = order[head_pos]
    dorder = np.argsort(done, kind="stable")
    dsorted = done[dorder]
    eorder = np.argsort(end, kind="stable")
    esorted = end[eorder]
    runs = np.flatnonzero(count > 1)
    hbm_wait = r["hbm_wait"] if "hbm_wait" in r else np.zeros(n)

    def find(sorted_: NDArray[Any], order_: NDArray[Any], s: float, exclude_lane: int) -> int:
        k = np.searchsorted(sorted_, s - tol)
        best = -1
        while k < n and sorted_[k] <= s + tol:
            j = order_[k]
            if lane[j] != exclude_lane or best < 0:
                best = j
            k += 1
        return best

    crit: defaultdict[str, float] = defaultdict(float)
    stalls: defaultdict[str, float] = defaultdict(float)
    i = int(np.argmax(done))
    name = ENGINES[eng[i]]
    if lat[i] > 0:
        stalls[STALL_KIND.get(name, name)] += float(lat[i])
    seen = 0
    while seen < 10 * n:
        seen += 1
        h = int(head[i])
        crit[ENGINES[eng[i]]] += float(end[i] - start[h])
        s = float(start[h])
        if hbm_wait[h] > 0:  # queued behind other cores on the shared HBM link
            crit["hbm"] += float(hbm_wait[h])
            s -= float(hbm_wait[h])
        if s <= tol:
            break
        j = find(dsorted, dorder, s, -1)
        if j >= 0 and j != h:  # a result it read, latency included
            if lat[j] > 0:
                nm = ENGINES[eng[j]]
                stalls[STALL_KIND.get(nm, nm)] += float(lat[j])
            i = j
            continue
        j = find(esorted, eorder, s, lane[h])  # queued behind a transfer (link gap)
        if j >= 0 and j != h:
            i = j
            continue
        if len(runs):  # an item inside a run of equal instructions
            k = (s - lat[runs] - start[runs]) / dur[runs]
            ok = (k >= 1 - 1e-6) & (k <= count[runs] + 1e-6) & (np.abs(k - np.round(k)) < 1e-6)
            hits = runs[ok]
            if len(hits):
                j = int(hits[0])
                kk = int(round(float((s - lat[j] - start[j]) / dur[j])))
                if lat[j] > 0:
                    nm = ENGINES[eng[j]]
                    stalls[STALL_KIND.get(nm, nm)] += float(lat[j])
                # the part of the run up to item kk is on the path
                crit[ENGINES[eng[j]]] += float(kk * dur[j]) - float(end[j] - start[j])
                i = j
                continue
        # no exact match (a block of matmuls starts so its first step runs back to back):
        # the latest completion before s, the rest of the wait counted as a gap
        k = int(np.searchsorted(dsorted, s + tol)) - 1
        while k >= 0 and dorder[k] == h:
            k -= 1
        if k < 0:
            stalls["start"] += s
            break
        j = int(dorder[k])
        stalls["issue gap"] += s - float(done[j])
        if lat[j] > 0:
            nm = ENGINES[eng[j]]
            stalls[STALL_KIND.get(nm, nm)] += float(lat[j])
        i = j
    return dict(crit), dict(stalls)
