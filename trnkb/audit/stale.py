"""Currency check: values a newer source may have overtaken, and rows still ``announced``
that the knowledge base itself shows in use.

Two lists, both computed from the loaded knowledge base (nothing is fetched):

- **older values** (:func:`older_values`): a typed value (reported or estimate) whose
  source is older than another source *of the same kind* that the same row cites, either
  for the same field (``same-field``: the newer source restates the field, so the older
  value is kept only as history) or, for the same publisher, for another field of the row
  (``same-publisher``: the publisher has a newer page for this system that we have not
  read for this field). Dates are compared at the precision of the coarser one: ``2026``
  is not older than ``2026-05``.
- **announced rows in use** (:func:`announced_in_use`): a row whose status is
  ``announced`` although a shipping system row names it as its chip or host CPU, a cloud
  price row rents it, or a device string row shows a framework printing its name.

Derived values are skipped: their date is their inputs' (``trnkb check`` covers them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

# tables whose ref fields name a chip that a shipping row therefore uses
_USES = {"racks": ("chip", "host_cpu"), "prices": ("chip",), "devices": ("chip",)}


def _older(a: str, b: str) -> bool:
    """Date ``a`` strictly before ``b`` at the coarser of their precisions
    (YYYY, YYYY-MM or YYYY-MM-DD)."""
    n = min(len(a), len(b))
    return a[:n] < b[:n]


def _better(reason: str, date: str, best: tuple[str, dict[str, Any]],
            src: dict[str, dict[str, Any]]) -> bool:
    """A same-field newer source beats a same-publisher one; then the newest wins."""
    if reason != best[0]:
        return reason == "same-field"
    return date > str(src[best[1]["source"]]["date"])


def older_values(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """One entry per typed value with a newer same-kind source on its row (see module doc).

    Keys: ``table, id, field, source, date, kind, newer_source, newer_date, reason,
    preferred``.
    """
    src: dict[str, dict[str, Any]] = {
        str(s["id"]): {str(k): v for k, v in s.items()} for s in kb.sources.to_dict("records")}
    facts = kb.facts[kb.facts["kind"].isin(("reported", "estimate"))]
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for raw in facts[["table", "id", "field", "source", "preferred"]].to_dict("records"):
        rec = {str(k): v for k, v in raw.items()}
        rows.setdefault((str(rec["table"]), str(rec["id"])), []).append(rec)
    out = []
    for (table, rid), recs in sorted(rows.items()):
        for rec in recs:
            s = src[rec["source"]]
            best: tuple[str, dict[str, Any]] | None = None
            for other in recs:
                o = src[other["source"]]
                if o["id"] == s["id"] or o["kind"] != s["kind"]:
                    continue
                if not _older(str(s["date"]), str(o["date"])):
                    continue
                if other["field"] == rec["field"]:
                    reason = "same-field"
                elif o["publisher"] == s["publisher"]:
                    reason = "same-publisher"
                else:
                    continue
                if best is None or _better(reason, str(o["date"]), best, src):
                    best = (reason, other)
            if best is None:
                continue
            newer = src[best[1]["source"]]
            out.append({"table": table, "id": rid, "field": rec["field"],
                        "source": s["id"], "date": str(s["date"]), "kind": s["kind"],
                        "newer_source": newer["id"], "newer_date": str(newer["date"]),
                        "reason": best[0], "preferred": bool(rec["preferred"])})
    return out


def announced_in_use(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """Rows marked ``announced`` that a shipping system, a price or a device string names.

    Keys: ``table, id, evidence`` (``evidence``: list of ``"<table> <row>.<field>"``).
    """
    status: dict[str, str] = {}
    for name in ("chips", "racks"):
        if name in kb.tables:
            for rec in kb.table(name).to_dict("records"):
                status[str(rec["id"])] = str(rec.get("status", ""))
    found: dict[str, list[str]] = {}
    for table, fields in _USES.items():
        if table not in kb.tables:
            continue
        wide = kb.table(table)
        for rec in wide.to_dict("records"):
            if table == "racks" and rec.get("status") != "shipping":
                continue
            for f in fields:
                target = rec.get(f)
                if isinstance(target, str) and status.get(target) == "announced":
                    found.setdefault(target, []).append(f"{table} {rec['id']}.{f}")
    return [{"table": kb.table_of(rid), "id": rid, "evidence": sorted(ev)}
            for rid, ev in sorted(found.items())]


def stale(kb: KnowledgeBase) -> dict[str, Any]:
    """Both lists: ``{"older_values": [...], "announced_in_use": [...]}``."""
    return {"older_values": older_values(kb), "announced_in_use": announced_in_use(kb)}
