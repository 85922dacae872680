"""The perf-per-TCO thesis test (notebook 10): tables, sentences and charts, all computed.

:func:`serving` puts every system at the operating point that meets a tokens/s-per-user
target (:func:`trnkb.workload.fleet.operating_point`) for a dense and a MoE model, in the
owner view and, where the chip has a rented price, the cloud view. :func:`versus` compares
Trainium3 with each competitor through :func:`trnkb.workload.versus.ratio_range` (shared
assumptions tied) and says "cheaper", "dearer" or "indistinguishable within the ranges".
:func:`breakeven_capex` solves for the Trainium3 capex at which its owner $/Mtok equals a
competitor's (the input that flips the answer). :func:`verdict` writes the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import altair as alt
import pandas as pd

from trnkb.views.charts import WIDTH
from trnkb.views.display import labels, names
from trnkb.workload import fromkb
from trnkb.workload.cost import HOURS_PER_YEAR, range_shares
from trnkb.workload.fleet import (
    cost_target,
    load_of,
    operating_point,
    per_user,
    plan_fleet,
    train_plan,
)
from trnkb.workload.prices import price_rows
from trnkb.workload.versus import ratio_range

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase
    from trnkb.workload.result import WorkloadResult

TRN3 = "trn3-nl72x2-switched"
SYSTEMS = (TRN3, "trn3-nl32x2-switched", "gb300-nvl72", "gb200-nvl72", "mi355x-8",
           "mi450x-ualoe72", "tpu-v7-pod")
MODELS = {"dense": "llama-3.1-405b", "moe": "deepseek-v3"}
# One name per system everywhere in the notebook (Helios is the rack, MI455X its GPU).
_LABEL = {"mi450x-ualoe72": "AMD Helios (MI455X)"}


def _labels(kb: KnowledgeBase, ids: Sequence[str]) -> dict[str, str]:
    return {i: _LABEL.get(i, lab) for i, lab in zip(ids, labels(list(ids), kb), strict=True)}


def serving(kb: KnowledgeBase, target: float = 30.0, precision: str = "fp8",
            systems: Sequence[str] = SYSTEMS, models: dict[str, str] = MODELS,
            engine: str = "simulate") -> pd.DataFrame:
    """One row per model x system x pricing view at the operating point meeting ``target``
    tokens/s per user; results kept in ``attrs["results"]`` for :func:`versus`."""
    rows, results = [], {}
    lab = _labels(kb, systems)
    for kind, mid in models.items():
        m = fromkb.model(kb, mid)
        for sid in systems:
            s = fromkb.system(kb, sid)
            for pricing in ("owner", "cloud"):
                if pricing == "cloud" and s.cloud_price is None:
                    continue
                r, ok = operating_point(m, s, target, precision, pricing=pricing,
                                        engine=engine)
                results[(kind, sid, pricing)] = r
                usd, mw = r["usd_per_million_tokens"], r["tokens_per_s_per_mw"]
                rack = s.chips_per_rack or s.domain_size
                tps = r["tokens_per_s_per_chip"]
                rows.append({"model": kind, "model_id": m.id, "system": lab[sid], "id": sid,
                             "pricing": pricing, "load": load_of(r),
                             "chips": r.chips, "reached": ok,
                             "tokens_per_s_per_user": per_user(r),
                             "tokens_per_s_per_chip": tps.mid,
                             "tokens_per_s_per_rack": tps.mid * rack,
                             "tokens_per_s_per_mw": mw.mid, "mw_low": mw.lo, "mw_high": mw.hi,
                             "usd_per_mtok": usd.mid, "usd_low": usd.lo, "usd_high": usd.hi,
                             **_inputs_of(r)})
    df = pd.DataFrame(rows)
    df.attrs.update(results=results, target=target, precision=precision, models=models,
                    engine=engine)
    return df


_TCO_KEYS = ("capex_per_chip", "chip_power", "pue", "power_price", "utilisation",
             "depreciation_years", "cost_of_capital", "opex_fraction")


def _split(kinds: dict[str, str]) -> dict[str, str]:
    """``sourced_inputs`` (sourced values, and constants fitted to declared measurements,
    marked) and ``assumed_inputs`` (named assumptions, and sourced values scaled by one) from
    input -> kind, in the given order."""
    src = [k + (" (fitted)" if v == "fitted" else "") for k, v in kinds.items()
           if v in ("sourced", "fitted")]
    ass = [k + (" (sourced x assumption)" if v == "sourced x assumption" else "")
           for k, v in kinds.items() if v in ("assumption", "sourced x assumption")]
    return {"sourced_inputs": ", ".join(src) or "none",
            "assumed_inputs": ", ".join(ass) or "none"}


def _inputs_of(r: WorkloadResult) -> dict[str, str]:
    """Every input a result's $/Mtok rests on: the ones moving its range (largest share
    first), then the hourly rate's own inputs (the price a renter pays; an analyst's owner
    cost and utilisation; or the TCO formula's inputs), split by :func:`_split`."""
    names = [x["input"] for x in range_shares(r, "usd_per_million_tokens")]
    rate = (("cloud_price",) if "cloud_price" in r.inputs else
            ("owner_price", "utilisation") if "owner_price" in r.inputs else _TCO_KEYS)
    names += [k for k in rate if k in r.inputs and k not in names]
    return _split({k: r.inputs[k].kind for k in names if k in r.inputs})


def _shares_split(shares: list[dict[str, Any]]) -> dict[str, str]:
    """:func:`_split` of a ``range_shares`` list (the inputs moving a planner figure)."""
    return _split({x["input"]: x["kind"] for x in shares})


def _call(v: Any) -> str:
    if v.high < 1:
        return "Trainium3 cheaper"
    if v.low > 1:
        return "Trainium3 dearer"
    return "indistinguishable within the ranges"


def versus(df: pd.DataFrame, metric: str = "usd_per_million_tokens") -> pd.DataFrame:
    """Trainium3 NL72x2 / each other system, per model and view: the ratio range, the call
    and the input that moves the ratio most (with its kind)."""
    res: dict[tuple[str, str, str], WorkloadResult] = df.attrs["results"]
    names_ = dict(zip(df["id"], df["system"], strict=False))
    rows = []
    for (kind, sid, pricing), r in res.items():
        if sid == TRN3 or (kind, TRN3, pricing) not in res:
            continue
        v = ratio_range(res[(kind, TRN3, pricing)], r, metric)
        top = v.drivers[0] if v.drivers else ("none", "", 1.0, 1.0)
        rows.append({"model": kind, "versus": names_[sid], "pricing": pricing,
                     "ratio": v.central, "low": v.low, "high": v.high, "call": _call(v),
                     "decided_by": f"{top[0]} ({top[1]})"})
    return pd.DataFrame(rows)


def breakeven_capex(df: pd.DataFrame, kind: str = "dense") -> pd.DataFrame:
    """The Trainium3 capex per chip (USD, central inputs otherwise) at which its owner-view
    $/Mtok equals each competitor's central owner-view $/Mtok: above it the competitor is
    cheaper. $/Mtok is linear in the hourly cost, which is linear in capex:
    ``hourly x 8766 x util = capex x (annuity + opex_fraction) + energy per year``."""
    res = df.attrs["results"]
    t = res[(kind, TRN3, "owner")]
    v = {k: i.mid for k, i in t.inputs.items()}
    r_, n = v["cost_of_capital"], v["depreciation_years"]
    annuity = r_ / (1 - (1 + r_) ** -n) if r_ else 1 / n
    energy = v["chip_power"] / 1000 * v["pue"] * v["power_price"] * HOURS_PER_YEAR
    tok_h = t.breakdown["tokens_per_s_per_chip"] * 3600
    rows = []
    for (k, sid, pricing), r in res.items():
        if k != kind or pricing != "owner" or sid == TRN3:
            continue
        hourly = r.breakdown["usd_per_million_tokens"] * tok_h / 1e6
        capex = (hourly * HOURS_PER_YEAR * v["utilisation"] - energy) / (annuity
                                                                         + v["opex_fraction"])
        rows.append({"versus": dict(zip(df["id"], df["system"], strict=False))[sid],
                     "breakeven_capex_usd": capex, "assumed_capex_usd": v["capex_per_chip"]})
    return pd.DataFrame(rows)


_WORDS = {"peak_flops": "Trainium3's peak FLOP/s (sourced, but no source says dense or sparse, "
                        "so the low end is half)",
          "capex_per_chip": "capex per chip (an assumption)",
          "utilisation": "utilisation (an assumption)",
          "prefill_mfu": "prefill MFU (an assumption)"}


def _words(decided_by: str) -> str:
    """``peak_flops (sourced)`` for a reader."""
    return _WORDS.get(decided_by.split(" (")[0], decided_by.replace("_", " "))


def _deciding(own: pd.DataFrame) -> str:
    """The input deciding most comparisons, without its side marker."""
    return str(own["decided_by"].str.replace(r" \((A|B)\)", "", regex=True)
               .value_counts().index[0])


def verdict(df: pd.DataFrame, vs: pd.DataFrame, be: pd.DataFrame) -> list[str]:
    """The notebook's answer in three sentences, every number computed from the tables."""
    own = vs[vs["pricing"] == "owner"]
    n, c = len(own), own["ratio"]
    undecided = int((own["call"] == "indistinguishable within the ranges").sum())
    sep = own[own["call"] != "indistinguishable within the ranges"]
    first = (f"Not established by public data: at {df.attrs['target']:g} or more tokens/s per "
             f"user, {undecided} of {n} owner-view comparisons of Trainium3 NL72x2 with its "
             f"competitors (dense and MoE serving) are indistinguishable within the ranges, "
             f"although its central $/Mtok is {c.min():.2f}x to {c.max():.2f}x theirs")
    if len(sep):
        by = {v: sorted({f"{r.model}: {r.call}" for r in sep.itertuples() if r.versus == v})
              for v in dict.fromkeys(sep["versus"])}
        first += "; the ranges separate only against " + ", ".join(
            f"{v} ({', '.join(calls)})" for v, calls in by.items())
    b = be.set_index("versus")["breakeven_capex_usd"]
    pos, neg = b[b > 0], b[b <= 0]
    deciding = _deciding(own)
    lead = ("The comparisons turn on Trainium3's capex" if deciding.startswith("capex")
            else f"The comparisons turn on {_words(deciding)} and on Trainium3's capex")
    second = f"{lead}, which has no public source"
    if len(pos):
        second += (f": at central inputs Trainium3 is the cheaper system only while its capex "
                   f"per chip stays under a break-even of ${pos.min():,.0f} (against "
                   f"{pos.idxmin()}) to ${pos.max():,.0f} (against {pos.idxmax()}), against "
                   f"an assumed ${be['assumed_capex_usd'].iloc[0]:,.0f}")
    if len(neg):
        second += ("; no capex, not even zero, makes it cheaper than " + ", ".join(neg.index))
    third = ("In the cloud view Trainium3 has no published price, so a renter's version of the "
             "claim cannot be tested at all")
    return [first + ".", second + ".", third + "."]


def rests_on(df: pd.DataFrame, kind: str = "dense", top: int = 4,
             pricing: str = "owner") -> pd.DataFrame:
    """Per system (one pricing view): the inputs its $/Mtok range rests on, sourced or
    assumed, with their share of the range."""
    rows = []
    for (k, sid, view), r in df.attrs["results"].items():
        if k != kind or view != pricing:
            continue
        name = dict(zip(df["id"], df["system"], strict=False))[sid]
        for s in range_shares(r, "usd_per_million_tokens")[:top]:
            rows.append({"system": name, "input": s["input"], "kind": s["kind"],
                         "share_of_range": round(s["share"], 2),
                         "sources": ", ".join(s["sources"]) or "-"})
    return pd.DataFrame(rows)


def range_chart(df: pd.DataFrame, value: str, low: str, high: str, *, title: str,
                value_title: str, log: bool = True) -> alt.LayerChart:
    """A dot at the central value and a bar from low to high; one row per system, colour per
    model, shape per pricing view. Sources go under the chart (:func:`sources_below`)."""
    d = df[["system", "model", "pricing", value, low, high]].rename(
        columns={value: "central", low: "low", high: "high"})
    scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
    y = alt.Y("system:N", title=None, sort=list(dict.fromkeys(d["system"])))
    off = alt.YOffset("series:N")
    d = d.assign(series=d["model"] + " / " + d["pricing"])
    color = alt.Color("series:N", title="model / view")
    bars = alt.Chart(d).mark_rule(strokeWidth=3, opacity=0.6).encode(
        x=alt.X("low:Q", title=value_title, scale=scale), x2="high:Q", y=y, yOffset=off,
        color=color)
    dots = alt.Chart(d).mark_point(filled=True, size=50).encode(
        x=alt.X("central:Q", scale=scale), y=y, yOffset=off, color=color)
    chart: alt.LayerChart = (bars + dots).properties(
        width=WIDTH, title=alt.TitleParams(title, anchor="start"))
    return chart


def sources_below(kb: KnowledgeBase, ids: Iterable[str]) -> str:
    """Markdown line of source links for under a chart: ``Sources: [id](url); ...``."""
    src = kb.sources.set_index("id")
    parts = []
    for i in sorted(set(ids)):
        url = str(src.loc[i, "url"]) if i in src.index else ""
        parts.append(f"[{i}]({url})" if url.startswith("http") else i)
    return "Sources: " + "; ".join(parts)


def chart_sources(kb: KnowledgeBase, df: pd.DataFrame) -> list[str]:
    """Every source behind the serving results of ``df`` (inputs with sources, and prices)."""
    ids: set[str] = set()
    for r in df.attrs["results"].values():
        for i in r.inputs.values():
            ids |= set(i.sources)
    return sorted(ids)


def prices(kb: KnowledgeBase, systems: Sequence[str] = SYSTEMS) -> pd.DataFrame:
    """Per chip of ``systems``: how many prices, the cloud range and the owner range per
    chip-hour, and their sources (the conflict between them shown, not averaged)."""
    rows = []
    lab = _labels(kb, systems)
    for sid in systems:
        s = fromkb.system(kb, sid)
        pr = price_rows(kb, s.chip)
        for view in ("cloud", "owner"):
            p = [r for r in pr if r["view"] == view]
            rows.append({"system": lab[sid], "chip": names(kb).get(s.chip, s.chip),
                         "view": view, "prices": len(p),
                         "usd_per_chip_hour_low": min((r["price_per_chip_usd_per_hour"]
                                                       for r in p), default=None),
                         "usd_per_chip_hour_high": max((r["price_per_chip_usd_per_hour"]
                                                        for r in p), default=None),
                         "sources": ", ".join(sorted({f"{r['source']} ({r['date']})"
                                                      for r in p})) or "none published"})
    return pd.DataFrame(rows)


def power_check(kb: KnowledgeBase) -> pd.DataFrame:
    """The model's facility watts per chip (chip power x PUE range) against each published
    all-in provisioned figure (:func:`trnkb.audit.energy_validation.allin_check`)."""
    from trnkb.audit.energy_validation import allin_check

    return pd.DataFrame(allin_check(kb))


def energy_check(kb: KnowledgeBase) -> pd.DataFrame:
    """Measured J/token (MLPerf Inference Power) against the model's J/token
    (:func:`trnkb.audit.energy_validation.measured_energy`)."""
    from trnkb.audit.energy_validation import measured_energy

    cols = ["run", "model", "scenario", "measured_w_per_chip", "tokens_per_s",
            "measured_j_per_token", "model_j_low", "model_j_central", "model_j_high", "within",
            "miss", "source"]
    return pd.DataFrame(measured_energy(kb))[cols]


def fleet(kb: KnowledgeBase, power_mw: float = 50, target: float = 30.0,
          kind: str = "dense", systems: Sequence[str] = SYSTEMS) -> pd.DataFrame:
    """:func:`trnkb.workload.fleet.plan_fleet` for each system (owner view)."""
    m = fromkb.model(kb, MODELS[kind])
    lab = _labels(kb, systems)
    rows = []
    for sid in systems:
        r = plan_fleet(m, fromkb.system(kb, sid), power_mw, target, "fp8")
        rows.append({"system": lab[sid], "racks": r["racks"]["central"],
                     "racks_low": r["racks"]["low"], "racks_high": r["racks"]["high"],
                     "tokens_per_s": r["fleet_tokens_per_s"]["central"],
                     "tokens_per_s_low": r["fleet_tokens_per_s"]["low"],
                     "tokens_per_s_high": r["fleet_tokens_per_s"]["high"],
                     "usd_per_mtok": r["usd_per_million_tokens"]["central"],
                     "reached": r["reachable"],
                     **_shares_split(r["usd_per_million_tokens_rests_on"])})
    return pd.DataFrame(rows)


def cost_targets(kb: KnowledgeBase, max_usd_per_mtok: float = 1.0, kind: str = "dense",
                 systems: Sequence[str] = SYSTEMS) -> pd.DataFrame:
    """:func:`trnkb.workload.fleet.cost_target` for each system (owner view): the tokens/s per
    user reachable at or under the ceiling, central, optimistic and pessimistic (None: not
    reachable)."""
    m = fromkb.model(kb, MODELS[kind])
    lab = _labels(kb, systems)
    rows = []
    for sid in systems:
        r = cost_target(m, fromkb.system(kb, sid), max_usd_per_mtok, "fp8")
        t = r["tokens_per_s_per_user"]
        top = r["rests_on"][0] if r["rests_on"] else {"input": "-", "kind": ""}
        rows.append({"system": lab[sid], "tokens_per_s_per_user": t["central"],
                     "optimistic": t["optimistic"], "pessimistic": t["pessimistic"],
                     "usd_decided_by": f"{top['input']} ({top['kind']})",
                     **_shares_split(r["rests_on"])})
    return pd.DataFrame(rows)


def training(kb: KnowledgeBase, tokens: float = 15e12, days: float = 90.0,
             kind: str = "dense", systems: Sequence[str] = SYSTEMS,
             precision: str = "fp8") -> pd.DataFrame:
    """:func:`trnkb.workload.fleet.train_plan` for each system (owner view); systems no plan
    fits are listed with the reason."""
    m = fromkb.model(kb, MODELS[kind])
    lab = _labels(kb, systems)
    rows = []
    for sid in systems:
        s = fromkb.system(kb, sid)
        try:
            r = train_plan(m, s, tokens, days, s.fallback_precision(precision))
        except ValueError as e:
            rows.append({"system": lab[sid], "note": str(e)})
            continue
        rows.append({"system": lab[sid], "chips": r["chips"], "racks": r["racks"],
                     "days": r["days"]["central"], "cost_musd": r["cost_usd"]["central"] / 1e6,
                     "cost_musd_low": r["cost_usd"]["low"] / 1e6,
                     "cost_musd_high": r["cost_usd"]["high"] / 1e6,
                     "energy_gwh": r["energy_mwh"]["central"] / 1e3,
                     "cost_decided_by": r["cost_rests_on"][0]["input"] + " ("
                     + r["cost_rests_on"][0]["kind"] + ")", "note": "",
                     **_shares_split(r["cost_rests_on"])})
    return pd.DataFrame(rows)



