"""Work limits and argument choices of the reference engine's public entry points.

:func:`~trnkb.engine.gemm.gemm` and :func:`~trnkb.engine.attention.attention` check
their arguments here before a kernel is built, and the CLI (``trnkb engine``) calls the
same functions with its option names, so Python and the command line refuse the same
sizes and choices with the same message (a ``ValueError``, one line).

The instruction estimates count one TensorE matmul per 128 x 512 x 128 tile step (GEMM)
and about 20 instructions per 128-query x 512-key tile pair (attention); the cost model
runs some 30k-250k instructions per second, so the limit is under about a minute.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

MAX_INSTRUCTIONS = 2_000_000
MAX_REFERENCE_FLOP = 1e12  # float64 NumPy reference of execute (tens of seconds)
MAX_EXECUTE_BYTES = 4e9  # arrays held by execute
MAX_DIM = 1 << 20  # any one size
ORIENTATIONS = ("auto", "normal", "swapped")
EXP_ENGINES = ("vector", "scalar")


def choice(value: object, options: Sequence[str], name: str) -> None:
    """Refuse ``value`` unless it is one of ``options`` (with a near-miss suggestion)."""
    if isinstance(value, str) and value in options:
        return
    from trnkb.spec.specfile import show, suggest

    raise ValueError(f"{name}: {show(value)} is not one of {', '.join(options)}"
                     f"{suggest(str(value)[:200], options)}")


def whole(value: object, name: str, limit: int = MAX_DIM, low: int = 1) -> int:
    """``value`` as an int from ``low`` to ``limit`` (a bool or a float is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be a whole number, got {value!r:.60}")
    if value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")
    if value > limit:
        raise ValueError(f"{name} {int(value):,} is above the limit of {limit:,}")
    return int(value)


def _within(estimate: float, limit: float, what: str, unit: str) -> None:
    if estimate > limit:
        raise ValueError(f"{what}: about {estimate:,.0f} {unit}, above the limit of "
                         f"{limit:,.0f} {unit}; choose smaller sizes")


def _tiles(x: int, tile: int) -> int:
    return -(-x // tile)


def gemm_limits(m: int, k: int, n: int, execute: bool, seed: int = 0,
                names: Iterable[str] = ("m", "k", "n"), no_execute: str = "execute=False",
                reference: bool = True, own_operands: bool = True) -> None:
    """Refuse GEMM shapes that are not positive whole numbers or too large to simulate.

    With ``execute``, the float64 reference is bounded when ``reference`` and the arrays
    when the engine makes the operands itself (``own_operands``; a caller who passes
    ``a`` and ``b`` already holds them)."""
    m, k, n = (whole(v, o) for o, v in zip(names, (m, k, n), strict=True))
    whole(seed, "seed", 2**32 - 1, low=0)
    steps = _tiles(m, 128) * _tiles(n, 512) * _tiles(k, 128)
    _within(2 * steps + 2 * _tiles(m, 128) * _tiles(n, 512), MAX_INSTRUCTIONS,
            f"gemm {m}x{k}x{n} needs too many engine instructions", "instructions")
    if execute and reference:
        _within(2 * m * k * n, MAX_REFERENCE_FLOP,
                f"gemm {m}x{k}x{n} executed: float64 reference too large (use {no_execute})",
                "FLOP")
    if execute and own_operands:
        _within(16 * (m * k + k * n + m * n), MAX_EXECUTE_BYTES,
                f"gemm {m}x{k}x{n} executed: arrays too large (use {no_execute})", "bytes")


def attention_limits(seq: int, seq_kv: int | None, head_dim: int, heads: int, execute: bool,
                     seed: int = 0,
                     names: Iterable[str] = ("seq_q", "seq_kv", "head_dim", "heads"),
                     no_execute: str = "execute=False") -> None:
    """Refuse attention shapes that are not positive whole numbers or too large to simulate."""
    n_seq, n_kv, n_dim, n_heads = names
    seq = whole(seq, n_seq)
    kv = seq if seq_kv is None else whole(seq_kv, n_kv)
    head_dim = whole(head_dim, n_dim)
    heads = whole(heads, n_heads)
    whole(seed, "seed", 2**32 - 1, low=0)
    _within(20 * heads * _tiles(seq, 128) * _tiles(kv, 512), MAX_INSTRUCTIONS,
            f"attention of {heads} head(s), {seq} x {kv} needs too many engine instructions",
            "instructions")
    if execute:
        _within(4 * heads * seq * kv * head_dim, MAX_REFERENCE_FLOP,
                f"attention executed: float64 reference too large (use {no_execute})", "FLOP")
        _within(24 * heads * seq * kv, MAX_EXECUTE_BYTES,
                f"attention executed: score matrices too large (use {no_execute})", "bytes")
