"""The measured ledger: published runs (``specs/ledger/runs.yaml``) and their predictions.

Each run carries its configuration (system, chips, model, precision, scenario, lengths or
sequence length and batch), one measured value with its unit, and its source. A run is put
to the workload layer by a rule per family (:func:`predict`); a run the layer cannot express
(no system or model row, a method or scenario it does not model) gets the reason instead,
never a silent drop. Nothing is fitted to these runs: every one is validation. The ``split``
field (``fit`` / ``holdout``, fixed by the SHA-256 of the id when the ledger was written,
``bench/import_ledger.py``) names the held-out half that the issue's targets are read on;
a future end-to-end calibration may use only ``fit`` runs.

:func:`evaluate` predicts every run; identical configurations (many submitters of one
system) are predicted once.
"""

from __future__ import annotations

import hashlib
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from trnkb.spec.specfile import SpecError
from trnkb.units import Q_
from trnkb.workload import fromkb
from trnkb.workload.ranges import Ranged

if TYPE_CHECKING:
    from trnkb.kb import KnowledgeBase

FAMILIES = ("training throughput", "time-to-train", "serving throughput", "serving latency")
SPLITS = ("fit", "holdout")
VENDORS = ("NVIDIA", "AMD", "Google", "AWS")
_REQUIRED = ("id", "family", "vendor", "system", "chips", "model", "metric", "value", "unit",
             "source", "locator", "date", "split")
# MLPerf Training LLM submissions of v5.x train in fp8 where the run does not state its
# precision (the importer reads it from the launch script a submission's README names:
# precision, attention_precision, fp4_steps; docs/workload-validation.md, Rules)
_TRAIN_PRECISION = "fp8"
# NVIDIA's FP4 -> FP8 healing: after fp4_steps the GEMMs run in fp8 (HEALING_PRECISION FP8_DS)
_HEALED = "fp8"
# precisions at which MLPerf's LoRA implementations (NVIDIA's and AMD's NeMo configurations:
# fp8_params = FP8) hold the frozen base in fp8 (recipe fp8-lora)
_FP8_PARAMS = ("fp8", "fp4")
# MLPerf's LoRA implementations run context parallelism as an all-to-all (NVIDIA's NeMo
# megatron_gpt_peft_tuning_config.yaml: cp_comm_type default 'a2a'; no config overrides it)
_LORA_CP_COMM = "a2a"


@dataclass(frozen=True)
class Run:
    """One published run: its configuration, the measured value and where it comes from."""

    id: str
    family: str
    vendor: str
    system: str | None
    chips: int | None
    model: str | None
    metric: str
    value: float
    unit: str
    source: str
    locator: str
    date: str
    split: str
    line: int
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    def get(self, key: str, default: Any = None) -> Any:
        return self.extra.get(key, default)


@dataclass(frozen=True)
class Prediction:
    """The predicted central and range of a run's metric, in the run's unit."""

    mid: float
    lo: float
    hi: float
    call: str  # the workload call, as a user would type it
    notes: tuple[str, ...] = ()


def ledger_path() -> Path:
    from trnkb.kb import default_specs_dir

    return default_specs_dir() / "ledger" / "runs.yaml"


_LOADED: dict[tuple[str, str], tuple[Run, ...]] = {}  # (path, content digest) -> runs


def load_runs(path: Path | None = None) -> list[Run]:
    """Read and check the ledger; a bad row is ``file:line: field: what is wrong``.

    A file read before with the same content is not parsed again (each call gets its own
    copies of the runs' ``extra`` mappings)."""
    path = path or ledger_path()
    text = path.read_text()
    key = (str(path), hashlib.sha256(text.encode()).hexdigest())
    if key not in _LOADED:
        _LOADED[key] = tuple(_parse_runs(path, text))
    return [replace(r, extra=dict(r.extra)) for r in _LOADED[key]]


def _parse_runs(path: Path, text: str) -> list[Run]:
    lines = {ln.split('"')[1] if '"' in ln else ln.split(":", 1)[1].strip(): i
             for i, ln in enumerate(text.splitlines(), start=1) if ln.startswith("- id:")}
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: ~10x
    errors: list[str] = []
    runs: list[Run] = []
    seen: set[str] = set()
    for row in data.get("runs") or []:
        rid = str(row.get("id"))
        line = lines.get(rid, 1)
        where = f"{path}:{line}"
        missing = [k for k in _REQUIRED if k not in row]
        if missing:
            errors.append(f"{where}: {missing[0]}: missing (every run needs "
                          f"{', '.join(_REQUIRED)})")
            continue
        for key, allowed in (("family", FAMILIES), ("split", SPLITS), ("vendor", VENDORS)):
            if row[key] not in allowed:
                errors.append(f"{where}: {key}: {row[key]!r} is not one of {', '.join(allowed)}")
        if rid in seen:
            errors.append(f"{where}: id: {rid!r} appears twice")
        seen.add(rid)
        try:
            Q_(1.0, row["unit"])
        except Exception:
            errors.append(f"{where}: unit: {row['unit']!r} is not a unit")
        if not isinstance(row["value"], (int, float)) or not row["value"] > 0:
            errors.append(f"{where}: value: {row['value']!r} is not a positive number")
        extra = {k: v for k, v in row.items() if k not in _REQUIRED}
        runs.append(Run(rid, row["family"], row["vendor"], row["system"], row["chips"],
                        row["model"], row["metric"], float(row["value"]), row["unit"],
                        row["source"], row["locator"], str(row["date"]), row["split"], line,
                        extra))
    if errors:
        raise SpecError(errors)
    return runs


# ---- predictions ----------------------------------------------------------------------

def _in(r: Ranged, unit: str, scale: float = 1.0) -> tuple[float, float, float]:
    f = Q_(1.0, r.unit).to(unit).magnitude * scale
    lo, hi = sorted((r.lo * f, r.hi * f))
    return r.mid * f, lo, hi


def _lora(run: Run) -> Any:
    """The adapters of a LoRA run: MLPerf's from specs/benchmarks.yaml (rank 16 on qkv and o),
    or the reason (a table that does not state its rank)."""
    from trnkb.workload.benchmarks import benchmark
    from trnkb.workload.lora import LoRA

    bid = str(run.get("benchmark", "")).replace("_", "-")
    try:
        spec = benchmark(bid).extra.get("lora")
    except KeyError:
        spec = None
    if not spec:
        return "LoRA rank and target matrices are not stated by the run's source"
    names = {"qkv_proj": "qkv", "o_proj": "o", "gate_proj": "gate", "up_proj": "up",
             "down_proj": "down"}
    targets = tuple(names.get(t.strip(), t.strip()) for t in str(spec["targets"]).split(","))
    return LoRA(int(spec["rank"]), targets)


def _train(kb: KnowledgeBase, run: Run) -> Prediction | str:
    from trnkb.workload.training import train

    kw: dict[str, Any] = {}
    if run.get("method") == "lora":
        lora = _lora(run)
        if isinstance(lora, str):
            return lora
        kw["lora"] = lora
    m, s = fromkb.model(kb, run.model or ""), fromkb.system(kb, run.system or "")
    seq = int(run.get("seq_len") or 8192)
    gb = run.get("global_batch")
    precision = run.get("precision") or _TRAIN_PRECISION
    if "lora" in kw:  # NeMo's fp8_params: with FP8=True the frozen base is held in fp8
        kw["recipe"] = "fp8-lora" if precision in _FP8_PARAMS else "bf16-lora"
        kw["cp_comm"] = _LORA_CP_COMM
    tokens = float(run.get("tokens") or 1e9)
    kw["seq_len"] = seq
    if gb:
        kw["batch_tokens"] = gb * seq
    if run.get("plan"):  # a published plan ran, so it fitted: predict it even where trnkb's
        kw["allow_unfit"] = True  # memory model would refuse it (NeMo's 70B SFT on 16 H100)
    if run.metric == "time_to_train" and run.get("evals") and run.get("eval_samples"):
        # the evaluations the logs state (mean count x samples each), inside run_start..run_stop
        kw["eval_tokens"] = float(run.get("evals")) * int(run.get("eval_samples")) * seq
    if run.get("attention_precision"):
        kw["attention_precision"] = run.get("attention_precision")
    healed = 0.0  # days of the steps after fp4_steps, at the healed precision
    try:
        heal = int(run.get("fp4_steps") or 0) * gb * seq if gb else 0
        if run.metric == "time_to_train" and 0 < heal < tokens:
            evals = kw.pop("eval_tokens", None)
            r = train(m, s, int(run.chips or 0), run.get("plan") or None, heal, precision,
                      **kw)
            if evals:
                kw["eval_tokens"] = evals  # evaluations counted once, in the healed part
            rest = train(m, s, int(run.chips or 0), run.get("plan") or None, tokens - heal,
                         _HEALED, **kw)
            healed = rest["days"].mid
        else:
            r = train(m, s, int(run.chips or 0), run.get("plan") or None, tokens, precision,
                      **kw)
    except ValueError as e:
        return f"no prediction: {e}"
    if run.metric == "time_to_train":
        mid, lo, hi = _in(r["days"], run.unit)
        if healed:
            mid, lo, hi = (x + _in(rest["days"], run.unit)[i] for i, x in
                           enumerate((mid, lo, hi)))
    else:
        mid, lo, hi = _in(r["tokens_per_s"], run.unit, 1 / int(run.chips or 1))
    call = (f"trnkb workload train {run.model} --system {run.system} --chips {run.chips} "
            f"--precision {precision} --seq-len {seq}"
            + (f" --attention-precision {kw['attention_precision']}"
               if "attention_precision" in kw else "")
            + (f" --batch-tokens {gb * seq}" if gb else "")
            + (f" --plan {run.get('plan')}" if run.get("plan") else "")
            + (f" --lora {kw['lora'].rank}" if "lora" in kw else "")
            + (f" --tokens {tokens:.6g}" if run.metric == "time_to_train" else "")
            + (f" --eval-tokens {kw['eval_tokens']:.6g}" if "eval_tokens" in kw else ""))
    notes = tuple(r.notes) + (() if run.get("precision") else
                              (f"precision not stated by the run; {precision} assumed",))
    if healed:
        notes += (f"{precision} for the first {run.get('fp4_steps')} steps (this call), "
                  f"{_HEALED} for the remaining {(tokens - heal) / (gb * seq):.0f} "
                  f"(FP4 -> FP8 healing)",)
    return Prediction(mid, lo, hi, call, notes)


def _serving(kb: KnowledgeBase, run: Run) -> Prediction | str:
    from trnkb.audit.ledger_serving import predict_serving

    return predict_serving(kb, run)


_RULES: dict[str, Callable[[KnowledgeBase, Run], Prediction | str]] = {
    "training throughput": _train, "time-to-train": _train,
    "serving throughput": _serving, "serving latency": _serving,
}


def predict(kb: KnowledgeBase, run: Run) -> Prediction | str:
    """The prediction of one run, or the reason it cannot be expressed."""
    if run.get("not_expressible"):
        return str(run.get("not_expressible"))
    if run.system is None or run.system not in fromkb.system_ids(kb):
        return f"no system row {run.system!r} in specs/racks.yaml"
    if run.model is None or run.model not in fromkb.model_ids(kb):
        return f"no model row for {run.get('model_name')!r} in specs/models.yaml"
    return _RULES[run.family](kb, run)


def _config_key(run: Run) -> tuple[Any, ...]:
    keep = ("scenario", "benchmark", "precision", "attention_precision", "fp4_steps", "batch",
            "input_len", "output_len", "seq_len", "global_batch", "tokens", "evals",
            "eval_samples", "plan", "method", "tp", "dp", "not_expressible")
    # a serving prediction also follows its stack, source and date (ledger_serving: the
    # client's lengths and window, SGLang's unmixed prefill and receive interval,
    # TensorRT-LLM's attention-DP balance, the launch script of the run's date, Transformers
    # NeuronX's rules, untuned aiter): two frameworks at one configuration are two predictions
    stack = ((run.source, str(run.get("software")), "-trt-" in run.id, run.date)
             if run.family.startswith("serving") else ())
    return (run.family, run.system, run.chips, run.model, run.metric, run.unit,
            *(str(run.get(k)) for k in keep), *stack)


_CACHE: weakref.WeakKeyDictionary[Any, dict[str, list[dict[str, Any]]]] = \
    weakref.WeakKeyDictionary()


def evaluate(kb: KnowledgeBase, runs: list[Run] | None = None) -> list[dict[str, Any]]:
    """Every run with its prediction: ``error`` = (central - measured) / measured,
    ``in_range``, ``above``; or ``reason`` when the run cannot be expressed.

    The shipped ledger's evaluation is cached per knowledge base and ledger content (SHA-256),
    so the page and its tests evaluate it once per process."""
    if runs is None:
        digest = hashlib.sha256(ledger_path().read_bytes()).hexdigest()
        per_kb = _CACHE.setdefault(kb, {})
        if digest not in per_kb:
            per_kb[digest] = _evaluate(kb, load_runs())
        return per_kb[digest]
    return _evaluate(kb, runs)


def _evaluate(kb: KnowledgeBase, runs: list[Run]) -> list[dict[str, Any]]:
    memo: dict[tuple[Any, ...], Prediction | str] = {}
    rows = []
    for run in runs:
        key = _config_key(run)
        if key not in memo:
            memo[key] = predict(kb, run)
        p = memo[key]
        row: dict[str, Any] = {"run": run, "prediction": None, "reason": None}
        if isinstance(p, str):
            row["reason"] = p
        elif not all(math.isfinite(x) for x in (p.mid, p.lo, p.hi)):
            row["reason"] = "the prediction is not finite"
        else:
            row.update(prediction=p, error=(p.mid - run.value) / run.value,
                       in_range=p.lo <= run.value <= p.hi, above=p.mid > run.value)
        rows.append(row)
    return rows
