"""Collectives over a system: the scale-up fabric (graph or analytic) and the scale-out network.

A :class:`Network` answers "how long does this collective take over a group of ``g`` chips
whose ranks are ``stride`` apart?". The part of the group inside one scale-up domain uses
the fabric: the built graph of :mod:`trnkb.topology` where the knowledge base wires one
(hop- and bisection-aware, per switch generation), otherwise an analytic model named in
``scaleup_model`` (a non-blocking switch: injection = the chip's scale-up bandwidth,
bisection = g/2 x injection, one hop; or a wrap-around torus: 2 links per used axis, the cut
across the longest axis). The part that crosses domains runs hierarchically over each
chip's scale-out (NIC) bandwidth: reduce-scatter inside the domain, the collective across
domains on 1/g_in of the data, all-gather inside the domain.

Times in seconds, bytes in bytes, bandwidths in B/s per direction. Achieved bandwidth is
``efficiency x`` the link figure (an assumption, see :mod:`trnkb.workload.training`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trnkb.topology.collectives import bandwidth_time, latency_steps

if TYPE_CHECKING:
    from trnkb.topology import Fabric


@dataclass(frozen=True)
class GroupBandwidth:
    chips: int
    injection: float  # B/s per chip
    bisection: float  # B/s across the group's balanced cut
    mean_hops: float


@dataclass
class Network:
    """Scale-up domain and scale-out bandwidth of a system (built by :mod:`trnkb.workload.fromkb`).

    ``fabric`` is a :class:`trnkb.topology.Fabric` or None; then ``scaleup_model`` is
    ``switch`` or ``torus`` (with ``torus_dims``) over ``chip_scaleup`` B/s per chip.
    """

    domain: int
    chip_scaleup: float
    scaleout: float
    fabric: Fabric | None = None
    scaleup_model: str = "switch"
    torus_dims: tuple[int, ...] = ()
    torus_ndim: int = 0
    _cache: dict[int, GroupBandwidth] = field(default_factory=dict, repr=False)

    @property
    def scaleup_basis(self) -> str:
        if self.fabric is not None:
            return f"fabric graph {self.fabric.spec.id} (trnkb.topology)"
        if self.scaleup_model == "torus":
            return f"analytic wrap-around torus {'x'.join(map(str, self.torus_dims))}"
        return "analytic non-blocking switch (no fabric row in the KB)"

    def group(self, g: int) -> GroupBandwidth:
        """Bandwidths of a packed group of ``g`` chips inside one domain."""
        g = max(1, min(g, self.domain))
        if g in self._cache:
            return self._cache[g]
        if self.fabric is not None:
            gb = self.fabric.group_bandwidth(g)
            out = GroupBandwidth(g, float(gb["injection"].to("B/s").magnitude),
                                 float(gb["bisection"].to("B/s").magnitude), gb["mean_hops"])
        elif self.scaleup_model == "torus" and self.torus_dims:
            out = self._torus(g)
        else:
            out = GroupBandwidth(g, self.chip_scaleup, self.chip_scaleup * max(g, 2) / 2, 1.0)
        self._cache[g] = out
        return out

    def _torus(self, g: int) -> GroupBandwidth:
        dims = self.torus_dims
        link = self.chip_scaleup / (2 * (self.torus_ndim or len(dims)))
        used, left = [], g
        for d in dims:
            if left <= 1:
                break
            n = min(d, left)
            used.append(n)
            left = math.ceil(left / n)
        axes = [n for n in used if n > 1]
        if not axes:
            return GroupBandwidth(g, self.chip_scaleup, self.chip_scaleup, 0.0)
        inj = 2 * link * len(axes)
        longest = max(axes)
        cut = 2 * link * (math.prod(axes) // longest)
        hops = sum(n / 4 for n in axes)  # mean ring distance n/4, minus the final link
        return GroupBandwidth(g, inj, cut, max(hops - 1, 0.0))

    def split(self, g: int, stride: int) -> tuple[int, int]:
        """(ranks of the group inside one domain, number of domains the group spans)."""
        if g <= 1:
            return 1, 1
        inside = max(1, min(g, self.domain // max(stride, 1)))
        return inside, math.ceil(g / inside)

    def time(self, kind: str, nbytes: float, g: int, stride: int = 1, efficiency: float = 1.0,
             step_latency: float = 0.0, hop_latency: float = 0.0,
             scaleout_latency: float = 0.0, scaleup_scale: float = 1.0,
             scaleout_scale: float = 1.0) -> float:
        """Seconds of one collective over ``g`` ranks ``stride`` apart (see the module docstring).

        ``scaleup_scale`` and ``scaleout_scale`` multiply the fabric's and the NIC's
        bandwidth (how the range of a sourced bandwidth reaches the result).
        """
        if g <= 1 or nbytes <= 0:
            return 0.0
        g_in, g_out = self.split(g, stride)
        t = 0.0
        if g_in > 1:
            gb = self.group(g_in)
            e = efficiency * scaleup_scale
            inj, bis = gb.injection * e, gb.bisection * e
            per_step = step_latency + gb.mean_hops * hop_latency
            if kind == "all-to-all":
                share = nbytes * (g_in - 1) / g  # bytes that stay in the domain
                t_in = bandwidth_time(kind, share * g_in / (g_in - 1), g_in, inj, bis) + per_step
            else:
                t_in = (bandwidth_time(kind, nbytes, g_in, inj, bis)
                        + latency_steps(kind, g_in) * per_step)
            t += t_in
        if g_out > 1:
            out_bw = self.scaleout * efficiency * scaleout_scale
            if kind == "all-to-all":
                t_out = nbytes * (g - g_in) / g / out_bw + scaleout_latency
                t = max(t, t_out)
            else:
                part = nbytes / g_in
                t += bandwidth_time(kind, part, g_out, out_bw, out_bw * g_out / 2) \
                    + latency_steps(kind, g_out) * scaleout_latency
        return t

    def p2p(self, nbytes: float, crosses_domain: bool, efficiency: float = 1.0) -> float:
        """Seconds to send ``nbytes`` to one neighbour (pipeline stages)."""
        bw = self.scaleout if crosses_domain else self.group(2).injection
        return nbytes / (bw * efficiency)
