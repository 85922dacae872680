"""What InferenceX's launch scripts pass the server, as the simulator's scheduler limits.

InferenceX (source ``inferencex-launch-scripts``: ``SemiAnalysisAI/InferenceX``, the
single-node DeepSeek-R1 scripts ``benchmarks/dsr1_<precision>_<gpu>[_trt][_docker|_slurm].sh``
until 2026-01-22, ``benchmarks/single_node/dsr1_*.sh`` after, read at the last commit before
each run's date) starts every server with limits that bound how much prefill a step takes
and so how long a prompt queues. :func:`launch_limits` gives them for one ledger run:

* SGLang: ``--chunked-prefill-size`` and ``--max-prefill-tokens`` (the prompt tokens one
  prefill step takes; 16384, SGLang's default ``max_prefill_tokens``, where a script passes
  only the chunk size), ``--max-running-requests`` (the running sequences), by GPU, precision
  and TP: B200/B300 FP8 TP 8 32768 and 128, TP 4 8192 and 32; B200/B300 FP4 16384 and 256;
  H200 FP8 32768 and 256 (512 at some loads: never binding here); MI300X/MI325X FP8 196608
  until the 2026-01-22 consolidation, 131072 after; MI355X FP8 196608; MI355X FP4 196608,
  32768 at 8k/1k above 32 clients (no ``--max-running-requests``: SGLang's default, sized
  by the KV cache); the KV cache's format, ``--kv-cache-dtype fp8_e4m3`` on B200/B300 and on
  the AMD scripts of the ledger's dates except MI355X FP4 before 2025-12-16 (commit
  332fec5), and never on H200, where SGLang's ``auto`` keeps the model's BF16
  (``kv_precision``);
* TensorRT-LLM (``trtllm-serve --backend pytorch``): ``--max_num_tokens`` =
  ``(CONC + ISL + 64 + 63) // 64 x 64`` (one whole prompt and every decode of the step), at
  least 8192 from 2026-01-21 (commit 64af5a7, "Adding evals"); no script sets
  ``enable_chunked_prefill``, whose default is off, so a prompt is admitted only whole; the
  scripts dated before 2025-11-03 (commit 17d5e20 moved the choice into the matrix config,
  which the dashboard's fixture records) chose attention DP themselves: H200 FP8 at
  1k/1k and 1k/8k above 64 clients and at 8k/1k above 32 (``dsr1_fp8_h200_trt_slurm.sh``),
  B200 FP8 at 1k/1k above 32 and at 1k/8k and 8k/1k above 64
  (``dsr1_fp8_b200_trt_slurm.sh``), B200 FP4 at 8k/1k above 32 and from 256 clients
  (``dsr1_fp4_b200_trt_slurm.sh``); the fixture labels those old points without it; the
  B200 scripts capture the prefill in piecewise CUDA graphs at some loads
  (``torch_compile_config.enable_piecewise_cuda_graph``; :func:`_trt_piecewise`), where the
  eager prefill floor does not apply (:mod:`trnkb.workload.prefillhost`).

Neither stack's script turns off its overlap scheduler (SGLang ``--disable-overlap-schedule``,
TensorRT-LLM ``disable_overlap_scheduler``), so both runs get ``arrival_lag`` 2: the host
reads a step's tokens after launching the next one, and a client's next request, sent while
that next step runs, joins the step after the one already launched
(:mod:`trnkb.workload.scheduler`).

Lengths are the nominal ``ISL`` (the client draws on ``[0.8 ISL, ISL]``). Anything else
(ATOM, other stacks, other sources) gets ``{}``: the simulator's defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trnkb.audit.ledger import Run

SGLANG_DEFAULT_MAX_PREFILL = 16384  # SGLang ServerArgs.max_prefill_tokens
# both stacks overlap the host's scheduling with the device (SGLang's event_loop_overlap,
# on unless --disable-overlap-schedule; TensorRT-LLM's PyTorch executor unless
# disable_overlap_scheduler): a closed loop's next request joins 2 steps late (scheduler)
OVERLAP_LAG = 2
_TRT_FLOOR_FROM = "2026-01-21"      # MAX_NUM_TOKENS at least 8192 (commit 64af5a7)
_SCRIPT_CHOOSES_DPA_BEFORE = "2025-11-03"  # commit 17d5e20: the matrix config chooses
_MI30X_131K_FROM = "2026-01-22"     # commit b0c4ed2: MI300X/MI325X 196608 -> 131072
_MI355X_FP4_KV8_FROM = "2025-12-16"  # commit 332fec5: --kv-cache-dtype fp8_e4m3


def _sglang(gpu: str, precision: str, tp: int, isl: int, conc: int, date: str
            ) -> dict[str, Any]:
    if gpu in ("b200", "b300"):
        if precision == "fp8":
            return ({"max_tokens": 32768, "max_seqs": 128} if tp == 8 else
                    {"max_tokens": 8192, "max_seqs": 32})
        return {"max_tokens": SGLANG_DEFAULT_MAX_PREFILL, "max_seqs": 256}
    if gpu == "h200":  # no --kv-cache-dtype: SGLang's auto, the model's BF16
        return {"max_tokens": 32768, "kv_precision": "bf16"}
    if gpu in ("mi300x", "mi325x"):
        return {"max_tokens": 131072 if date >= _MI30X_131K_FROM else 196608}
    if gpu == "mi355x":
        small = precision == "fp4" and isl == 8192 and conc > 32
        out: dict[str, Any] = {"max_tokens": 32768 if small else 196608}
        if precision == "fp4" and date < _MI355X_FP4_KV8_FROM:
            out["kv_precision"] = "bf16"
        return out
    return {}


def _trt_dpa(gpu: str, precision: str, isl: int, osl: int, conc: int) -> bool:
    """Attention DP as the scripts dated before 2025-11-03 chose it (module docstring)."""
    if gpu == "h200" and precision == "fp8":
        return conc > (32 if (isl, osl) == (8192, 1024) else 64)
    if gpu == "b200" and precision == "fp8":
        return conc > (32 if (isl, osl) == (1024, 1024) else 64)
    if gpu == "b200" and precision == "fp4":
        return conc >= 256 or ((isl, osl) == (8192, 1024) and conc > 32)
    return False


def _trt_piecewise(gpu: str, precision: str, isl: int, osl: int, conc: int, tp: int,
                   ep: int, date: str) -> bool:
    """Piecewise CUDA graphs for the prefill, as the B200 TensorRT-LLM scripts turn them on
    (FP8 from 2026-01-29, commit ec7bafa: 1k/1k and 8k/1k from 64 clients; FP4 from
    2026-02-03, commit 6eecc0e: 1k/1k at TP 8, EP 8)."""
    if gpu != "b200":
        return False
    if precision == "fp8" and date >= "2026-01-29":
        return conc >= 64 and (isl, osl) in ((1024, 1024), (8192, 1024))
    if precision == "fp4" and date >= "2026-02-03":
        return (isl, osl) == (1024, 1024) and tp == 8 and ep == 8
    return False


def launch_limits(run: Run, isl: int, osl: int) -> dict[str, Any]:
    """``simulate`` keywords for an InferenceX run of nominal lengths ``isl``/``osl``:
    ``max_tokens``, ``max_seqs``, ``chunked_prefill``, ``arrival_lag``, ``kv_precision``
    where a script keeps a BF16 cache, where an old
    TensorRT-LLM script chose attention DP ``tp``/``dp``, and ``prefill_graph`` where a
    TensorRT-LLM script captures the prefill in piecewise CUDA graphs (module docstring);
    ``{}`` for other runs."""
    if not run.source.startswith("inferencex-dashboard"):
        return {}
    parts = run.id.split("-")
    gpu, framework = parts[1], parts[2]
    precision = str(run.get("precision") or "")
    tp = int(run.chips or 0)
    conc = int(run.get("batch") or 0)
    if framework == "sglang":
        return _sglang(gpu, precision, tp, isl, conc, run.date) | {"arrival_lag": OVERLAP_LAG}
    if framework != "trt":
        return {}
    tokens = (conc + isl + 64 + 63) // 64 * 64
    if run.date >= _TRT_FLOOR_FROM:
        tokens = max(tokens, 8192)
    out: dict[str, Any] = {"max_tokens": tokens, "chunked_prefill": False,
                           "arrival_lag": OVERLAP_LAG}
    if run.date < _SCRIPT_CHOOSES_DPA_BEFORE and _trt_dpa(gpu, precision, isl, osl, conc):
        out |= {"tp": 1, "dp": tp}
    ep = next((int(p[2:]) for p in parts if p.startswith("ep") and p[2:].isdigit()), 1)
    if _trt_piecewise(gpu, precision, isl, osl, conc, tp, ep, run.date):
        out["prefill_graph"] = True
    return out
