"""Perf-per-TCO claims: two systems' ranges compared, with the deciding input named.

A ``kind: tco`` claim asks the workload layer the same question on two systems and compares
their ranges::

    tco:
      call: serve                      # or train
      metric: usd_per_million_tokens   # any ranged metric of the result
      pricing: owner                   # owner | cloud
      args: {model: llama-3.1-70b, precision: fp8, input_len: 2048, output_len: 512}
      a: {system: trn3-nl72x2-switched, chips: 8, batch: 256}   # optional: precision
      b: {system: gb200-nvl72, chips: 8, batch: 256}
    compare: "<"                       # A below B; ">" A above B; "~" comparable
    claimed: 1                         # the ratio A / B the comparison is about
    tolerance: 0.25                    # "~" only

Verdict from the range of the ratio A / B (:func:`trnkb.workload.versus.ratio_range`: shared
assumptions tied, so a wide utilisation that moves both sides alike does not blur the
comparison), never from the central value alone: ``<`` is supported when the whole ratio
range is below ``claimed``, contradicted when it is all above, and unverifiable ("indistin-
guishable within the ranges") otherwise, the reason naming the input that moves the ratio
most and whether it is sourced or an assumption: the input that would have to be pinned
down to decide. ``~`` is contradicted when the range excludes ``claimed``, supported when
the whole range is within the tolerance of it, unverifiable otherwise. The computed value
is the ratio range.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from trnkb.audit.claims.operations import ClaimError
from trnkb.kb.expressions import Inputs
from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

_CACHE: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def _run(kb: KnowledgeBase, call: str, pricing: str, args: dict[str, Any],
         side: dict[str, Any]) -> Any:
    from trnkb import workload as W

    key = repr((call, pricing, sorted(args.items()), sorted(side.items())))
    cache = _CACHE.setdefault(kb, {})
    if key in cache:
        return cache[key]
    kw = {k: v for k, v in args.items() if k != "model"}
    if "precision" in side:  # each side at its own best format (e.g. MXFP8 vs FP8)
        kw["precision"] = side["precision"]
    m, s = W.model(kb, str(args["model"])), W.system(kb, str(side["system"]))
    if call == "serve":
        r = W.serve(m, s, int(side["chips"]), int(side["batch"]), int(kw.pop("input_len", 2048)),
                    int(kw.pop("output_len", 512)), curve=False, pricing=pricing, **kw)
    else:
        r = W.train(m, s, int(side["chips"]), side.get("plan"), float(kw.pop("tokens", 15e12)),
                    pricing=pricing, **kw)
    cache[key] = r
    return r


def evaluate_tco(item: dict[str, Any], kb: KnowledgeBase, where: str, claimed: Any = None
                 ) -> tuple[tuple[Quantity, Quantity] | None, str, str, Inputs]:
    """(ratio range A/B, verdict, reason, inputs) for one ``kind: tco`` claim."""
    spec = item.get("tco")
    if not isinstance(spec, dict) or not {"metric", "args", "a", "b"} <= set(spec):
        raise ClaimError(f"{where}: a tco claim needs tco: {{call, metric, args, a, b}}")
    call, op = str(spec.get("call", "serve")), item.get("compare")
    if call not in ("serve", "train") or op not in ("<", ">", "~"):
        raise ClaimError(f"{where}: tco needs call serve|train and compare <, > or ~")
    tol = item.get("tolerance")
    if op == "~" and not (isinstance(tol, (int, float)) and 0 < tol < 1):
        raise ClaimError(f"{where}: '~' needs a relative tolerance between 0 and 1")
    metric, pricing = str(spec["metric"]), str(spec.get("pricing", "owner"))
    try:
        ra = _run(kb, call, pricing, dict(spec["args"]), dict(spec["a"]))
        rb = _run(kb, call, pricing, dict(spec["args"]), dict(spec["b"]))
        a, b = ra.metrics[metric], rb.metrics[metric]
    except (KeyError, ValueError) as e:
        msg = e.args[0] if e.args else type(e).__name__
        return None, "unverifiable", f"the workload layer could not answer: {msg}", []
    from trnkb.workload.versus import ratio_range

    v = ratio_range(ra, rb, metric)
    inputs: Inputs = [
        {"workload": call, "system": side["system"], "metric": metric, "pricing": pricing,
         "low": r.lo, "central": r.mid, "high": r.hi, "unit": r.unit}
        for side, r in ((spec["a"], a), (spec["b"], b))]
    inputs.append({"ratio": "A / B", **v.to_dict()})
    c = float(claimed.to("").magnitude) if claimed is not None else 1.0
    ratio = (Q_(v.low, ""), Q_(v.high, ""))
    show = f"A/B {v.central:.2f} ({v.low:.2f} to {v.high:.2f}) against {c:g}"
    top = v.drivers[0] if v.drivers else None
    deciding = (f"deciding input: {top[0]} ({top[1]}), ratio x{top[2]:.2f} to x{top[3]:.2f}"
                if top else "no input moves it")
    if op == "~":
        tol = float(tol or 0.0)
        if not v.low <= c <= v.high:
            return ratio, "contradicted", f"the ratio range excludes {c:g} ({show})", inputs
        if c * (1 - tol) <= v.low and v.high <= c * (1 + tol):
            return ratio, "supported", f"the whole ratio range is within {tol:.0%} ({show})", \
                inputs
        return ratio, "unverifiable", f"the range holds {c:g} but is wider than {tol:.0%} " \
                                      f"({show}); {deciding}", inputs
    below, above = v.high < c, v.low > c
    if (op == "<" and below) or (op == ">" and above):
        return ratio, "supported", f"the whole ratio range is on the claimed side ({show})", \
            inputs
    if (op == "<" and above) or (op == ">" and below):
        return ratio, "contradicted", f"the whole ratio range is on the other side ({show})", \
            inputs
    return ratio, "unverifiable", f"indistinguishable within the ranges ({show}); {deciding}", \
        inputs
