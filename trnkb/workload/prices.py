"""Every price in the knowledge base as one flat row: instance price, chips, derived price per
chip-hour, offer, which pricing view uses it, source, source date, kind.

What ``trnkb prices`` prints; the workload views read the same rows through
:func:`trnkb.workload.fromkb.system` (``cloud_price`` / ``owner_price``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase


def view_of(offer: str | None) -> str:
    """The pricing view a row feeds: ``owner`` for an analyst's owner cost, else ``cloud``."""
    return "owner" if offer == "owner-tco" else "cloud"


def price_rows(kb: KnowledgeBase, chip: str | None = None) -> list[dict[str, Any]]:
    """One dict per ``prices`` row (of ``chip`` if given), in file order; prices in USD/h."""
    if "prices" not in kb.tables:
        return []
    dates = dict(zip(kb.sources["id"], kb.sources["date"], strict=False))
    urls = dict(zip(kb.sources["id"], kb.sources["url"], strict=False))
    out = []
    for rid in kb.table("prices")["id"]:
        c = kb.get(rid, "chip")
        if chip is not None and c != chip:
            continue
        prov = kb.provenance(rid, "price")
        price, per_chip = kb.get(rid, "price"), kb.get(rid, "price_per_chip")
        n = kb.get(rid, "chips_per_instance")
        offer = kb.get(rid, "offer")
        out.append({
            "id": rid, "chip": c, "instance": kb.get(rid, "instance"), "offer": offer,
            "view": view_of(offer),
            "chips_per_instance": int(n.magnitude) if n is not None else None,
            "price_usd_per_hour": float(price.to("USD/hour").magnitude) if price is not None
            else None,
            "price_per_chip_usd_per_hour": float(per_chip.to("USD/hour").magnitude)
            if per_chip is not None else None,
            "kind": prov["kind"], "qualifier": prov.get("qualifier") or "",
            "source": prov["source"], "date": str(dates.get(prov["source"], "")),
            "url": urls.get(prov["source"], ""), "locator": prov["locator"],
            "note": prov.get("note") or "",
        })
    return out
