"""A continuous-batching scheduler, stepped: which tokens each engine step runs.

It follows what vLLM (v1), SGLang and TensorRT-LLM document for their schedulers:

* every running sequence that has its first token decodes one token per step;
* the step's token budget (``max_tokens``) left after the decodes goes to prefill, in chunks
  (``chunked_prefill``): first the prompts already started, then waiting requests in arrival
  order, while the running sequences stay at most ``max_seqs`` and the KV cache has room for
  the admitted prompt (``kv_capacity`` tokens of context); without chunking a prompt is
  admitted only whole;
* when the decodes of a step would overflow the KV cache, the most recently admitted
  sequence is preempted (recompute mode: its cache is dropped and it re-enters the front of
  the queue with its prompt and the tokens it already generated as a new prompt);
* ``mixed=False`` (SGLang without ``--enable-mixed-chunk``, its default): a step that has
  prefill work runs only prefill (up to ``max_tokens`` prompt tokens) and the running
  sequences wait a step; decode-only steps otherwise;
* static batching (``static``, as Transformers NeuronX runs a compiled batch without vLLM): a
  batch is admitted only when the previous one has finished, up to ``max_seqs`` waiting
  requests at once, and their whole prompts are context-encoded together in one step (no
  token budget, no chunks); the batch then decodes until its last sequence is done;
* the step's time comes from a caller's function of its composition (:mod:`stepcost`); it
  must accept numpy arrays too: a run of decode-only steps with nothing to admit (the
  batch fixed until the next completion, arrival or full cache) is timed as one vector.

Receiving (``recv_interval``, SGLang's ``--scheduler-recv-interval``): the scheduler takes
arrived requests into its queue only when a counter reaches ``recv_interval``; each decode-only
step adds 1, a step with prefill makes the next poll immediate, and an idle engine polls at
once (SGLang ``SchedulerRecvSkipper``: weight 1 for decode and idle, 1000 otherwise). With
the default 1 every step receives. ``recv_after_prefill=False`` counts prefill steps as 1 too:
TensorRT-LLM's attention-DP balance (``attention_dp_config.enable_balance``) holds context
requests until every rank has one or ``timeout_iters`` iterations have passed; one rank is
simulated, so its context requests are taken in every ``timeout_iters`` steps (or at once
when it has nothing to decode).

Overlapped scheduling (``arrival_lag``, SGLang's and TensorRT-LLM's default overlap
scheduler): the host launches step ``n + 1`` before it reads step ``n``'s tokens, so a
client whose request completed at step ``n`` sends its next one while ``n + 1`` runs, and
the host, which launched ``n + 2`` before reading ``n + 1``, takes it into step ``n + 3``:
in a closed loop a refill joins ``arrival_lag`` (2) steps late while the engine is busy (at
once when it is idle).

Arrivals: a list of arrival times (offline: all 0; Poisson: exponential gaps at a rate), or a
closed loop of ``concurrency`` clients, each sending its next request when the previous one
completes (zero think time). Roles: ``mixed`` (prefill and decode share steps), ``prefill``
(only prefill; a request leaves with its first token: the prefill pool of a disaggregated
layout) and ``decode`` (requests arrive with their cache and decode only).

The result is a :class:`Trace`: per step its composition and central time, per request the
step of its admission, of its first token and of its last. Everything is deterministic.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

_MAX_STEPS = 2_000_000  # hang guard


@dataclass(frozen=True)
class SchedulerConfig:
    """Limits of one engine (one attention group)."""

    max_seqs: int = 256
    max_tokens: int = 8192
    kv_capacity: float = float("inf")
    chunked_prefill: bool = True
    role: str = "mixed"
    static: bool = False
    recv_interval: int = 1
    recv_after_prefill: bool = True
    mixed: bool = True
    arrival_lag: int = 0


@dataclass
class Trace:
    """What one engine ran (arrays; steps in order, requests in issue order)."""

    n_dec: NDArray[np.float64]
    ctx_dec: NDArray[np.float64]
    n_pre: NDArray[np.float64]
    attn_pre: NDArray[np.float64]
    dt: NDArray[np.float64]          # central step time, s
    release: NDArray[np.float64]     # earliest start of each step (open-loop arrivals), s
    arrival: NDArray[np.float64]     # per request, central, s
    admit_step: NDArray[np.int64]
    first_step: NDArray[np.int64]
    last_step: NDArray[np.int64]
    input_len: NDArray[np.int64]
    output_len: NDArray[np.int64]
    predecessor: NDArray[np.int64]   # closed loop: the request whose completion issued this one
    preemptions: int
    closed: bool

    @property
    def steps(self) -> int:
        return len(self.dt)

    def ends(self, dt: NDArray[np.float64], arrival: NDArray[np.float64] | None = None
             ) -> NDArray[np.float64]:
        """End time of every step for step times ``dt`` (same schedule): a step starts when
        the previous one ends or, open loop, when the requests it admits have arrived."""
        c = np.cumsum(dt)
        if self.closed:
            return c
        rel = self.release if arrival is None else _release(self, arrival)
        return c + np.maximum.accumulate(np.maximum(rel - (c - dt), 0.0))


def _release(tr: Trace, arrival: NDArray[np.float64]) -> NDArray[np.float64]:
    rel = np.zeros(tr.steps)
    np.maximum.at(rel, tr.admit_step, arrival)
    return rel


def run_scheduler(cfg: SchedulerConfig, input_len: Sequence[int] | NDArray[np.int64],
                  output_len: Sequence[int] | NDArray[np.int64],
                  step: Callable[[float, float, float, float], float], *,
                  arrivals: Sequence[float] | NDArray[np.float64] | None = None,
                  concurrency: int | None = None) -> Trace:
    """Run requests ``i`` (``input_len[i]`` prompt tokens, ``output_len[i]`` generated) through
    one engine (see the module docstring). Give ``arrivals`` (seconds, non-decreasing) or a
    closed loop of ``concurrency`` clients."""
    n = len(input_len)
    inp = [int(x) for x in input_len]
    out = [int(x) for x in output_len]
    closed = concurrency is not None
    arr = [0.0] * n if arrivals is None else [float(a) for a in arrivals]
    pred = [-1] * n
    if closed:
        assert concurrency is not None
        issued = min(concurrency, n)
    else:
        issued = n
    role = cfg.role
    waiting: deque[int] = deque()
    pending: deque[int] = deque()  # arrived, not yet received (recv_interval)
    lagged: deque[int] = deque()   # closed loop, issued, not yet at the server (arrival_lag)
    lag_step: deque[int] = deque()  # the step each lagged request can first join
    hold = lagged if cfg.arrival_lag else pending
    since = cfg.recv_interval       # decode steps since the last poll
    nxt = 0                     # next request not yet arrived (open loop: sorted arrivals)
    prompt = inp[:]             # tokens to prefill (grows on preemption)
    done_pre = [0] * n          # prompt tokens already prefilled
    prefilling: list[int] = []  # running, prompt not finished, admission order
    dec_heap: list[tuple[int, int, int]] = []  # (finish step, request, session)
    session = [0] * n           # bumps on preemption (lazy heap deletion)
    dec_start = [0] * n         # decode step after which the sequence decodes
    dk = 0                      # index of the next decode step (steps that advance decodes)
    gen = [0] * n               # tokens generated before the current decode session
    decoding: list[int] = []    # admission order, may hold stale entries
    alive = [False] * n
    n_dec = 0
    ctx_sum = 0.0
    kv_used = 0.0
    admit = [-1] * n
    first = [-1] * n
    last = [-1] * n
    finished = 0
    preempt = 0
    t = 0.0
    c_n: list[float] = []
    c_ctx: list[float] = []
    c_pre: list[float] = []
    c_attn: list[float] = []
    c_dt: list[float] = []
    c_rel: list[float] = []
    s = 0
    while finished < n:
        if s >= _MAX_STEPS:
            raise RuntimeError(f"scheduler did not finish {n} requests in {_MAX_STEPS} steps")
        while nxt < issued and (closed or arr[nxt] <= t):
            pending.append(nxt)
            nxt += 1
        while lagged and (lag_step[0] <= s or (not prefilling and n_dec == 0 and not waiting)):
            pending.append(lagged.popleft())
            lag_step.popleft()
        if since >= cfg.recv_interval or (not prefilling and n_dec == 0):  # a poll
            waiting.extend(pending)
            pending.clear()
            since = 0
        if not waiting and not prefilling and n_dec == 0:
            if nxt < issued and not closed:
                t = arr[nxt]
                continue
            raise RuntimeError("scheduler stalled: no work and no arrivals")
        # decode growth needs one token of cache per decoding sequence
        while n_dec and kv_used + n_dec > cfg.kv_capacity:
            victim = _pop_latest(decoding, alive)
            c = prompt[victim] + (dk - dec_start[victim])
            gen[victim] += dk - dec_start[victim] - 1
            kv_used -= c - 1
            ctx_sum -= c
            n_dec -= 1
            alive[victim] = False
            session[victim] += 1
            prompt[victim] = inp[victim] + 1 + gen[victim]
            done_pre[victim] = 0
            waiting.appendleft(victim)
            preempt += 1
        # a run of decode-only steps with nothing to admit: the batch is fixed until the
        # next completion, arrival or full cache, so its steps are timed in one vector
        if (n_dec and not prefilling and (not waiting or n_dec >= cfg.max_seqs or cfg.static)
                and (cfg.max_tokens > n_dec or cfg.static)):
            k = _decode_run(dec_heap, session, alive, dk, n_dec, kv_used, cfg.kv_capacity)
            if pending:  # stop at the next poll
                k = min(k, cfg.recv_interval - since)
            if lagged:  # or where a lagged request reaches the server
                k = min(k, lag_step[0] - s)
            if k >= 2:
                j = np.arange(k, dtype=float)
                vec: Callable[..., Any] = step  # the cost functions take arrays too
                dts: NDArray[np.float64] = np.asarray(
                    vec(np.full(k, float(n_dec)), ctx_sum + n_dec * j, np.zeros(k), np.zeros(k)),
                    float)
                if not closed and nxt < issued and not waiting:
                    starts: NDArray[np.float64] = np.cumsum(dts) - dts + t
                    k = int(np.searchsorted(starts, arr[nxt], side="left"))
                if k >= 2:
                    c_n.extend([float(n_dec)] * k)
                    c_ctx.extend((ctx_sum + n_dec * j[:k]).tolist())
                    c_pre.extend([0.0] * k)
                    c_attn.extend([0.0] * k)
                    c_dt.extend(dts[:k].tolist())
                    c_rel.extend([0.0] * k)
                    t += float(dts[:k].sum())
                    ctx_sum += n_dec * k
                    kv_used += n_dec * k
                    s += k
                    dk += k
                    since += k  # the polls inside the run found nothing: keep the phase
                    if since > cfg.recv_interval:
                        since = (since - 1) % cfg.recv_interval + 1
                    continue
        budget = cfg.max_tokens - (n_dec if cfg.mixed else 0)
        if cfg.static:  # one context encoding of the whole batch, only between batches
            budget = sum(prompt) if not (n_dec or prefilling) else 0
        n_pre = 0.0
        attn_pre = 0.0
        release = 0.0
        chunks: list[tuple[int, int]] = []
        for r in prefilling:
            if budget <= 0:
                break
            c = min(prompt[r] - done_pre[r], budget)
            if not cfg.chunked_prefill and c < prompt[r] - done_pre[r]:
                break
            chunks.append((r, c))
            budget -= c
        running = len(prefilling) + n_dec
        while waiting and budget > 0 and running < cfg.max_seqs:
            r = waiting[0]
            need = prompt[r] if role != "decode" else inp[r] + 1
            if kv_used + need > cfg.kv_capacity and running > 0:
                break
            if role == "decode":
                waiting.popleft()
                kv_used += inp[r]
                admit[r] = s
                first[r] = s  # decode role: the step it joins (its first token came before)
                release = max(release, arr[r])
                _start_decode(r, dk - 1, out[r] - 1, dec_heap, session, dec_start, decoding,
                              alive)
                ctx_sum += need
                n_dec += 1
                budget -= 1
                running += 1
                continue
            c = min(prompt[r], budget)
            if not cfg.chunked_prefill and c < prompt[r]:
                if chunks or (n_dec and cfg.mixed):
                    break
                c = prompt[r]
            waiting.popleft()
            kv_used += prompt[r]
            if admit[r] < 0:
                admit[r] = s
            release = max(release, arr[r])
            prefilling.append(r)
            chunks.append((r, c))
            budget -= c
            running += 1
        for r, c in chunks:
            p0 = done_pre[r]
            n_pre += c
            attn_pre += c * p0 + c * (c + 1) / 2
        n_run = n_dec if cfg.mixed or not chunks else 0  # decodes this step
        ctx_run = ctx_sum if n_run else 0.0
        dt = step(float(n_run), ctx_run, n_pre, attn_pre)
        t = max(t, release) + dt
        c_n.append(float(n_run))
        c_ctx.append(ctx_run)
        c_pre.append(n_pre)
        c_attn.append(attn_pre)
        c_dt.append(dt)
        c_rel.append(release)
        since = cfg.recv_interval if n_pre > 0 and cfg.recv_after_prefill else since + 1
        # decode progress: every decoding sequence gained a token
        ctx_sum += n_run
        kv_used += n_run
        while n_run and dec_heap and dec_heap[0][0] <= dk:
            _, r, sess = heapq.heappop(dec_heap)
            if sess != session[r] or not alive[r]:
                continue
            alive[r] = False
            c = prompt[r] + (dk + 1 - dec_start[r])
            ctx_sum -= c
            kv_used -= c - 1
            n_dec -= 1
            last[r] = s
            finished += 1
            if closed and nxt < n:
                nxt = issued = _refill(r, nxt, t, pred, arr, hold)
                lag_step.extend([s + cfg.arrival_lag + 1] * bool(cfg.arrival_lag))
        if n_run:
            dk += 1
        # prefill progress
        still: list[int] = []
        chunk_of = dict(chunks)
        for r in prefilling:
            done_pre[r] += chunk_of.get(r, 0)
            if done_pre[r] < prompt[r]:
                still.append(r)
                continue
            if first[r] < 0:
                first[r] = s
            else:  # a recomputed prefill yields the next token
                gen[r] += 1
            remaining = out[r] - 1 - gen[r]
            if role == "prefill" or remaining <= 0:
                kv_used -= prompt[r]
                last[r] = s
                finished += 1
                if closed and nxt < n:
                    nxt = issued = _refill(r, nxt, t, pred, arr, hold)
                    lag_step.extend([s + cfg.arrival_lag + 1] * bool(cfg.arrival_lag))
                continue
            _start_decode(r, dk - 1, remaining, dec_heap, session, dec_start, decoding, alive)
            ctx_sum += prompt[r] + 1
            n_dec += 1
        prefilling = still
        s += 1
    a = np.asarray
    return Trace(a(c_n, float), a(c_ctx, float), a(c_pre, float), a(c_attn, float),
                 a(c_dt, float), a(c_rel, float), a(arr, float), a(admit, np.int64),
                 a(first, np.int64), a(last, np.int64), a(inp, np.int64), a(out, np.int64),
                 a(pred, np.int64), preempt, closed)


def _refill(done: int, nxt: int, t: float, pred: list[int], arr: list[float],
            waiting: deque[int]) -> int:
    """Closed loop: the client whose request ``done`` completed at ``t`` sends request
    ``nxt`` at once (zero think time); returns the next request not yet issued."""
    pred[nxt] = done
    arr[nxt] = t
    waiting.append(nxt)
    return nxt + 1


def _start_decode(r: int, after: int, remaining: int, heap: list[tuple[int, int, int]],
                  session: list[int], dec_start: list[int], decoding: list[int],
                  alive: list[bool]) -> None:
    """Request ``r`` decodes from step ``after + 1``: its ``remaining`` tokens end at step
    ``after + remaining``."""
    dec_start[r] = after
    alive[r] = True
    decoding.append(r)
    heapq.heappush(heap, (after + remaining, r, session[r]))


def _decode_run(heap: list[tuple[int, int, int]], session: list[int], alive: list[bool],
                s: int, n_dec: int, kv_used: float, cap: float) -> int:
    """Decode-only steps from step ``s`` before the next completion (the step that completes
    one runs on the normal path) and while the cache has room for every step's tokens."""
    while heap and (heap[0][2] != session[heap[0][1]] or not alive[heap[0][1]]):
        heapq.heappop(heap)  # drop stale entries of preempted sequences
    if not heap:
        return 0
    k = heap[0][0] - s
    if cap != float("inf"):
        k = min(k, int((cap - kv_used) // n_dec))
    return min(k, 100_000)


def _pop_latest(decoding: list[int], alive: list[bool]) -> int:
    while decoding:
        r = decoding.pop()
        if alive[r]:
            return r
    raise RuntimeError("no decoding sequence to preempt")
