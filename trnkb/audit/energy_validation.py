"""Energy per token: published measurements against the model's power and tokens/MW.

Two checks, both generated into ``docs/workload-validation.md`` (:func:`markdown`):

1. **Measured J/token** (MLPerf Inference Power): rows of ``specs/power.yaml`` with a
   ``system_power`` (wall power of the whole system under test, measured by the submitter's
   power analyser over the run) name the ledger run (``specs/ledger/runs.yaml``) that carries
   the run's measured tokens/s. Measured J/token = system power / tokens/s (W / (1/s) = J).

   The model's J/token for the same run is (chip power per chip x chips) / tokens/s, with the
   model's IT chip power (chip TDP x server overhead, no PUE: the analyser sits at the wall of
   the server, not the facility). Two ranges:

   - *at the measured throughput*: only the power side varies, so it checks the model's watts
     per chip against a measurement (``verdict``: in range, or the miss in %);
   - *with the model's throughput*: where the ledger can predict the run
     (:func:`trnkb.audit.ledger.predict`), J/token over the predicted range, the model's
     tokens/MW turned round (1 MW / tokens/s per MW at PUE 1); otherwise the ledger's reason.

2. **All-in power behind a dashboard's J/token** (InferenceX): its tokens per provisioned
   all-in megawatt and J/token are an analyst's all-in watts per GPU over a measured throughput,
   so at equal throughput the J/token ratio is the ratio of powers. :func:`allin_check` sets
   each all-in figure against the model's facility watts per chip (chip power x PUE);
   :func:`allin_runs` applies the dashboard's definition to every predicted serving-throughput
   run of the ledger on a chip with an all-in figure (all-in W per chip / measured tokens/s per
   chip) against the model's whole J/token range (facility W per chip / predicted tokens/s per
   chip): power and throughput together, the model's tokens/MW turned round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trnkb.workload import fromkb

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase



def _miss(x: float, lo: float, hi: float) -> float:
    """0 inside [lo, hi], else the signed distance to the nearer end relative to that end."""
    if lo <= x <= hi:
        return 0.0
    end = hi if x > hi else lo
    return (x - end) / end


def _power_rows(kb: KnowledgeBase, field: str) -> list[str]:
    if "power" not in kb.tables:
        return []
    return [rid for rid in kb.table("power")["id"] if kb.get(rid, field) is not None]


def measured_energy(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """One dict per measured-power run: measured J/token, the model's J/token at the measured
    throughput (low, central, high), ``within`` and ``miss``, and the model's J/token from its
    own throughput prediction (``predicted_*``) or ``reason`` why there is none."""
    from trnkb.audit import ledger

    runs = {r.id: r for r in ledger.load_runs()}
    out = []
    for rid in _power_rows(kb, "system_power"):
        run = runs.get(str(kb.get(rid, "run")))
        if run is None or run.unit != "1/s" or run.metric != "tokens_per_s_system":
            continue
        watts = float(kb.get(rid, "system_power").to("W").magnitude)
        chips = int(kb.get(rid, "chips_per_system").magnitude)
        s = fromkb.system(kb, run.system or "")
        p = s.chip_power  # W per chip, IT (no PUE)
        tok_s = float(run.value)
        row: dict[str, Any] = {
            "id": rid, "run": run.id, "system": run.system, "model": run.get("model_name"),
            "scenario": run.get("scenario"), "measured_w": watts, "chips": chips,
            "tokens_per_s": tok_s, "measured_j_per_token": watts / tok_s,
            "measured_w_per_chip": watts / chips,
            "model_j_low": p.lo * chips / tok_s, "model_j_central": p.mid * chips / tok_s,
            "model_j_high": p.hi * chips / tok_s, "chip_power_basis": p.kind,
            "source": kb.provenance(rid, "system_power")["source"],
            "predicted_j_low": None, "predicted_j_central": None, "predicted_j_high": None,
            "reason": "",
        }
        row["within"] = row["model_j_low"] <= row["measured_j_per_token"] <= row["model_j_high"]
        row["miss"] = round(_miss(row["measured_j_per_token"], row["model_j_low"],
                                  row["model_j_high"]), 3)
        pred = ledger.predict(kb, run)
        if isinstance(pred, str):
            row["reason"] = pred
        else:
            row.update(predicted_j_low=p.lo * chips / pred.hi,
                       predicted_j_central=p.mid * chips / pred.mid,
                       predicted_j_high=p.hi * chips / pred.lo)
        out.append(row)
    return out


def allin_check(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The model's facility watts per chip (chip power x PUE range) against each published
    all-in provisioned figure (``allin_power_per_chip``): ``within``, or the ``miss``."""
    rows = []
    for rid in _power_rows(kb, "allin_power_per_chip"):
        chip = kb.get(rid, "chip")
        w = float(kb.get(rid, "allin_power_per_chip").to("W").magnitude)
        src = kb.provenance(rid, "allin_power_per_chip")["source"]
        for sid in fromkb.system_ids(kb):
            s = fromkb.system(kb, sid)
            if s.chip != chip:
                continue
            lo, mid, hi = (s.chip_power.lo * s.pue.lo, s.chip_power.mid * s.pue.mid,
                           s.chip_power.hi * s.pue.hi)
            rows.append({"system": sid, "published_w": w, "model_low_w": lo,
                         "model_central_w": mid, "model_high_w": hi,
                         "within": lo <= w <= hi, "miss": round(_miss(w, lo, hi), 3),
                         "chip_power_basis": s.chip_power.kind, "source": src})
    return rows


def allin_runs(kb: KnowledgeBase,
               evaluated: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One dict per predicted serving-throughput ledger run on a chip with an all-in power
    figure: ``allin_j_per_token`` (the dashboard's definition at the measured throughput) and
    the model's ``model_j_low/central/high`` (facility W per chip over the predicted tokens/s
    per chip), ``within`` and ``miss``. ``evaluated``: rows of
    :func:`trnkb.audit.ledger.evaluate` (default: the whole ledger, cached per knowledge base)."""
    from trnkb.audit import ledger

    allin = {str(kb.get(rid, "chip")): float(kb.get(rid, "allin_power_per_chip").to("W")
                                             .magnitude)
             for rid in _power_rows(kb, "allin_power_per_chip")}
    out = []
    for row in ledger.evaluate(kb) if evaluated is None else evaluated:
        run, pred = row["run"], row["prediction"]
        if (pred is None or run.family != "serving throughput" or run.unit != "1/s"
                or run.metric not in ("tokens_per_s_system", "tokens_per_s_per_chip")):
            continue
        s = fromkb.system(kb, run.system or "")
        if s.chip not in allin or not run.chips:
            continue
        per = 1.0 / run.chips if run.metric == "tokens_per_s_system" else 1.0
        tok, lo, mid, hi = (run.value * per, pred.lo * per, pred.mid * per, pred.hi * per)
        fw = (s.chip_power.lo * s.pue.lo, s.chip_power.mid * s.pue.mid,
              s.chip_power.hi * s.pue.hi)
        j = allin[s.chip] / tok
        r = {"run": run.id, "system": run.system, "chip": s.chip, "split": run.split,
             "allin_w": allin[s.chip], "tokens_per_s_per_chip": tok,
             "predicted_tokens_per_s_per_chip": mid, "allin_j_per_token": j,
             "model_j_low": fw[0] / hi, "model_j_central": fw[1] / mid,
             "model_j_high": fw[2] / lo}
        r["within"] = r["model_j_low"] <= j <= r["model_j_high"]
        r["miss"] = round(_miss(j, r["model_j_low"], r["model_j_high"]), 3)
        out.append(r)
    return out


def _j(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3g}"


def _verdict(within: bool, miss: float) -> str:
    return "in range" if within else f"miss {miss:+.1%}"


def markdown(kb: KnowledgeBase) -> str:
    """The energy section of ``docs/workload-validation.md``."""
    rows = measured_energy(kb)
    inside = sum(r["within"] for r in rows)
    lines = [
        "\n## Energy per token (specs/power.yaml)\n",
        "Generated by `trnkb/audit/energy_validation.py`. Measured J/token = the system's wall "
        "power during the run (MLPerf Inference Power) / its measured tokens/s (the ledger run). "
        "The model's J/token at the measured throughput = chip power per chip (TDP x server "
        "overhead, no PUE) x chips / the same tokens/s, so it tests the power side alone; the "
        "last column divides by the model's own throughput range where the ledger can predict "
        "the run, else gives the ledger's reason.\n",
        f"- {inside} of {len(rows)} measured runs in range at the measured throughput",
        "- no Trainium, TPU or AMD LLM run with measured power was found (MLPerf Inference v5.1 "
        "has LLM power results only from Lenovo's 8 x B200 servers)\n",
        "| run | measured W (per chip) | tokens/s | measured J/token | model J/token at measured "
        "tokens/s | verdict | model J/token with model throughput |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        pred = (f"{_j(r['predicted_j_central'])} ({_j(r['predicted_j_low'])} to "
                f"{_j(r['predicted_j_high'])})" if r["predicted_j_central"] is not None
                else f"not predicted: {r['reason']}")
        lines.append(
            f"| {r['run']} | {r['measured_w']:,.0f} ({r['measured_w_per_chip']:,.0f}) "
            f"| {r['tokens_per_s']:,.6g} | {_j(r['measured_j_per_token'])} "
            f"| {_j(r['model_j_central'])} ({_j(r['model_j_low'])} to {_j(r['model_j_high'])}) "
            f"| {_verdict(r['within'], r['miss'])} | {pred} |")
    allin = allin_check(kb)
    miss = [a for a in allin if not a["within"]]
    lines += [
        "\nAll-in provisioned power per GPU behind the InferenceX dashboard's tokens per MW and "
        "J/token (an analyst's constant over a measured throughput, so at equal throughput the "
        "J/token ratio is the power ratio) against the model's facility watts per chip "
        "(chip power x PUE):\n",
        f"- {len(allin) - len(miss)} of {len(allin)} systems in range; misses: "
        + (", ".join(f"{a['system']} {a['miss']:+.1%}" for a in miss) or "none") + "\n",
        "| system | published W per GPU | model W per chip, central (range) | verdict | chip power "
        "basis | source |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for a in allin:
        lines.append(f"| {a['system']} | {a['published_w']:,.0f} | {a['model_central_w']:,.0f} "
                     f"({a['model_low_w']:,.0f} to {a['model_high_w']:,.0f}) "
                     f"| {_verdict(a['within'], a['miss'])} | {a['chip_power_basis']} "
                     f"| {a['source']} |")
    runs = allin_runs(kb)
    held = [r for r in runs if r["split"] == "holdout"]
    lines += [
        "\nThe dashboard's J/token applied to every predicted serving-throughput run of the "
        "ledger on a chip with an all-in figure (all-in W per GPU / measured tokens/s per chip) "
        "against the model's whole J/token range (facility W per chip / its predicted tokens/s "
        "per chip, power and throughput together):\n",
        f"- all runs: {sum(r['within'] for r in runs)} of {len(runs)} in range; held-out runs: "
        f"{sum(r['within'] for r in held)} of {len(held)}\n",
        "| run | split | all-in J/token at measured tokens/s | model J/token, central (range) "
        "| verdict |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in runs:
        lines.append(f"| {r['run']} | {r['split']} | {_j(r['allin_j_per_token'])} "
                     f"| {_j(r['model_j_central'])} ({_j(r['model_j_low'])} to "
                     f"{_j(r['model_j_high'])}) | {_verdict(r['within'], r['miss'])} |")
    return "\n".join(lines) + "\n"
