"""The scheduler: engines in parallel, DMA beside them, buffers with capacities.

Scheduling rules (list scheduling in program order, as the hardware's per-engine
instruction streams run):

* each compute engine (``tensor``, ``vector``, ``scalar``, ``gpsimd``) executes its
  instructions in program order, one at a time;
* an instruction starts when its engine is free and its operands are ready: it waits
  for the last write of every buffer slot it reads (read-after-write) and, for every
  slot it writes, for the last write and all reads since (write-after-read);
* DMA transfers share the core's DMA bandwidth (one link, occupied ``bytes / rate``)
  and are not ordered among themselves (16 DMA engines and many queues): a transfer
  takes the earliest gap in the link's schedule after its operands are ready, and its
  data is ready a fixed latency after the transfer ends.

Buffers are allocated from pools with SBUF/PSUM capacity enforced per partition; a
tiling that does not fit raises ``ValueError`` naming the pool and the bytes.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from trnkb.engine.model import NeuronCore
from trnkb.units import Q_

COMPUTE_ENGINES = ("tensor", "vector", "scalar", "gpsimd")
ENGINES = (*COMPUTE_ENGINES, "dma")

# Bytes per element of the dtypes tiles carry (MX scales are separate uint8 tiles).
ITEMSIZE = {"fp32": 4.0, "bf16": 2.0, "fp8": 1.0, "mxfp8": 1.0, "mxfp4": 0.5, "e8m0": 1.0}


class Slot:
    """One physical buffer (a pool entry, a PSUM bank group, or an HBM tensor).

    ``ready`` is when its last write ends, ``free`` when its last read ends (seconds).
    """

    __slots__ = ("name", "memory", "ready", "free", "data", "views")

    def __init__(self, name: str, memory: str, data: np.ndarray | None = None):
        self.views: dict = {}  # kernels may cache their views of this slot here
        self.name = name
        self.memory = memory
        self.ready = 0.0
        self.free = 0.0
        self.data = data


class Tile:
    """A view of a slot: its shape ``(partitions, free...)``, dtype and numpy index."""

    __slots__ = ("slot", "shape", "dtype", "index", "free_size", "nbytes")

    def __init__(self, slot: Slot, shape: tuple[int, ...], dtype: str, index=None):
        self.slot = slot
        self.shape = shape
        self.dtype = dtype
        self.index = index
        self.free_size = math.prod(shape[1:])  # elements per partition: the N of cost formulas
        self.nbytes = int(math.prod(shape) * ITEMSIZE[dtype])

    @property
    def memory(self) -> str:
        return self.slot.memory

    @property
    def partitions(self) -> int:
        return self.shape[0]

    def view(self, index, shape: tuple[int, ...]) -> Tile:
        """A sub-tile (``index`` into this tile's data, relative to it)."""
        if self.index is not None:  # only views of a whole slot are needed
            raise ValueError("views of views are not supported")
        return Tile(self.slot, shape, self.dtype, index)

    def read(self) -> np.ndarray:
        d = self.slot.data
        return d if self.index is None else d[self.index]

    def write(self, value: np.ndarray) -> None:
        if self.index is None:
            self.slot.data[...] = np.reshape(value, self.slot.data.shape)
        else:
            self.slot.data[self.index] = np.reshape(value, self.slot.data[self.index].shape)


class Pool:
    """``bufs`` slots of one tile shape, handed out round-robin (multi-buffering)."""

    def __init__(self, tl: Timeline, name: str, memory: str, shape, dtype: str, bufs: int):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype
        self.slots = [Slot(f"{name}[{i}]", memory) for i in range(bufs)]
        self._next = 0
        self._execute = tl.execute

    def tile(self) -> Tile:
        slot = self.slots[self._next]
        self._next = (self._next + 1) % len(self.slots)
        if self._execute and slot.data is None:
            slot.data = np.zeros(self.shape, np.float32)
        return Tile(slot, self.shape, self.dtype)


@dataclass
class Result:
    """What a kernel run produced. Quantities carry units; ``to_dict`` converts at the edge.

    Attributes
    ----------
    seconds : makespan (s).
    busy : per engine, time it was busy (s); for ``dma`` the time the link was busy.
    cycles : per compute engine, busy time x its clock (cycles).
    flops : useful FLOPs of the operation (2mnk for GEMM).
    peak : derived peak of one core for the dtype, 2 x rows x cols x pack x clock.
    bytes : moved per level: ``hbm`` (DMA to/from HBM), ``sbuf`` and ``psum`` (bytes
        engines read and wrote there).
    bound_by : the engine with the most busy time.
    """

    kernel: str
    chip: str
    dtype: str
    seconds: object
    busy: dict
    cycles: dict
    flops: object
    peak: object
    bytes: dict
    records: tuple
    output: np.ndarray | None = None
    error: dict | None = None
    notes: list[str] = field(default_factory=list)
    params: dict = field(default_factory=dict)

    @property
    def achieved(self):
        """Achieved FLOP/s: flops / makespan."""
        return (self.flops / self.seconds).to("TFLOPS")

    @property
    def utilization(self) -> float:
        return float((self.achieved / self.peak).to("").magnitude)

    @property
    def bound_by(self) -> str:
        return max(self.busy, key=lambda e: self.busy[e].magnitude)

    @property
    def timeline(self) -> pd.DataFrame:
        """One row per instruction: engine, op, start, end (seconds)."""
        eng, op, start, end = self.records
        return pd.DataFrame({"engine": pd.Series(eng, dtype="str"), "op": pd.Series(op, dtype="str"),
                             "start": np.asarray(start, float), "end": np.asarray(end, float)})

    def to_dict(self) -> dict:
        """Plain numbers in SI units (s, FLOP, FLOP/s, bytes) for JSON."""
        out = {
            "kernel": self.kernel, "chip": self.chip, "dtype": self.dtype, **self.params,
            "seconds": self.seconds.to("s").magnitude,
            "cycles": {k: int(v) for k, v in self.cycles.items()},
            "busy_seconds": {k: v.to("s").magnitude for k, v in self.busy.items()},
            "bound_by": self.bound_by,
            "flops": self.flops.to("FLOP").magnitude,
            "achieved_flops_per_s": self.achieved.to("FLOPS").magnitude,
            "peak_flops_per_s": self.peak.to("FLOPS").magnitude,
            "utilization": self.utilization,
            "bytes": {k: v.to("B").magnitude for k, v in self.bytes.items()},
            "notes": list(self.notes),
        }
        if self.error is not None:
            out["error"] = dict(self.error)
        return out


def _earliest(t: float, reads, writes) -> float:
    """Earliest start not before ``t``: every read's data is ready, every written slot is
    both ready (write after write) and free (its previous readers are done)."""
    for r in reads:
        if r.slot.ready > t:
            t = r.slot.ready
    for w in writes:
        s = w.slot
        if s.ready > t:
            t = s.ready
        if s.free > t:
            t = s.free
    return t


class Timeline:
    """Issue instructions, track buffers, and produce a :class:`Result`.

    ``execute`` says whether instructions also compute their numeric results.
    """

    def __init__(self, core: NeuronCore, execute: bool = True):
        self.core = core
        self.execute = execute
        self.clock_hz = {e: core.clock(e).to("Hz").magnitude for e in COMPUTE_ENGINES}
        self.dma_rate = core.dma_rate.to("B/s").magnitude
        self.dma_latency = core.dma_fixed_latency.to("s").magnitude
        self._free = dict.fromkeys(COMPUTE_ENGINES, 0.0)
        self._busy = dict.fromkeys(ENGINES, 0.0)
        self._link_starts: list[float] = []
        self._link_ends: list[float] = []
        self._eng: list[str] = []
        self._op: list[str] = []
        self._start: list[float] = []
        self._end: list[float] = []
        self.bytes = {"hbm": 0, "sbuf": 0, "psum": 0}
        self.tensor_flops = 0.0
        self._sbuf_used = 0  # bytes per partition
        self._psum_banks_used = 0
        self._pools: list[str] = []

    # ---- buffers -------------------------------------------------------------------
    def hbm(self, name: str, shape, dtype: str, data: np.ndarray | None = None) -> Tile:
        """A tensor in HBM (no capacity limit is modelled for HBM)."""
        d = np.asarray(data, np.float32) if (self.execute and data is not None) else None
        if self.execute and d is None:
            d = np.zeros(shape, np.float32)
        return Tile(Slot(name, "hbm", d), tuple(shape), dtype)

    def sbuf_pool(self, name: str, shape, dtype: str, bufs: int = 1) -> Pool:
        """Allocate ``bufs`` SBUF tiles of ``shape`` = (partitions, free...)."""
        core = self.core
        self._check_partitions(name, shape)
        per_part = int(math.ceil(math.prod(shape[1:]) * ITEMSIZE[dtype]))
        cap = int(core.sbuf_capacity.to("B").magnitude) // core.partitions
        need = per_part * bufs
        if self._sbuf_used + need > cap:
            raise ValueError(
                f"SBUF overflow: pool {name!r} needs {bufs} x {per_part} B = {need} B per "
                f"partition, but only {cap - self._sbuf_used} B of {cap} B per partition are free "
                f"(SBUF {core.sbuf_capacity:~P} = {core.partitions} partitions; in use: "
                f"{', '.join(self._pools) or 'nothing'})")
        self._sbuf_used += need
        self._pools.append(f"{name} {need} B")
        return Pool(self, name, "sbuf", shape, dtype, bufs)

    def psum_pool(self, name: str, shape, dtype: str = "fp32", bufs: int = 1) -> Pool:
        """Allocate ``bufs`` PSUM tiles; each takes whole banks (2 KiB per partition each)."""
        core = self.core
        self._check_partitions(name, shape)
        per_part = math.prod(shape[1:]) * ITEMSIZE[dtype]
        bank = core.psum_bank_bytes
        banks = int(math.ceil(per_part / bank)) * bufs
        if self._psum_banks_used + banks > core.psum_banks:
            raise ValueError(
                f"PSUM overflow: pool {name!r} needs {banks} bank(s) ({bufs} x {int(per_part)} B "
                f"per partition, banks of {bank} B), but only "
                f"{core.psum_banks - self._psum_banks_used} of {core.psum_banks} banks are free")
        self._psum_banks_used += banks
        return Pool(self, name, "psum", shape, dtype, bufs)

    def _check_partitions(self, name, shape):
        if shape[0] > self.core.partitions:
            raise ValueError(f"pool {name!r}: {shape[0]} partitions requested, the core has "
                             f"{self.core.partitions}")

    # ---- issuing -------------------------------------------------------------------
    def issue(self, engine: str, op: str, cycles: float, reads, writes) -> float:
        """Schedule one compute instruction of ``cycles`` on ``engine``; return its end (s)."""
        t = _earliest(self._free[engine], reads, writes)
        dur = cycles / self.clock_hz[engine]
        end = t + dur
        self._free[engine] = end
        self._busy[engine] += dur
        for r in reads:
            s = r.slot
            if s.free < end:
                s.free = end
            self.bytes[s.memory] += r.nbytes
        for w in writes:
            w.slot.ready = end
            self.bytes[w.slot.memory] += w.nbytes
        self._eng.append(engine)
        self._op.append(op)
        self._start.append(t)
        self._end.append(end)
        return end

    def issue_run(self, engine: str, op: str, cycles: float, shared, items,
                  accumulate: bool = True) -> float:
        """Issue ``len(items)`` back-to-back instructions of ``cycles`` each.

        All read the ``shared`` tiles; item ``i`` writes ``items[i]`` (a PSUM accumulator,
        also read when ``accumulate``). The result is exactly that of issuing them one by one: the run is
        placed back to back, and if any item's own operand is not ready at its slot the
        run falls back to one-by-one issue.
        """
        t = self._free[engine]
        for r in shared:
            if r.slot.ready > t:
                t = r.slot.ready
        dur = cycles / self.clock_hz[engine]
        for i, w in enumerate(items):
            s = w.slot
            if s.ready > t + i * dur or s.free > t + i * dur:
                end = 0.0
                for w2 in items:
                    reads = (*shared, w2) if accumulate else shared
                    end = self.issue(engine, op, cycles, reads, (w2,))
                return end
        n = len(items)
        starts = [t + i * dur for i in range(n)]
        ends = [x + dur for x in starts]
        for w, e in zip(items, ends, strict=True):
            w.slot.ready = e
            w.slot.free = max(w.slot.free, e)
            self.bytes[w.slot.memory] += (2 if accumulate else 1) * w.nbytes
        for r in shared:
            if r.slot.free < ends[-1]:
                r.slot.free = ends[-1]
            self.bytes[r.slot.memory] += r.nbytes * n
        self._free[engine] = ends[-1]
        self._busy[engine] += n * dur
        self._eng += [engine] * n
        self._op += [op] * n
        self._start += starts
        self._end += ends
        return ends[-1]

    def transfer(self, op: str, nbytes: float, reads, writes) -> float:
        """Schedule one DMA transfer of ``nbytes``; return when its data is ready (s)."""
        ready = _earliest(0.0, reads, writes)
        dur = nbytes / self.dma_rate
        t = self._place(ready, dur)
        done = t + dur + self.dma_latency
        self._busy["dma"] += dur
        for r in reads:
            if r.slot.free < done:
                r.slot.free = done
        for w in writes:
            w.slot.ready = done
        self.bytes["hbm"] += nbytes
        self._eng.append("dma")
        self._op.append(op)
        self._start.append(t)
        self._end.append(t + dur)
        return done

    def _place(self, ready: float, dur: float) -> float:
        """Earliest start >= ready of a gap of length ``dur`` in the link's busy intervals."""
        starts, ends = self._link_starts, self._link_ends
        i = bisect_right(ends, ready)
        t = ready
        n = len(starts)
        while i < n and starts[i] < t + dur:
            if ends[i] > t:
                t = ends[i]
            i += 1
        # insert [t, t+dur) before interval i, merging with neighbours that touch it
        e = t + dur
        if i > 0 and ends[i - 1] >= t:
            ends[i - 1] = max(ends[i - 1], e)
            if i < n and starts[i] <= ends[i - 1]:
                ends[i - 1] = max(ends[i - 1], ends[i])
                del starts[i], ends[i]
        elif i < n and starts[i] <= e:
            starts[i] = t
        else:
            starts.insert(i, t)
            ends.insert(i, e)
        return t

    # ---- result --------------------------------------------------------------------
    def result(self, kernel: str, dtype: str, flops: float, **kw) -> Result:
        makespan = max(self._end) if self._end else 0.0
        busy = {e: Q_(self._busy[e], "s") for e in ENGINES}
        cycles = {e: round(self._busy[e] * self.clock_hz[e]) for e in COMPUTE_ENGINES}
        return Result(
            kernel=kernel, chip=self.core.chip, dtype=dtype, seconds=Q_(makespan, "s"),
            busy=busy, cycles=cycles, flops=Q_(flops, "FLOP"),
            peak=self.core.peak_flops(dtype).to("TFLOPS"),
            bytes={k: Q_(v, "B") for k, v in self.bytes.items()},
            records=(self._eng, self._op, self._start, self._end), **kw)
