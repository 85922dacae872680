"""The compiled MXFP8 block kernel (numba) of :mod:`trnkb.engine.numerics_fp8`.

Imported on the first MXFP8 quantisation only, so ``import trnkb`` never loads numba.
A module of its own (not a closure) so numba's on-disk cache (``cache=True``) finds the
compiled code again in the next process. The rules are in the docstring of
:mod:`trnkb.engine.numerics_fp8`; ``fastmath`` is off: the RCEIL quotient must be the
IEEE float32 one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from trnkb.engine.numerics_fp8 import MODE_FIXED, MODE_FLOOR, MODE_RCEIL

_OPTS: dict[str, Any] = {"nogil": True, "fastmath": False, "error_model": "numpy",
                         "boundscheck": False}


def _jit(fn: Callable[..., Any], **kw: Any) -> Any:
    """``numba.njit`` with the on-disk cache, or without when numba finds no writable
    cache directory (package and user cache both read-only): then it compiles in every
    process."""
    try:
        return numba.njit(cache=True, **_OPTS, **kw)(fn)
    except RuntimeError:
        return numba.njit(cache=False, **_OPTS, **kw)(fn)


def _code_py(f: int, sig: int, s0: int, big: int, mbits: int) -> int:
    # RNE of sig * 2**(f - 150) on the grid 2**(max(f, big) - 150 - mbits), in
    # units of that spacing; then the FP8 magnitude code (before saturation)
    s = min(s0 + max(big - f, 0), 31)
    half = (np.uint32(1) << np.uint32(s - 1)) - np.uint32(1)
    r = (np.uint32(sig) + half + ((np.uint32(sig) >> np.uint32(s)) & np.uint32(1))) \
        >> np.uint32(s)
    return (max(f, big) - big) * (1 << mbits) + int(r)


def _kernel_py(bits: Any, nb: int, block: int, mode: int, emax: int, emin: int,
           mbits: int, max_code: int, max_elem: float, codes: Any,
           scales: Any) -> None:
    """Codes and scale bytes of ``nb`` blocks of ``block`` float32 bit patterns ``bits``
    into ``codes`` / ``scales`` (uint8); ``mode`` one of the ``MODE_*`` constants of
    :mod:`trnkb.engine.numerics_fp8`, ``max_elem`` the format's largest value (float64)."""
    one = np.empty(1, np.float32)
    one_u = one.view(np.uint32)
    s0 = 23 - mbits
    for j in range(nb):
        base = j * block
        amax = np.uint32(0)
        for i in range(block):
            amax = max(amax, bits[base + i] & np.uint32(0x7FFFFFFF))
        if mode != MODE_FIXED and amax >= np.uint32(0x7F800000):
            scales[j] = 255
            for i in range(block):
                codes[base + i] = 0
            continue
        if mode == MODE_FLOOR:
            b = max(int(amax >> np.uint32(23)) - emax, 0)
        elif mode == MODE_RCEIL:
            one_u[0] = amax
            one[0] = np.float32(np.float64(one[0]) / max_elem)  # exact: see docs
            d = one_u[0]
            b = int(((d + np.uint32(0x7FFFFF)) & np.uint32(0x7F800000)) >> np.uint32(23))
            if d <= np.uint32(1 << 22):
                b = 0
        else:
            b = 127
        scales[j] = b
        big = emin + b  # S
        if big >= 1:
            for i in range(block):
                u = bits[base + i]
                a = u & np.uint32(0x7FFFFFFF)
                f = int(a >> np.uint32(23))
                sig = (a & np.uint32(0x7FFFFF)) | (np.uint32(f > 0) << np.uint32(23))
                c = min(_code(max(f, 1), sig, s0, big, mbits), max_code)
                codes[base + i] = np.uint8(c) | np.uint8((u >> np.uint32(24))
                                                         & np.uint32(0x80))
        else:
            for i in range(block):
                u = bits[base + i]
                a = u & np.uint32(0x7FFFFFFF)
                f = int(a >> np.uint32(23))
                sig = a & np.uint32(0x7FFFFF)
                if f > 0:
                    sig |= np.uint32(1 << 23)
                elif sig == 0:
                    f = -200  # zero: code 0
                else:  # normalise a float32 subnormal
                    f = 1
                    while sig < np.uint32(1 << 23):
                        sig <<= np.uint32(1)
                        f -= 1
                c = min(_code(f, sig, s0, big, mbits), max_code)
                codes[base + i] = np.uint8(c) | np.uint8((u >> np.uint32(24))
                                                         & np.uint32(0x80))


_code = _jit(_code_py, inline="always")
kernel = _jit(_kernel_py)
