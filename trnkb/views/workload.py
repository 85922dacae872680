"""Comparison views of workloads across systems: ranged tables and range charts (notebook 10).

:func:`perf_per_tco` trains and serves one dense and one MoE model on each system and
returns a long table (one row per system x model x task x metric, with central, low and high
values and the inputs that move each most); :func:`range_chart` draws one metric as a dot at
the central value and a bar from low to high.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import altair as alt
import pandas as pd

from trnkb.units import format_number
from trnkb.views.charts import WIDTH, caption
from trnkb.views.display import labels, names
from trnkb.workload import fromkb
from trnkb.workload.serving import serve
from trnkb.workload.training import train

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase
    from trnkb.workload.plan import Plan
    from trnkb.workload.ranges import Ranged
    from trnkb.workload.result import WorkloadResult
    from trnkb.workload.system import System

SYSTEMS = ("trn3-nl72x2-switched", "gb300-nvl72", "mi355x-8", "mi450x-ualoe72", "tpu-v7-pod")
MODELS = {"dense": "llama-3-1-405b", "moe": "deepseek-v3"}

_METRICS = (  # (column, unit, metric of the result, scale by chips per rack)
    ("tokens_per_s_per_chip", "tokens/s", "tokens_per_s_per_chip", False),
    ("tokens_per_s_per_rack", "tokens/s", "tokens_per_s_per_chip", True),
    ("tokens_per_s_per_mw", "tokens/s per MW of facility power", "tokens_per_s_per_mw", False),
    ("tokens_per_usd", "tokens per USD", "tokens_per_usd", False),
)


def _row(res: WorkloadResult, task: str, kind: str, system: System, metric: str, unit: str,
         r: Ranged, scale: float = 1.0) -> dict[str, Any]:
    return {"system": system.id, "chip": system.chip, "model": res.model, "kind": kind,
            "task": task, "metric": metric, "unit": unit, "central": r.mid * scale,
            "low": r.lo * scale,
            "high": r.hi * scale, "moved_most_by": ", ".join(d[0] for d in r.drivers[:3])}


def _rows(res: WorkloadResult, task: str, kind: str, system: System) -> list[dict[str, Any]]:
    """Per chip, per rack, per MW and per dollar figures of one result, plus days or TPOT."""
    rack = system.chips_per_rack or math.nan
    out = [_row(res, task, kind, system, col, unit, res[name], rack if per_rack else 1.0)
           for col, unit, name, per_rack in _METRICS]
    if task == "train":
        out.append(_row(res, task, kind, system, "days", "days", res["days"]))
    else:
        out.append(_row(res, task, kind, system, "tpot_ms", "ms", res["tpot"], 1e3))
    return out


def perf_per_tco(kb: KnowledgeBase, systems: Sequence[str] = SYSTEMS,
                 models: Mapping[str, str] = MODELS, *, train_chips: int = 4096,
                 tokens: float = 15e12, serve_chips: int = 16, batch: int = 128,
                 input_len: int = 2048, output_len: int = 512,
                 precision: str = "fp8") -> pd.DataFrame:
    """Long table of training and serving figures per system and model (see the module docstring).

    Training uses the fastest plan that fits; serving one replica of ``serve_chips`` chips.
    """
    rows: list[dict[str, Any]] = []
    notes: dict[str, list[str]] = {}
    peaks: dict[str, tuple[str, float]] = {}
    for sid in systems:
        s = fromkb.system(kb, sid)
        peaks[sid] = (s.chip, s.peak_input(precision).mid)
        for kind, mid in models.items():
            m = fromkb.model(kb, mid)
            tr = train(m, s, train_chips, None, tokens, precision)
            rows += _rows(tr, "train", kind, s)
            sv = serve(m, s, serve_chips, batch, input_len, output_len, precision, curve=False)
            rows += _rows(sv, "serve", kind, s)
            notes[sid] = sorted(set(tr.notes) | set(sv.notes))
    df = pd.DataFrame(rows)
    df.attrs["notes"] = notes
    df.attrs["peaks"] = peaks
    # display names of the systems (racks) and chips, for the charts, tables and sentences
    shown = {p[0] for p in peaks.values()} | set(models.values())
    df.attrs["names"] = {**{i: n for i, n in names(kb).items() if i in shown},
                         **dict(zip(systems, labels(systems, kb), strict=True))}
    df.attrs["settings"] = {"train_chips": train_chips, "tokens": tokens,
                            "serve_chips": serve_chips, "batch": batch, "input_len": input_len,
                            "output_len": output_len,
                            "precision": precision}
    return df


def range_chart(df: pd.DataFrame, task: str, metric: str, *, title: str, value_title: str,
                sources: Iterable[str] = (), note: str = "",
                log: bool = False) -> alt.LayerChart:
    """Dots at the central value, bars from low to high, one row per system, colour per model."""
    d = df[(df["task"] == task) & (df["metric"] == metric)].dropna(subset=["central"])
    d = d[["system", "model", "central", "low", "high"]].reset_index(drop=True)
    d["system"] = [_name(df, i) for i in d["system"]]  # rack names, not ids
    d["model"] = [_name(df, i) for i in d["model"]]
    scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
    x = alt.X("central:Q", title=value_title, scale=scale)
    y = alt.Y("system:N", title=None, sort=list(dict.fromkeys(d["system"])))
    color = alt.Color("model:N", title="model")
    off = alt.YOffset("model:N")
    bars = alt.Chart(d).mark_rule(strokeWidth=3, opacity=0.6).encode(
        x=alt.X("low:Q", title=value_title, scale=scale), x2="high:Q", y=y, yOffset=off,
        color=color)
    dots = alt.Chart(d).mark_point(filled=True, size=60).encode(x=x, y=y, yOffset=off, color=color)
    lines = caption(sources, note)
    chart: alt.LayerChart = (bars + dots).properties(
        width=WIDTH, title=alt.TitleParams(title, subtitle=lines, anchor="start"))
    return chart


def _fmt(x: float) -> str:
    return format_number(x, 3)


_SCALES = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))


def count_in_words(x: float) -> str:
    """A large count for a sentence: ``15 trillion``, ``1.5 billion``, ``4,096`` (below a
    million, or not a round multiple to 4 significant digits, it is :func:`format_number`)."""
    for scale, word in _SCALES:
        if abs(x) >= scale and float(f"{x / scale:.4g}") * scale == x:
            return f"{format_number(x / scale)} {word}"
    return format_number(x)


def _name(df: pd.DataFrame, i: str) -> str:
    return str(df.attrs.get("names", {}).get(i, i))


def settings(df: pd.DataFrame) -> pd.DataFrame:
    """The inputs :func:`perf_per_tco` was run with, one row each with its unit."""
    st = df.attrs["settings"]
    rows = [("training: chips", format_number(st["train_chips"]), "chips"),
            ("training: token budget", count_in_words(st["tokens"]), "tokens"),
            ("serving: chips per replica", format_number(st["serve_chips"]), "chips"),
            ("serving: batch", format_number(st["batch"]), "sequences"),
            ("serving: prompt length", format_number(st["input_len"]), "tokens per sequence"),
            ("serving: output length", format_number(st["output_len"]), "tokens per sequence"),
            ("number format", st["precision"], "")]
    return pd.DataFrame(rows, columns=["setting", "value", "unit"])


def _best(df: pd.DataFrame, task: str, kind: str, metric: str,
          highest: bool = True) -> tuple[pd.Series[Any], pd.Series[Any]]:
    d = df[(df["task"] == task) & (df["kind"] == kind) & (df["metric"] == metric)]
    d = d.dropna(subset=["central"])
    d = d.sort_values("central", ascending=not highest)
    return d.iloc[0], d.iloc[1]


def _overlap(a: pd.Series[Any], b: pd.Series[Any]) -> bool:
    return bool(a["low"] <= b["high"] and b["low"] <= a["high"])


def headline(df: pd.DataFrame) -> list[str]:
    """Three sentences answering the notebook's question from the table, numbers computed."""
    st = df.attrs["settings"]
    out = []
    first, second = _best(df, "train", "dense", "days", highest=False)
    moe, _ = _best(df, "train", "moe", "days", highest=False)
    chip, peak = df.attrs["peaks"][first["system"]]
    top = max(df.attrs["peaks"].values(), key=lambda cp: cp[1])
    why = (f" (its {_name(df, chip)} has the highest {st['precision']} peak in the knowledge base, "
           f"{_fmt(peak / 1e12)} TFLOP/s)") if top[0] == chip else ""
    n = functools.partial(_name, df)
    out.append(f"On {format_number(st['train_chips'])} chips in {st['precision']}, "
               f"{n(first['system'])}{why} trains the dense {n(first['model'])} on "
               f"{count_in_words(st['tokens'])} tokens fastest, in {_fmt(first['central'])} days "
               f"({_fmt(first['low'])} to {_fmt(first['high'])}) against "
               f"{_fmt(second['central'])} for {n(second['system'])}, and {n(moe['system'])} "
               f"trains the MoE {n(moe['model'])} fastest ({_fmt(moe['central'])} days).")
    mw, mw2 = _best(df, "serve", "moe", "tokens_per_s_per_mw")
    usd, usd2 = _best(df, "serve", "moe", "tokens_per_usd")
    out.append(f"Serving {n(mw['model'])} ({st['serve_chips']} chips, batch {st['batch']}), "
               f"{n(mw['system'])} leads per megawatt with {_fmt(mw['central'])} tokens/s/MW "
               f"(next {n(mw2['system'])}, {_fmt(mw2['central'])}; ranges "
               f"{'overlap' if _overlap(mw, mw2) else 'do not overlap'}) and "
               f"{n(usd['system'])} per dollar with {_fmt(usd['central'])} tokens/USD "
               f"(next {n(usd2['system'])}, {_fmt(usd2['central'])}; ranges "
               f"{'overlap' if _overlap(usd, usd2) else 'do not overlap'}).")
    assumed = sorted({n(x.split(":")[0]) for notes in df.attrs["notes"].values() for x in notes
                      if "power per chip is an assumption" in x})
    drivers = (df[df["metric"] == "tokens_per_usd"]["moved_most_by"].str.split(", ")
               .explode().value_counts())
    out.append(f"Per-dollar figures rest on placeholder capex assumptions and the per-MW figures "
               f"of "
               f"{', '.join(assumed) or 'no chip'} on assumed power, so treat those rankings "
               f"as provisional; the inputs that move the per-dollar results most are "
               f"{', '.join(drivers.index[:3])}.")
    return out


def notes(df: pd.DataFrame) -> pd.DataFrame:
    """What each system's figures rest on: one row per system (by name) and note."""
    rows = [(_name(df, sid), note) for sid, ns in df.attrs["notes"].items() for note in ns]
    return pd.DataFrame(rows, columns=["system", "note"])


def summary(df: pd.DataFrame, task: str) -> pd.DataFrame:
    """Wide table of one task: ``central (low to high)`` per system x model and metric."""
    d = df[df["task"] == task].copy()
    d["system"] = [_name(df, i) for i in d["system"]]
    d["model"] = [_name(df, i) for i in d["model"]]
    d["value"] = [f"{_fmt(c)} ({_fmt(lo)} to {_fmt(hi)})" if math.isfinite(c) else "n/a"
                  for c, lo, hi in zip(d["central"], d["low"], d["high"], strict=True)]
    return d.pivot_table(index=["system", "model"], columns="metric", values="value",
                         aggfunc="first", sort=False)


def by_switch_generation(kb: KnowledgeBase, system: str = "trn3-nl72x2-switched",
                         model: str = "deepseek-v3", *, chips: int = 144, batch: int = 256,
                         input_len: int = 2048, output_len: int = 512,
                         precision: str = "fp8") -> pd.DataFrame:
    """Serving one model on the whole domain under each switch generation of its fabric:
    the group's hops and bandwidths (from the fabric graph) and the time per output token."""
    gens = [g for g in kb.table("fabrics").query("domain == @system")["generation"]
            if isinstance(g, str)]
    m = fromkb.model(kb, model)
    rows: list[dict[str, Any]] = []
    for g in gens:
        s = fromkb.system(kb, system, g)
        gb = s.network.group(chips)
        r = serve(m, s, chips, batch, input_len, output_len, precision, curve=False)
        t = r["tpot"]
        rows.append({"generation": g, "mean_hops": round(gb.mean_hops, 3),
                     "injection_GBps": gb.injection / 1e9, "bisection_TBps": gb.bisection / 1e12,
                     "tpot_ms": t.mid * 1e3, "tpot_low_ms": t.lo * 1e3, "tpot_high_ms": t.hi * 1e3,
                     "comm_ms": r.breakdown["decode_comm"] * 1e3})
    return pd.DataFrame(rows)


def engine_vs_assumption(kb: KnowledgeBase, system: str = "trn3-nl72x2-switched",
                         model: str = "llama-3-1-405b", *, chips: int = 4096,
                         tokens: float = 15e12, precision: str = "bf16") -> pd.DataFrame:
    """Training days on a Trainium system with the MFU assumption and with the reference
    engine's simulated layer MFU (:mod:`trnkb.workload.engine_mfu`)."""
    from trnkb.workload.engine_mfu import engine_mfu

    m, s = fromkb.model(kb, model), fromkb.system(kb, system)
    rows: list[dict[str, Any]] = []
    engine = {"mfu": engine_mfu(kb, m, s.chip, dtype=precision)}
    for label, extra in (("assumption", {}), ("engine", engine)):
        r = train(m, s, chips, None, tokens, precision, assumptions=extra)
        mfu, d = r.inputs["mfu"], r["days"]
        rows.append({"mfu_from": label, "mfu_low": mfu.lo, "mfu_central": mfu.mid,
                     "mfu_high": mfu.hi, "days": d.mid, "days_low": d.lo, "days_high": d.hi,
                     "plan": cast("Plan", r.plan).label})
    return pd.DataFrame(rows)
