"""Collective latency per software stack, fitted to published collective benchmarks.

A serving step runs a few collectives per layer on small messages (a decode batch's
activations are kilobytes), so their time is mostly the stack's fixed latency, not the link
bandwidth. :func:`latency_inputs` gives the two inputs :mod:`~trnkb.workload.stepcost` uses:

* ``collective_latency``: seconds of one collective on a tiny message over ``ranks_fit``
  ranks (the intercept ``a`` of ``t = a + b x bytes`` fitted to the benchmark's rows up to
  1 MiB, least squares on relative error);
* ``collective_latency_per_rank``: seconds each further rank adds (from two group sizes of
  the same stack where the benchmark has them, else 0 with a range).

The bandwidth part of a collective stays the network model's
(:class:`~trnkb.workload.collectives.Network`). Fitted to operator-level collective
benchmarks only (never end-to-end runs); each fit keeps its points, source and residual:

* Neuron collectives (Trainium): ``nccom-test`` examples in the Neuron SDK guide
  (aws-neuron/aws-neuron-sdk ``tools/neuron-sys-tools/nccom-test.rst`` at 0f75c1e0): a
  2-rank all-reduce 1 KiB-1 MiB on one instance and a 32-rank all-gather 1 KiB-512 KiB. The
  guide warns the figures are not current, so the range reaches down to half.
* NCCL on NVLink (NVIDIA): ``all_reduce_perf`` 8 x H100 80GB HBM3, one node, in
  NVIDIA/dgxc-benchmarking ``nccl/README.md`` at 46e42015, 8 B-512 KiB (in-place column;
  above that NCCL switches protocol and the line no longer holds).
* RCCL on Infinity Fabric (AMD): ``all_reduce_perf`` (rccl-tests) 8 x MI300X, one node, in
  hisohara/ai-scripts ``training/01_rccl-smoketest/README.md`` at 0780bb3 (AAC8 Kubernetes
  run), 8 B-512 KiB, in-place column.
* Other stacks (TPU ICI): no collective benchmark in the knowledge base yet: an
  assumption.
"""

from __future__ import annotations

import math

import numpy as np

from trnkb.workload.ranges import Input, assumption

# (stack, operation, ranks, bytes, microseconds)
POINTS = (
    # nccom-test.rst: "nccom-test -r 2 --minbytes 1kb --maxbytes 1gb --stepfactor 4 -d fp32 allr"
    ("neuron", "all-reduce", 2, 1024, 58.0), ("neuron", "all-reduce", 2, 4096, 58.0),
    ("neuron", "all-reduce", 2, 16384, 58.0), ("neuron", "all-reduce", 2, 65536, 58.0),
    ("neuron", "all-reduce", 2, 262144, 60.0), ("neuron", "all-reduce", 2, 1048576, 68.0),
    # nccom-test.rst: "nccom-test -r 32 --minbytes 1kb --maxbytes 1mb --stepfactor 8 ... allg"
    ("neuron", "all-gather", 32, 1024, 151.0), ("neuron", "all-gather", 32, 8192, 149.0),
    ("neuron", "all-gather", 32, 65536, 150.0), ("neuron", "all-gather", 32, 524288, 179.0),
    # dgxc-benchmarking nccl/README.md: all_reduce_perf, 8 x H100, in-place time (us)
    ("nccl", "all-reduce", 8, 8, 13.03), ("nccl", "all-reduce", 8, 16, 13.07),
    ("nccl", "all-reduce", 8, 32, 13.52), ("nccl", "all-reduce", 8, 64, 14.72),
    ("nccl", "all-reduce", 8, 128, 15.79), ("nccl", "all-reduce", 8, 256, 15.77),
    ("nccl", "all-reduce", 8, 512, 16.01), ("nccl", "all-reduce", 8, 1024, 16.17),
    ("nccl", "all-reduce", 8, 2048, 16.43), ("nccl", "all-reduce", 8, 4096, 16.46),
    ("nccl", "all-reduce", 8, 8192, 16.83), ("nccl", "all-reduce", 8, 16384, 17.24),
    ("nccl", "all-reduce", 8, 32768, 18.68), ("nccl", "all-reduce", 8, 65536, 18.85),
    ("nccl", "all-reduce", 8, 131072, 19.19), ("nccl", "all-reduce", 8, 262144, 19.50),
    ("nccl", "all-reduce", 8, 524288, 19.70), ("nccl", "all-reduce", 8, 1048576, 26.93),
    # hisohara/ai-scripts rccl-smoketest README: all_reduce_perf, 8 x MI300X, in-place (us)
    ("rccl", "all-reduce", 8, 8, 17.24), ("rccl", "all-reduce", 8, 16, 16.53),
    ("rccl", "all-reduce", 8, 32, 17.33), ("rccl", "all-reduce", 8, 64, 20.95),
    ("rccl", "all-reduce", 8, 128, 24.40), ("rccl", "all-reduce", 8, 256, 23.14),
    ("rccl", "all-reduce", 8, 512, 23.42), ("rccl", "all-reduce", 8, 1024, 14.87),
    ("rccl", "all-reduce", 8, 2048, 13.45), ("rccl", "all-reduce", 8, 4096, 13.33),
    ("rccl", "all-reduce", 8, 8192, 13.42), ("rccl", "all-reduce", 8, 16384, 14.11),
    ("rccl", "all-reduce", 8, 32768, 13.59), ("rccl", "all-reduce", 8, 65536, 13.82),
    ("rccl", "all-reduce", 8, 131072, 15.65), ("rccl", "all-reduce", 8, 262144, 16.88),
    ("rccl", "all-reduce", 8, 524288, 24.75),
)

_SOURCES = {
    "neuron": "aws-neuron/aws-neuron-sdk tools/neuron-sys-tools/nccom-test.rst (0f75c1e0), "
              "nccom-test examples",
    "nccl": "NVIDIA/dgxc-benchmarking nccl/README.md (46e42015), all_reduce_perf 8 x H100",
    "rccl": "hisohara/ai-scripts training/01_rccl-smoketest/README.md (0780bb3), rccl-tests "
            "all_reduce_perf 8 x MI300X",
}


def fit(stack: str, op: str, ranks: int, max_bytes: int = 1 << 20) -> dict[str, float]:
    """``{"a": s, "b": s/B, "rms_residual", "max_residual", "points"}`` of ``t = a + b x
    bytes`` over the points of ``stack``/``op``/``ranks`` up to ``max_bytes`` (residuals
    relative)."""
    pts = [(b, t) for s, o, g, b, t in POINTS
           if (s, o, g) == (stack, op, ranks) and b <= max_bytes]
    if len(pts) < 2:
        raise KeyError(f"no collective benchmark points for {stack} {op} over {ranks} ranks")
    x = np.array([p[0] for p in pts], float)
    y = np.array([p[1] for p in pts], float) * 1e-6
    # least squares on the relative error (each row divided by its time): a log-spaced
    # sweep would otherwise be fitted for its largest messages only
    A = np.vstack([np.ones_like(x), x]).T / y[:, None]
    (a, b), *_ = np.linalg.lstsq(A, np.ones_like(y), rcond=None)
    rel = (a + b * x) / y - 1
    return {"a": float(a), "b": float(b),
            "rms_residual": float(math.sqrt(float(np.mean(rel ** 2)))),
            "max_residual": float(np.max(np.abs(rel))), "points": float(len(pts))}


def stack_of(vendor: str, chip: str) -> str | None:
    """The collective stack a chip runs (``neuron``, ``nccl``, ``rccl``) where we have its
    fit."""
    if chip.startswith("trainium"):
        return "neuron"
    if vendor.lower() == "nvidia":
        return "nccl"
    if vendor.lower() == "amd":
        return "rccl"
    return None


def latency_inputs(vendor: str, chip: str) -> dict[str, Input]:
    """``collective_latency`` and ``collective_latency_per_rank`` for a chip (see the module
    docstring)."""
    stack = stack_of(vendor, chip)
    if stack == "neuron":
        two = fit("neuron", "all-reduce", 2)
        many = fit("neuron", "all-gather", 32)
        per_rank = max((many["a"] - two["a"]) / 30, 0.0)
        base = two["a"] - per_rank * 2
        basis = (f"fit to {_SOURCES['neuron']}: 2-rank all-reduce intercept "
                 f"{two['a'] * 1e6:.1f} us (rms residual {two['rms_residual']:.1%}), 32-rank "
                 f"all-gather {many['a'] * 1e6:.1f} us (rms {many['rms_residual']:.1%}); "
                 "latency = base + per_rank x ranks; the guide calls its figures not "
                 "current, so the range reaches half")
        return {"collective_latency": Input("collective_latency", 0.5 * base, base, base, "s",
                                            "fitted", basis),
                "collective_latency_per_rank": Input("collective_latency_per_rank",
                                                     0.5 * per_rank, per_rank, per_rank, "s",
                                                     "fitted", basis)}
    if stack in ("nccl", "rccl"):
        f = fit(stack, "all-reduce", 8, 1 << 19)  # NCCL changes protocol above 512 KiB
        base = f["a"]
        basis = (f"fit to {_SOURCES[stack]}: 8-rank intercept {base * 1e6:.1f} us (rms "
                 f"residual {f['rms_residual']:.1%}, max {f['max_residual']:.1%}); one group "
                 "size, so no per-rank term is fitted (range 0 to 1 us per rank); "
                 "the range x0.8 to x2 covers other GPUs and library versions")
        return {"collective_latency": Input("collective_latency", 0.8 * base, base, 2 * base,
                                            "s", "fitted", basis),
                "collective_latency_per_rank": Input("collective_latency_per_rank", 0.0, 0.0,
                                                     1e-6, "s", "fitted", basis)}
    why = ("no collective benchmark of this chip's stack in the knowledge base (RCCL, TPU ICI "
           "and others are the rows to add); the range spans the fitted NCCL and Neuron "
           "intercepts")
    return {"collective_latency": assumption("collective_latency", 1e-5, 3e-5, 6e-5, "s", why),
            "collective_latency_per_rank": assumption("collective_latency_per_rank", 0.0, 1e-6,
                                                      3e-6, "s", why)}
