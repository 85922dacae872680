"""The one place the workload layer touches the knowledge base: build plain objects from it.

:func:`model` turns a ``models`` row into a :class:`~trnkb.workload.models.Model`;
:func:`system` turns a ``racks`` row (a scale-up domain), its chip, its fabric (if the
``fabrics`` table wires one) and the datacenter archetype of its cooling into a
:class:`~trnkb.workload.system.System` of ranged inputs. Every sourced input keeps the
spread of all the values the KB holds for its field and the ids of their sources.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from trnkb.workload.collectives import Network
from trnkb.workload.models import Model
from trnkb.workload.ranges import Input, assumption
from trnkb.workload.system import (
    ASSUMED_CAPEX,
    ASSUMED_POWER,
    ASSUMED_SCALEOUT,
    ASSUMED_SCALEUP,
    PRECISION_FIELDS,
    TDP_OVERHEAD,
    System,
)

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

_INT_FIELDS = ("layers", "d_model", "attention_heads", "kv_heads", "head_dim", "vocabulary",
               "ffn_size", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim",
               "sliding_window", "sliding_layers", "dense_layers", "experts", "active_experts",
               "shared_experts", "expert_ffn_size", "context_length")


def normalise_id(text: str) -> str:
    """``Llama-3.1-70B`` -> ``llama-3-1-70b`` (ids are kebab-case; names carry dots)."""
    return text.strip().lower().replace(".", "-").replace("_", "-").replace(" ", "-")


def model_ids(kb: KnowledgeBase) -> list[str]:
    return list(kb.table("models")["id"])


def system_ids(kb: KnowledgeBase) -> list[str]:
    """The racks the workload layer can model: their chip states HBM capacity and bandwidth
    (an SRAM-only part such as an LPU has no HBM row to build a memory model from)."""
    racks = kb.table("racks")
    return [r for r, chip in zip(racks["id"], racks["chip"], strict=True)
            if kb.get(str(chip), "hbm_capacity") is not None
            and kb.get(str(chip), "hbm_bandwidth") is not None]


def _lookup(kb: KnowledgeBase, table: str, text: str) -> str:
    ids = list(kb.table(table)["id"])
    key = normalise_id(text)
    if key in ids:
        return key
    raise KeyError(f"no {table[:-1]} {text!r}; choose from {', '.join(ids)}")


def model(kb: KnowledgeBase, model_id: str) -> Model:
    """The :class:`Model` of a ``models`` row (``llama-3.1-70b`` and ``llama-3-1-70b`` work)."""
    mid = _lookup(kb, "models", model_id)

    def get(f: str) -> Any:
        return kb.get(mid, f)

    kw: dict[str, Any] = {}
    for f in _INT_FIELDS:
        v = get(f)
        if v is not None:
            kw[f] = int(v.magnitude)
    for f in ("attention", "ffn_kind"):
        if get(f) is not None:
            kw[f] = get(f)
    row = kb.table("models").set_index("id").loc[mid]
    sources = {f: kb.provenance(mid, f)["source"]
               for f in (*_INT_FIELDS, "total_params", "active_params") if get(f) is not None}
    return Model(id=mid, name=str(row["name"]), tied_embeddings=get("tied_embeddings") == "tied",
                 attention_bias=get("attention_bias") == "bias",
                 reported_total=(float(get("total_params").magnitude)
                                 if get("total_params") else None),
                 reported_active=(float(get("active_params").magnitude)
                                  if get("active_params") else None),
                 sources=sources, **kw)


def sourced(kb: KnowledgeBase, row: str, fld: str, unit: str, name: str | None = None,
            scale: float = 1.0) -> Input | None:
    """An :class:`Input` spanning every value the KB holds for ``row.field`` (preferred =
    central)."""
    vals = kb.values(row, fld)
    if vals.empty:
        return None
    mags = [float(v.to(unit).magnitude) * scale for v in vals["value"]]
    srcs = tuple(dict.fromkeys(vals["source"]))
    basis = f"{row}.{fld}: " + ", ".join(srcs)
    # a peak whose source does not say dense or sparse may be a sparse figure: the dense
    # rate could be half of it, so half is the low end of the range (never assumed dense)
    density: Iterable[Any] = vals["density"] if "density" in vals else []
    unstated = [m / 2 for m, d in zip(mags, density, strict=False) if d == "unstated"]
    if unstated:
        basis += (" (dense or sparse not stated: low end = half, the dense rate if it is"
                  " sparse)")
    return Input(name or fld, min(mags + unstated), mags[0], max(mags), unit, "sourced",
                 basis, srcs)


def _power(kb: KnowledgeBase, rack: str, chip: str, per_rack: int | None) -> Input:
    rp = sourced(kb, rack, "rack_power", "W", "chip_power")
    if rp is not None and per_rack:
        return Input("chip_power", rp.lo / per_rack, rp.mid / per_rack, rp.hi / per_rack, "W",
                     "sourced",
                     f"{rack}.rack_power / {per_rack} chips per rack ({', '.join(rp.sources)})",
                     rp.sources)
    tdp = sourced(kb, chip, "tdp", "W", "chip_power")
    if tdp is not None:
        lo, mid, hi, why = TDP_OVERHEAD
        return Input("chip_power", tdp.lo * lo, tdp.mid * mid, tdp.hi * hi, "W",
                     "sourced x assumption",
                     f"{chip}.tdp ({', '.join(tdp.sources)}) x {lo}-{hi} ({why})", tdp.sources)
    if chip in ASSUMED_POWER:
        lo, mid, hi, why = ASSUMED_POWER[chip]
        return assumption("chip_power", lo, mid, hi, "W", why)
    return assumption("chip_power", math.nan, math.nan, math.nan, "W",
                      "unknown: no source, no assumption")


def _pue(kb: KnowledgeBase, rack: str) -> Input:
    cooling = kb.get(rack, "cooling")
    air = kb.get("air-evaporative", "pue_typical")
    dlc = kb.get("dlc-chiller", "pue_peak")
    a = float(air.magnitude) if air is not None else 1.2
    d = float(dlc.magnitude) if dlc is not None else 1.5
    if cooling == "air" and air is not None:
        return Input("pue", a, a, a, "", "sourced", "datacenter air-evaporative.pue_typical "
                     "(rack cooling: air)",
                     (kb.provenance("air-evaporative", "pue_typical")["source"],))
    basis = (f"rack cooling {cooling or 'not given'}: between the air archetype's typical PUE "
             f"{a:g} and the liquid (chiller) archetype's peak PUE {d:g} (datacenter table); "
             "central = midpoint "
             "(assumption)")
    return Input("pue", a, (a + d) / 2, d, "", "sourced x assumption", basis)


def _price(kb: KnowledgeBase, chip: str, owner: bool) -> Input | None:
    """Per chip-hour price range over the ``prices`` rows of ``chip``: the rented offers
    (``owner`` False) or the analysts' owner-cost rows (``owner-tco``). Central = the first
    row listed for the chip (the file lists a vendor's list price first)."""
    if "prices" not in kb.tables:
        return None
    t = kb.table("prices")
    rows = [r for r in t["id"] if kb.get(r, "chip") == chip
            and (kb.get(r, "offer") == "owner-tco") == owner]
    vals: list[float] = []
    label: list[str] = []
    srcs: list[str] = []
    for r in rows:
        per_chip = kb.get(r, "price_per_chip")
        if per_chip is None:
            continue
        vals.append(float(per_chip.to("USD/hour").magnitude))
        prov = kb.provenance(r, "price")
        kind = "" if prov["kind"] == "reported" else f", {prov['kind']}"
        label.append(f"{r} ({prov['source']}{kind})")
        srcs.append(prov["source"])
    if not vals:
        return None
    name = "owner_price" if owner else "cloud_price"
    return Input(name, min(vals), vals[0], max(vals), "USD/h", "sourced",
                 "prices: " + ", ".join(label), tuple(dict.fromkeys(srcs)))


def _torus_dims(topology: str, domain: int) -> tuple[tuple[int, ...], int]:
    if "2d" in topology.lower():
        side = round(math.sqrt(domain))
        return ((side, domain // side) if side > 1 else (domain,)), 2
    return (4, 4, 4, max(1, math.ceil(domain / 64))), 3


def system(kb: KnowledgeBase, rack_id: str, generation: str | None = None) -> System:
    """The :class:`System` of a ``racks`` row; ``generation`` picks a switch generation of its
    fabric.

    Built once per knowledge base and arguments (``kb.memo``: about 30 ms of pandas look-ups
    each, and the ledger, the claims and the site ask for the same racks hundreds of times);
    every call returns its own copy of the mutable parts (``peak``, ``notes``, ``network``).
    """
    key = ("workload.fromkb.system", rack_id, generation)
    if key not in kb.memo:  # not setdefault: that would build the system on every call
        kb.memo[key] = _system(kb, rack_id, generation)
    s: System = kb.memo[key]
    return dataclasses.replace(s, peak=dict(s.peak), notes=list(s.notes),
                               network=dataclasses.replace(s.network))


def _system(kb: KnowledgeBase, rack_id: str, generation: str | None) -> System:
    from trnkb import topology

    rid = _lookup(kb, "racks", rack_id)
    chip = kb.value(rid, "chip")
    row = kb.table("racks").set_index("id").loc[rid]
    domain = int(kb.value(rid, "domain_size").magnitude)
    per_rack = kb.get(rid, "chips_per_rack")
    per_rack = int(per_rack.magnitude) if per_rack is not None else None
    notes: list[str] = []
    peak: dict[str, Input] = {}
    for prec, fields in PRECISION_FIELDS.items():
        for f in fields:
            q = sourced(kb, chip, f, "FLOP/s", "peak_flops")
            if q is not None:
                peak[prec] = q
                break
    hbm_c = sourced(kb, chip, "hbm_capacity", "B")
    hbm_b = sourced(kb, chip, "hbm_bandwidth", "B/s")
    if hbm_c is None or hbm_b is None:
        raise KeyError(f"{chip} needs hbm_capacity and hbm_bandwidth in the knowledge base")
    up = sourced(kb, chip, "scaleup_bandwidth", "B/s", "scaleup_bandwidth") \
        or sourced(kb, chip, "scaleup_bandwidth_bidir", "B/s", "scaleup_bandwidth", 0.5)
    if up is None:
        lo, mid, hi, why = ASSUMED_SCALEUP.get(
            chip, (1e11, 2e11, 4e11, "assumption: no scale-up bandwidth in the KB"))
        up = assumption("scaleup_bandwidth", lo, mid, hi, "B/s", why)
        notes.append(f"{chip}: scale-up bandwidth is an assumption")
    out = sourced(kb, rid, "scaleout_per_chip", "B/s", "scaleout_bandwidth") \
        or sourced(kb, chip, "scaleout_bandwidth", "B/s", "scaleout_bandwidth")
    if out is None:
        out = assumption("scaleout_bandwidth", *ASSUMED_SCALEOUT[:3], "B/s", ASSUMED_SCALEOUT[3])
        notes.append(f"{chip}: scale-out bandwidth is an assumption")
    power = _power(kb, rid, chip, per_rack)
    if power.kind == "assumption":
        notes.append(f"{chip}: power per chip is an assumption")
    lo, mid, hi = ASSUMED_CAPEX.get(chip, (math.nan, math.nan, math.nan))
    capex = Input("capex_per_chip", lo, mid, hi, "USD", "assumption", ASSUMED_CAPEX_BASIS) \
        if not math.isnan(mid) \
        else assumption("capex_per_chip", math.nan, math.nan, math.nan, "USD", "unknown")
    fab = None
    if rid in set(kb.table("fabrics")["domain"]):
        fab = topology.fabric(rid, generation, kb)
    topo = str(kb.get(rid, "topology") or "switched")
    dims, ndim = _torus_dims(topo, domain) if "torus" in topo.lower() else ((), 0)
    net = Network(domain=domain, chip_scaleup=up.mid, scaleout=out.mid, fabric=fab,
                  scaleup_model="torus" if dims else "switch", torus_dims=dims, torus_ndim=ndim)
    return System(id=rid, name=str(row["name"]), chip=chip, vendor=str(row["vendor"]),
                  domain_size=domain,
                  chips_per_rack=per_rack, peak=peak, hbm_capacity=hbm_c, hbm_bandwidth=hbm_b,
                  chip_power=power, pue=_pue(kb, rid), capex=capex, network=net, scaleup_input=up,
                  scaleout_input=out, generation=fab.spec.generation if fab is not None else None,
                  notes=notes, cloud_price=_price(kb, chip, False),
                  owner_price=_price(kb, chip, True))


ASSUMED_CAPEX_BASIS = "placeholder assumption (no public source); set your own with capex_per_chip"
