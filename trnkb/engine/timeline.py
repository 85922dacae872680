"""The scheduler: engines in parallel, DMA beside them, buffers tracked per region.

Scheduling rules (list scheduling in program order, as the hardware's per-engine
instruction streams run):

* each compute engine (``tensor``, ``vector``, ``scalar``, ``gpsimd``) executes its
  instructions in program order, one at a time;
* an instruction starts when its engine is free and its operands are ready: it waits
  for the last write of every buffer region it reads (read after write) and, for every
  region it writes, for the last write and all reads since (write after read). A
  region is a whole buffer or a view of it (:meth:`Tile.view`); writes to disjoint
  views of one HBM tensor (the output tiles of a GEMM) do not wait for each other, a
  use of the whole tensor waits for every view; views of one SBUF/PSUM buffer are
  treated as overlapping (each waits for the whole buffer);
* a TensorE result reaches PSUM ``tensor_pipeline_cycles`` after its instruction
  leaves the array (fill and drain); accumulating matmuls into the same bank chain
  without that wait (:mod:`trnkb.engine.isa` charges LoadStationary);
* DMA transfers of one core share its DMA engines (one link, occupied ``bytes / rate``)
  and are not ordered among themselves: a transfer takes the earliest gap in the
  link's schedule after its operands are ready, and its data is ready
  ``dma_fixed_latency`` after the transfer ends. In a chip run (:mod:`trnkb.engine.chip`)
  every transfer also needs a gap on the chip's one HBM link, shared by all cores; the
  delay that link adds (other cores' transfers) is recorded per transfer (``hbm_wait``).

Buffers are allocated from pools with SBUF/PSUM capacity enforced per partition; a
tiling that does not fit raises ``ValueError`` naming the pool and the bytes.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from trnkb.engine.buffers import (  # re-exported: the ISA builds on them
    ITEMSIZE,
    Pool,
    Slot,
    Tile,
    mark_read,
    mark_write,
    read_ready,
    write_ready,
)
from trnkb.engine.model import NeuronCore
from trnkb.engine.result import ENGINES, Result

Operands = Sequence[Tile]

COMPUTE_ENGINES = ("tensor", "vector", "scalar", "gpsimd")
_EID = {e: i for i, e in enumerate(ENGINES)}
_DMA = _EID["dma"]

class Link:
    """A bandwidth resource (a core's DMA engines, a chip's HBM): busy intervals, merged."""

    def __init__(self, rate: float):
        self.rate = rate  # B/s
        self.starts: list[float] = []
        self.ends: list[float] = []

    def find(self, ready: float, dur: float) -> float:
        """Earliest start >= ready of a gap of length ``dur``."""
        starts, ends = self.starts, self.ends
        i = bisect_right(ends, ready)
        t = ready
        n = len(starts)
        while i < n and starts[i] < t + dur:
            if ends[i] > t:
                t = ends[i]
            i += 1
        return t

    def insert(self, t: float, dur: float) -> None:
        starts, ends = self.starts, self.ends
        e = t + dur
        n = len(starts)
        if n == 0 or t >= ends[-1]:  # the common case: append at the end
            if n and t == ends[-1]:
                ends[-1] = e
            else:
                starts.append(t)
                ends.append(e)
            return
        i = bisect_right(ends, t)
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


class Timeline:
    """Issue instructions on one core, track buffers, and produce a :class:`Result`.

    ``execute`` says whether instructions also compute their numeric results. ``hbm``
    is the chip's shared HBM link in a chip run (None: the core's DMA rate already
    includes its share of HBM, :attr:`NeuronCore.dma_rate`).
    """

    def __init__(self, core: NeuronCore, execute: bool = True, hbm: Link | None = None,
                 core_id: int = 0):
        self.core = core
        self.core_id = core_id
        self.execute = execute
        self.clock_hz: dict[str, float] = {e: core.clock(e).to("Hz").magnitude
                                           for e in COMPUTE_ENGINES}
        # TensorE issues matmuls at its sustained rate (a fraction of one per clock cycle,
        # ``tensor_sustained`` in specs/cores.yaml; 1 where none is recorded)
        self.clock_hz["tensor"] *= core.tensor_sustained
        rate = core.dma_rate if hbm is None else core.dma_bandwidth
        self.link = Link(rate.to("B/s").magnitude)
        self.hbm_link = hbm
        assert core.dma_min_payload is not None, f"{core.name}: no dma_min_payload"
        self.dma_latency: float = core.dma_fixed_latency.to("s").magnitude
        self.dma_min_payload: float = core.dma_min_payload.to("B").magnitude
        self.tensor_latency = core.tensor_pipeline_cycles / self.clock_hz["tensor"]
        self._free = dict.fromkeys(COMPUTE_ENGINES, 0.0)
        self._busy = dict.fromkeys(ENGINES, 0.0)
        # records: one per instruction or per run of equal back-to-back instructions
        self._eng: list[int] = []
        self._op: list[str] = []
        self._start: list[float] = []
        self._dur: list[float] = []
        self._count: list[int] = []
        self._lat: list[float] = []
        self._nbytes: list[float] = []
        self._hbm_wait: list[float] = []  # DMA: delay caused by other cores on the HBM link
        self.bytes: dict[str, float] = {"hbm": 0, "sbuf": 0, "psum": 0}
        self._sbuf_used = 0  # bytes per partition
        self._psum_banks_used = 0
        self._pools: list[str] = []
        # TensorE LoadStationary state: the stationary region loaded and when its LS ends
        self.loaded: Slot | None = None
        self.ls_end = 0.0
        self.mm_start = 0.0  # start of the last MultiplyMoving (a background LS may begin then)
        self.block_cache: dict[Any, Any] = {}  # per block shape constants of isa.matmul_block

    @property
    def now(self) -> float:
        """The latest time any engine of this core is busy until (for fair chip stepping)."""
        return max(max(self._free.values()), self.link.ends[-1] if self.link.ends else 0.0)

    @property
    def makespan(self) -> float:
        """The latest end of any instruction, latency included (s)."""
        if not self._start:
            return 0.0
        st, du, co, la = (np.asarray(x) for x in (self._start, self._dur, self._count, self._lat))
        return float((st + du * co + la).max())

    # ---- buffers -------------------------------------------------------------------
    def hbm(self, name: str, shape: tuple[int, ...], dtype: str,
            data: NDArray[Any] | None = None) -> Tile:
        """A tensor in HBM (no capacity limit is modelled for HBM)."""
        d = None
        if self.execute:
            d = np.zeros(shape, np.float32) if data is None else np.asarray(data, np.float32)
        return Tile(Slot(name, "hbm", d), tuple(shape), dtype)

    def sbuf_pool(self, name: str, shape: tuple[int, ...], dtype: str, bufs: int = 1) -> Pool:
        """Allocate ``bufs`` SBUF tiles of ``shape`` = (partitions, free...)."""
        core = self.core
        self._check_partitions(name, shape)
        per_part = int(math.ceil(math.prod(shape[1:]) * ITEMSIZE[dtype]))
        cap = self.sbuf_partition_bytes
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

    @property
    def sbuf_partition_bytes(self) -> int:
        return int(self.core.sbuf_capacity.to("B").magnitude) // self.core.partitions

    @property
    def sbuf_free_bytes(self) -> int:
        """SBUF bytes per partition not yet allocated."""
        return self.sbuf_partition_bytes - self._sbuf_used

    def psum_pool(self, name: str, shape: tuple[int, ...], dtype: str = "fp32",
                  bufs: int = 1) -> Pool:
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

    def _check_partitions(self, name: str, shape: tuple[int, ...]) -> None:
        if shape[0] > self.core.partitions:
            raise ValueError(f"pool {name!r}: {shape[0]} partitions requested, the core has "
                             f"{self.core.partitions}")

    # ---- issuing -------------------------------------------------------------------
    def _record(self, eng: str, op: str, start: float, dur: float, count: int = 1,
                lat: float = 0.0, nbytes: float = 0.0, hbm_wait: float = 0.0) -> None:
        self._eng.append(_EID[eng])
        self._op.append(op)
        self._start.append(start)
        self._dur.append(dur)
        self._count.append(count)
        self._lat.append(lat)
        self._nbytes.append(nbytes)
        self._hbm_wait.append(hbm_wait)

    def issue(self, engine: str, op: str, cycles: float, reads: Operands, writes: Operands,
              not_before: float = 0.0,
              latency: float = 0.0) -> float:
        """Schedule one compute instruction of ``cycles`` on ``engine``; return its end (s).

        ``latency``: extra time before its writes are visible to other instructions.
        """
        t = self._free[engine]
        if not_before > t:
            t = not_before
        for r in reads:
            x = read_ready(r.slot)
            if x > t:
                t = x
        for w in writes:
            t = write_ready(w.slot, t, engine)
        dur = cycles / self.clock_hz[engine]
        end = t + dur
        self._free[engine] = end
        self._busy[engine] += dur
        by = self.bytes
        for r in reads:
            mark_read(r.slot, end)
            by[r.slot.memory] += r.nbytes
        for w in writes:
            mark_write(w.slot, end, end + latency, engine)
            by[w.slot.memory] += w.nbytes
        self._record(engine, op, t, dur, 1, latency)
        return end

    def issue_run(self, engine: str, op: str, cycles: float, start: float,
                  items: Sequence[tuple[Operands, Operands]],
                  latency: float = 0.0, accumulate: bool = False) -> float:
        """``len(items)`` back-to-back instructions of ``cycles`` each, the first at ``start``.

        ``items`` = [(reads, writes), ...]. The caller has checked that item ``i``'s
        operands are ready by ``start + i x dur`` (:meth:`run_fits`); the run is then
        recorded as one record, with exactly the times of one-by-one issue.
        """
        dur = cycles / self.clock_hz[engine]
        n = len(items)
        by = self.bytes
        for i, (reads, writes) in enumerate(items):
            end = start + (i + 1) * dur
            for r in reads:
                mark_read(r.slot, end)
                by[r.slot.memory] += r.nbytes
            for w in writes:
                mark_write(w.slot, end, end + latency, engine)
                by[w.slot.memory] += w.nbytes * (2 if accumulate else 1)
        end = start + n * dur
        self._free[engine] = end
        self._busy[engine] += n * dur
        self._record(engine, op, start, dur, n, latency)
        return end

    def transfer(self, op: str, nbytes: float, partitions: int, reads: Operands,
                 writes: Operands) -> float:
        """Schedule one DMA transfer of ``nbytes`` over ``partitions``; return when its data is
        ready.

        Charged time = partitions x max(nbytes / partitions, dma_min_payload) / rate, where
        rate = the core's DMA rate x min(partitions, dma_engines) / dma_engines (a transfer
        spreads over up to 16 DMA engines, one partition row each; the DMA overview).
        """
        core = self.core
        ready = 0.0
        for r in reads:
            x = read_ready(r.slot)
            if x > ready:
                ready = x
        for w in writes:
            ready = write_ready(w.slot, ready)
        parts = max(1, partitions)
        charged = parts * max(nbytes / parts, self.dma_min_payload)
        engines = core.dma_engines
        rate = self.link.rate * min(parts, engines) / engines
        dur = charged / rate
        t = self.link.find(ready, dur)
        t_own = t  # the start the core's own DMA link allows
        h = self.hbm_link
        if h is not None:
            hdur = nbytes / h.rate
            while True:
                t2 = h.find(t, hdur)
                if t2 == t:
                    break
                t = self.link.find(t2, dur)
            h.insert(t, hdur)
        self.link.insert(t, dur)
        end = t + dur
        done = end + self.dma_latency
        self._busy["dma"] += dur
        for r in reads:
            mark_read(r.slot, done)
        for w in writes:
            mark_write(w.slot, end, done, "dma")
        self.bytes["hbm"] += nbytes
        self._record("dma", op, t, dur, 1, self.dma_latency, nbytes, t - t_own)
        return done

    # ---- result --------------------------------------------------------------------
    def result(self, kernel: str, dtype: str, flops: float, **kw: Any) -> Result:
        return Result.from_records(
            kernel=kernel, core=self.core, dtype=dtype, flops=flops, busy=self._busy,
            bytes=self.bytes, records=self.records(), **kw)

    def records(self) -> dict[str, Any]:
        """The raw records as numpy arrays (one row per instruction or run)."""
        return {"engine": np.asarray(self._eng, np.int8), "op": self._op,
                "start": np.asarray(self._start), "dur": np.asarray(self._dur),
                "count": np.asarray(self._count, np.int64), "lat": np.asarray(self._lat),
                "nbytes": np.asarray(self._nbytes), "hbm_wait": np.asarray(self._hbm_wait),
                "core": np.full(len(self._eng), self.core_id, np.int16)}
