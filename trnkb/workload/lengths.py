"""Token-length distributions of a serving load (:class:`Lengths`), as the simulator draws
them.

Two kinds: a normal ``mean`` +- ``std`` clipped to ``[lo, hi]`` (std 0: a fixed length), and
``uniform``: integers uniform on ``[lo, hi]`` (what the vLLM/SGLang ``benchmark_serving``
random dataset draws with ``--random-range-ratio r``: ``[int(L x r), L]``; mean
``(lo + hi) / 2``, built by :meth:`Lengths.uniform_range`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class Lengths:
    """Token-length distribution: ``mean`` with optional ``std`` (normal, clipped to
    ``[lo, hi]``, rounded; std 0 is a fixed length), or with ``uniform`` integers uniform on
    ``[lo, hi]`` (``mean`` is then their mean)."""

    mean: float
    std: float = 0.0
    lo: int = 1
    hi: int | None = None
    uniform: bool = False

    @classmethod
    def uniform_range(cls, lo: int, hi: int) -> Lengths:
        """Integers uniform on ``[lo, hi]`` tokens."""
        if not 1 <= lo <= hi:
            raise ValueError(f"a uniform length range needs 1 <= lo <= hi, not [{lo}, {hi}]")
        n = hi - lo + 1
        return cls((lo + hi) / 2, math.sqrt((n * n - 1) / 12), lo, hi, True)

    def sample(self, n: int, rng: np.random.Generator) -> NDArray[np.int64]:
        if self.uniform:
            u: NDArray[np.int64] = rng.integers(self.lo, (self.hi or self.lo) + 1, n)
            return u.astype(np.int64)
        if self.std <= 0:
            x = np.full(n, self.mean)
        else:
            x = rng.normal(self.mean, self.std, n)
        hi = self.hi if self.hi is not None else math.inf
        out: NDArray[np.int64] = np.clip(np.rint(x), self.lo, hi).astype(np.int64)
        return out


def as_lengths(x: int | float | Lengths) -> Lengths:
    return x if isinstance(x, Lengths) else Lengths(float(x))


def len_dict(x: Lengths) -> dict[str, Any]:
    out: dict[str, Any] = {"mean": x.mean, "std": x.std, "min": x.lo, "max": x.hi}
    if x.uniform:
        out["uniform"] = True
    return out
