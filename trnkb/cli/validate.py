"""Checking command-line arguments at the boundary, before any work starts.

Every helper raises ``ValueError`` with one line naming the option, what was given and
what would be right; :func:`trnkb.cli.main` prints it as ``error: ...`` and exits 1.
Plain numbers are typed options instead (:mod:`trnkb.cli.params`); what is checked here
needs more than one option (work limits of a shape) or units (quantities).
"""

from __future__ import annotations

from collections.abc import Iterable

from trnkb.units import DIMENSIONS, QuantityError, has_dimension, parse
from trnkb.units.qtypes import Quantity


def quantity(text: str, option: str, dim: str, example: str) -> Quantity:
    """``text`` parsed strictly (:func:`trnkb.units.parse`) and of dimension ``dim``
    (a key of :data:`trnkb.units.DIMENSIONS`)."""
    try:
        q = parse(text)
    except QuantityError as e:
        hint = "" if "e.g." in str(e) else f" (e.g. {example})"
        raise ValueError(f"{option}: {e}{hint}") from None
    if not has_dimension(q, dim):
        want = DIMENSIONS.get(dim, dim) or "a plain number"
        raise ValueError(
            f"{option}: {text!r} is not {dim.replace('_', ' ')} ({want}); e.g. {example}"
        )
    return q


def positive_quantity(text: str, option: str, dim: str, example: str) -> Quantity:
    """Like :func:`quantity`, and greater than zero (a size, a rate something divides by)."""
    q = quantity(text, option, dim, example)
    if not q.magnitude > 0:
        raise ValueError(f"{option} must be greater than zero, got {text!r}")
    return q


def choice(value: str | None, options: Iterable[str], option: str) -> str | None:
    """``value`` if it is one of ``options`` (no value passes through), else a one-line refusal
    with a near-miss suggestion."""
    if value is None or value in options:
        return value
    from trnkb.spec.specfile import suggest  # (imports the YAML parser)

    raise ValueError(
        f"{option}: {value!r} is not one of {', '.join(options)}{suggest(value, options)}"
    )


def gemm_args(m: int, k: int, n: int, execute: bool, seed: int = 0) -> None:
    """Refuse GEMM shapes that are not positive or too large to simulate (the limits of
    :func:`trnkb.engine.gemm.gemm`, :mod:`trnkb.engine.limits`, named as options)."""
    from trnkb.engine.limits import gemm_limits

    gemm_limits(m, k, n, execute, seed, names=("--m", "--k", "--n"), no_execute="--no-execute")


def attention_args(
    seq: int, seq_kv: int | None, head_dim: int, heads: int, execute: bool, seed: int = 0
) -> None:
    """Refuse attention shapes that are not positive or too large to simulate (the limits
    of :func:`trnkb.engine.attention.attention`, named as options)."""
    from trnkb.engine.limits import attention_limits

    attention_limits(seq, seq_kv, head_dim, heads, execute, seed,
                     names=("--seq", "--seq-kv", "--head-dim", "--heads"),
                     no_execute="--no-execute")
