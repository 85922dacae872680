"""``trnkb audit mlsysim``: MLSys·im's hardware registry compared live with the KB.

Reads the installed ``mlsysim`` (an optional extra: ``pip install trnkb[audit]``), looks
up every constant that ``specs/claims/tools.yaml`` maps to a trnkb field (claims with
``tool.name: mlsysim``, key ``Registry:attribute.path``), converts it to trnkb units and
compares it with the KB's preferred value using the claim's tolerance. Each disagreement
names both sources: MLSys·im's file and version, and the KB value's source.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trnkb.units import Q_
from trnkb.units.qtypes import Quantity

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase


class MissingTool(ImportError):
    """The tool to audit is not installed."""


@dataclass
class AuditRow:
    claim: str
    key: str
    kb_field: str
    tool_value: Quantity | None
    kb_value: Quantity | None
    kb_source: str
    agrees: bool
    changed: bool      # the live value differs from the one recorded in tools.yaml
    diagnosis: str = ""


def _to_trnkb(q: Any) -> Quantity:
    """An MLSys·im quantity (its own pint registry) as a trnkb Quantity."""
    if isinstance(q, (int, float)):
        return Q_(q, "")
    dims = str(q.dimensionality)
    if "[flop]" in dims:
        return Q_(q.to_base_units().magnitude, "FLOPS")
    units = str(q.units)
    if "B" in units or "byte" in units:
        per_s = "[time]" in dims
        mag = q.to("byte/second" if per_s else "byte").magnitude
        return Q_(mag, "byte/s" if per_s else "byte")
    base = q.to_base_units()
    return Q_(base.magnitude, base.units)


def mlsysim_value(key: str) -> Quantity | None:
    """The live MLSys·im value for ``Registry:attribute.path`` (e.g.
    ``H100:memory.capacity``), as a trnkb Quantity. Raises MissingTool or KeyError."""
    reg = _import("mlsysim.hardware.registry")
    name, _, path = key.partition(":")
    try:
        obj = getattr(reg.CloudHardware, name)
        for part in path.split("."):
            obj = obj[part] if isinstance(obj, dict) else getattr(obj, part)
    except (AttributeError, KeyError):
        raise KeyError(f"mlsysim has no {key}") from None
    return None if obj is None else _to_trnkb(obj)


def _import(module: str) -> Any:
    """Import ``module`` of mlsysim, keeping trnkb's registry as pint's application registry.

    mlsysim makes its own registry the application registry on import; pint unpickles
    quantities into that one, so every remembered claims evaluation read afterwards in the
    same process (:mod:`trnkb.audit.claims.memo`) would fail on trnkb's units and be
    evaluated again."""
    import pint

    from trnkb.units import ureg

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingTool("mlsysim is not installed (pip install 'trnkb[audit]')") from None
    finally:
        pint.set_application_registry(ureg)  # type: ignore[no-untyped-call]


def audit_mlsysim(kb: KnowledgeBase) -> tuple[str, list[AuditRow]]:
    """(installed mlsysim version, one row per mapped constant)."""
    from trnkb.audit.claims import validate_claims
    from trnkb.audit.claims.diagnose import diagnose

    if importlib.util.find_spec("mlsysim") is None:
        raise MissingTool("mlsysim is not installed (pip install 'trnkb[audit]')")
    claims = validate_claims(kb)
    mls = _import("mlsysim")
    version = str(getattr(mls, "__version__", None) or importlib.metadata.version("mlsysim"))
    rows: list[AuditRow] = []
    for c in claims:
        if c.kind != "tool" or c.tool.get("name") != "mlsysim" or c.computed is None:
            continue
        live = mlsysim_value(c.tool["key"])
        kb_val = c.computed
        src = str(next((i.get("source") for i in c.inputs if "kb" in i), "") or "")
        field = next((i["kb"] for i in c.inputs if "kb" in i), "")
        if live is None:
            rows.append(AuditRow(c.id, c.tool["key"], field, None, kb_val, src, False, True,
                                 "no longer in mlsysim"))
            continue
        lv = live.to(kb_val.units).magnitude
        agrees = abs(lv - kb_val.magnitude) <= (c.tolerance or 0) * abs(kb_val.magnitude)
        changed = abs(lv - c.claimed.to(kb_val.units).magnitude) > 1e-9 * max(abs(lv), 1)
        rows.append(AuditRow(c.id, c.tool["key"], field, live.to(kb_val.units), kb_val, src,
                             agrees, changed, "" if agrees else diagnose(c, kb)))
    return version, rows
