"""Buffers and their dependencies: slots (SBUF/PSUM/HBM buffers and regions), tiles, pools.

A :class:`Slot` remembers when its data last landed and when its last reader finished;
:func:`read_ready` / :func:`write_ready` say when an instruction may read or write it,
:func:`mark_read` / :func:`mark_write` record an instruction's use. Regions of an HBM
tensor (or regions declared disjoint) depend only on themselves and on uses of the whole
buffer; other on-chip regions are treated as overlapping (see :mod:`trnkb.engine.timeline`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from trnkb.engine.numerics_formats import round_to

if TYPE_CHECKING:
    from trnkb.engine.timeline import Timeline

_FLOAT = {"fp32", "bf16", "fp8"}

# Bytes per element of the dtypes tiles carry (MX scales are separate uint8 tiles).
ITEMSIZE = {"fp32": 4.0, "bf16": 2.0, "fp8": 1.0, "mxfp8": 1.0, "mxfp4": 0.5, "e8m0": 1.0}


class Slot:
    """One physical buffer (a pool entry, a PSUM bank group, an HBM tensor) or a region of one.

    Times in seconds. ``ready``: the last write to it (or, for a buffer, to any of its
    regions) has landed; ``free``: its last reader is done. ``wready``/``wfree``: the same
    for uses of the whole buffer only (what a region must wait for). ``wend`` is the
    end of the last write before any pipeline latency and ``weng`` its engine.
    """

    __slots__ = ("name", "memory", "ready", "free", "wready", "wfree", "wend", "weng", "data",
                 "views", "parent", "precise")

    def __init__(self, name: str, memory: str, data: NDArray[Any] | None = None,
                 parent: Slot | None = None, precise: bool = False):
        self.views: dict[Hashable, Slot] = {}
        self.name = name
        self.memory = memory
        self.ready = self.free = self.wready = self.wfree = self.wend = 0.0
        self.weng = ""
        self.data = data
        self.parent = parent
        self.precise = precise  # a region disjoint from its siblings (HBM views, or declared)


class Tile:
    """A view of a slot: its shape ``(partitions, free...)``, dtype and numpy index."""

    __slots__ = ("slot", "shape", "dtype", "index", "free_size", "nbytes")

    def __init__(self, slot: Slot, shape: tuple[int, ...], dtype: str, index: Any = None):
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

    def view(self, index: Any, shape: tuple[int, ...], key: Hashable = None,
             disjoint: bool = False) -> Tile:
        """A region of this tile (``index`` into its data), tracked as its own region.

        ``key`` names the region (default: ``repr(index)``); views with the same key are
        the same region. Views of an HBM tensor, and views declared ``disjoint``, depend
        only on uses of the same region and of the whole buffer; other on-chip views
        wait for any use of the buffer.
        """
        if self.index is not None:
            raise ValueError("views of views are not supported")
        k = repr(index) if key is None else key
        sub = self.slot.views.get(k)
        if sub is None:
            sub = self.slot.views[k] = Slot(f"{self.slot.name}{k}", self.slot.memory,
                                            self.slot.data, self.slot,
                                            disjoint or self.slot.memory == "hbm")
        return Tile(sub, shape, self.dtype, index)

    def read(self) -> NDArray[Any]:
        d = self.slot.data
        assert d is not None, f"{self.slot.name} holds no data (a cost-only run)"
        return d if self.index is None else d[self.index]

    def write(self, value: NDArray[Any]) -> None:
        d = self.slot.data
        assert d is not None, f"{self.slot.name} holds no data (a cost-only run)"
        if self.index is None:
            d[...] = np.reshape(value, d.shape)
        else:
            d[self.index] = np.reshape(value, d[self.index].shape)


class Pool:
    """``bufs`` slots of one tile shape, handed out round-robin (multi-buffering)."""

    def __init__(self, tl: Timeline, name: str, memory: str, shape: tuple[int, ...], dtype: str,
                 bufs: int):
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


def read_ready(s: Slot) -> float:
    """When the data a read of ``s`` needs has landed.

    A region of an HBM tensor waits for writes to itself and to the whole tensor; a
    region of an SBUF/PSUM buffer waits for any write to the buffer (conservative:
    on-chip views may overlap).
    """
    p = s.parent
    if p is None:
        return s.ready
    x = p.wready if s.precise else p.ready
    return s.ready if x <= s.ready else x


def write_ready(s: Slot, t: float, engine: str = "") -> float:
    """Earliest start >= t of a write to ``s`` (after its last write and its readers)."""
    last = s.wend if (engine == "tensor" and s.weng == "tensor") else s.ready
    if last > t:
        t = last
    if s.free > t:
        t = s.free
    p = s.parent
    if p is not None:
        r, f = (p.wready, p.wfree) if s.precise else (p.ready, p.free)
        if r > t:
            t = r
        if f > t:
            t = f
    return t


def mark_read(s: Slot, end: float) -> None:
    if s.free < end:
        s.free = end
    p = s.parent
    if p is None:
        if s.wfree < end:
            s.wfree = end
    elif p.free < end:
        p.free = end


def mark_write(s: Slot, end: float, ready: float, engine: str) -> None:
    s.ready = ready
    s.wend = end
    s.weng = engine
    p = s.parent
    if p is None:
        s.wready = ready
    elif p.ready < ready:
        p.ready = ready




def store(dst: Tile, value: NDArray[Any]) -> None:
    """Write ``value`` into ``dst`` rounded to its dtype (fp32, bf16, fp8; others as they are)."""
    dst.write(round_to(value, dst.dtype) if dst.dtype in _FLOAT else value)
