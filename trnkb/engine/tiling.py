"""Kernel tiling as an input: the shape a published kernel actually executes.

A kernel that pads rounds M, N and K up to multiples of its tiles; the time is that of
the executed shape while the useful work is the requested one. :class:`Tiling` holds
the multiples; :func:`named_tiling` reads a published kernel's rule from
``trnkb/engine/data/kernel_tilings.yaml`` (with its source).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_DATA = Path(__file__).with_name("data") / "kernel_tilings.yaml"


@dataclass(frozen=True)
class Tiling:
    """Multiples the kernel pads M, N and K to (1: no padding on that axis)."""

    m: int = 1
    n: int = 1
    k: int = 1
    name: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        for axis in ("m", "n", "k"):
            v = getattr(self, axis)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"tiling {axis}={v!r} must be an integer >= 1")

    def executed(self, m: int, k: int, n: int) -> tuple[int, int, int]:
        """(m, k, n) rounded up to the multiples: the shape the kernel runs."""
        return (math.ceil(m / self.m) * self.m, math.ceil(k / self.k) * self.k,
                math.ceil(n / self.n) * self.n)

    def describe(self) -> str:
        what = self.name or "tiling"
        return f"{what}: M, N, K padded to multiples of {self.m}, {self.n}, {self.k}"


@lru_cache(maxsize=1)
def _named() -> dict[str, Tiling]:
    import yaml

    rows = yaml.safe_load(_DATA.read_text())
    return {r["name"]: Tiling(int(r["m"]), int(r["n"]), int(r["k"]), r["name"], r["source"])
            for r in rows}


def tiling_names() -> list[str]:
    """Names of the published kernels' tilings."""
    return sorted(_named())


def named_tiling(name: str) -> Tiling:
    """A published kernel's padding rule by name (``nkilib-gemm-trn3-lnc2``)."""
    known = _named()
    if name not in known:
        raise ValueError(f"unknown kernel tiling {name!r}; known: {', '.join(sorted(known))}")
    return known[name]
