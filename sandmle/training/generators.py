"""Sampling backends for the policy API, batched across the episodes that run at once.

Episodes advance independently (while one waits on its sandbox another generates), but the
engine is called once per *turn-batch*: every request that arrives within ``window_s`` of the
first goes into one call. Three engines:

- ``TransformersEngine`` (:mod:`.decoding`): the live training weights in this process (CPU,
  tests, small runs), each request sampled with its own seeded generator (its key), the KV
  cache kept across an episode's turns, the turn-batch decoded together;
- ``ColocateEngine``: TRL's ``VLLMGeneration`` in colocate mode, kept awake for the whole rollout
  (see ``vllm_awake``) rather than put to sleep after every call;
- ``ServerRounds``: TRL's ``vllm-serve`` client, which exists on the main process only. Every
  process joins rounds of ``gather_object``: the main process sends all their requests to the
  server in one call and broadcasts the results (or the error) back, so every rank gets real
  samples and a failure reaches every rank instead of hanging the others.

Any failure of an engine reaches the episode as ``BackendError``: the sample errors (it is not
scored 0) and the rollout either fails the step or drops the episode (``RolloutSettings``).
Logprobs are of the sampled token under the temperature-scaled distribution, which is what TRL
compares against.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sandmle.harness.solvers import BackendError
from sandmle.training.decoding import Request, Sample, TransformersEngine

__all__ = ["BatchingGenerator", "ColocateEngine", "ServerRounds", "TransformersEngine", "cut"]


@dataclass
class EngineClock:
    """Wall seconds an engine spent generating (its calls never overlap) and how many calls."""

    seconds: float = 0.0
    calls: int = 0
    requests: int = 0


class BatchingGenerator:
    """``Generator`` that groups concurrent ``sample`` calls into one engine call per turn-batch.

    A waiting episode that is cancelled (its sample's time limit fell while it generated) leaves
    the batch; once every episode of the running call has left, the engine is told to stop
    (``engine.cancel()``, where it has one), and ``close()`` waits for the call to end, so no
    generation outlives the rollout into the optimizer step.
    """

    def __init__(self, engine: Callable[[list[Request]], list[Sample]], window_s: float = 0.02):
        self.engine, self.window_s = engine, window_s
        self.clock = EngineClock()
        self._pending: list[tuple[Request, str, asyncio.Future]] = []
        self._unkeyed = 0
        self._running: list[asyncio.Future] = []
        self._flusher: asyncio.Task | None = None
        self._idle = threading.Event()
        self._idle.set()

    async def sample(self, context: list[int], max_new_tokens: int, key: str = "") -> Sample:
        """Sample after ``context``; ``key`` seeds the request in engines that take keys
        (``engine.keyed``), so its tokens do not depend on the batch it lands in."""
        future = asyncio.get_running_loop().create_future()
        self._unkeyed += not key
        self._pending.append(((context, max_new_tokens), key or f"unkeyed-{self._unkeyed}", future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        try:
            return await future
        except asyncio.CancelledError:
            if self._running and all(f.cancelled() for f in self._running):
                cancel = getattr(self.engine, "cancel", None)
                if cancel is not None:
                    cancel()  # nobody waits for this call any more: stop sampling
            raise

    def close(self, timeout_s: float = 600.0) -> None:
        """Wait until no engine call runs (a cancelled one finishes its current token), then
        free the engine's cached turns (the next rollout samples with new weights)."""
        if not self._idle.wait(timeout_s):
            raise BackendError(
                f"a generation call was still running {timeout_s:.0f} s after the rollout"
            )
        clear = getattr(self.engine, "clear", None)
        if clear is not None:
            clear()

    async def _flush(self) -> None:
        while self._pending:
            await asyncio.sleep(self.window_s)  # let the other episodes' turns join the batch
            batch = [(r, k, f) for r, k, f in self._pending if not f.done()]
            self._pending = []
            if not batch:
                continue
            self._running = [f for _, _, f in batch]
            start = time.perf_counter()
            self._idle.clear()
            try:
                requests, keys = [r for r, _, _ in batch], [k for _, k, _ in batch]
                results = await asyncio.to_thread(self._call, requests, keys)
                if len(results) != len(batch):
                    raise RuntimeError(f"{len(results)} samples for {len(batch)} requests")
            except Exception as exc:  # noqa: BLE001 - every waiting episode gets the failure
                error = BackendError(f"generation backend failed: {type(exc).__name__}: {exc}")
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            finally:
                self._running = []
                self._tick(time.perf_counter() - start, len(batch))
            for (_, _, future), result in zip(batch, results, strict=True):
                if not future.done():  # a cancelled episode's sample is thrown away
                    future.set_result(result)

    def _call(self, requests: list[Request], keys: list[str]) -> list[Sample]:
        try:
            if getattr(self.engine, "keyed", False):
                return self.engine(requests, keys)  # type: ignore[call-arg]
            return self.engine(requests)
        finally:
            self._idle.set()

    def _tick(self, seconds: float, requests: int) -> None:
        self.clock.seconds += seconds
        self.clock.calls += 1
        self.clock.requests += requests


def cut(ids: list[int], logprobs: list[float], eos: int | None, limit: int) -> Sample:
    """The first ``limit`` tokens, ending at the end-of-turn token when one was sampled.

    >>> cut([5, 6, 2, 0, 0], [-1.0, -2.0, -3.0, 0.0, 0.0], eos=2, limit=8)
    ([5, 6, 2], [-1.0, -2.0, -3.0])
    >>> cut([5, 6, 7], [-1.0, -2.0, -3.0], eos=2, limit=2)
    ([5, 6], [-1.0, -2.0])
    """
    ids, logprobs = ids[:limit], logprobs[:limit]
    if eos is not None and eos in ids:
        end = ids.index(eos) + 1
        return ids[:end], logprobs[:end]
    return ids, logprobs


def first_logprobs(
    rows: list[list[list[float | None]]] | None, ids: list[list[int]]
) -> list[list[float]]:
    """The sampled token's logprob per position (TRL returns ``[position][k]``, sampled first)."""
    if rows is None:
        raise RuntimeError("the vLLM backend returned no logprobs (set vllm logprobs to 0)")
    return [[_sampled(lp) for lp in row[: len(i)]] for row, i in zip(rows, ids, strict=True)]


def _sampled(logprobs: list[float | None]) -> float:
    """The sampled token's logprob; TRL writes a NaN one as ``None``, which no loss can use."""
    if logprobs[0] is None:
        raise RuntimeError("the vLLM backend returned a NaN logprob for a sampled token")
    return float(logprobs[0])


class ColocateEngine:
    """TRL's colocated vLLM (``trainer.vllm_generation``); one ``generate`` per turn-batch."""

    def __init__(self, vllm_generation: Any, eos: int | None):
        self.vllm, self.eos = vllm_generation, eos

    def __call__(self, requests: list[Request]) -> list[Sample]:
        self.vllm.max_completion_length = max(n for _, n in requests)
        _, completion_ids, logprobs, _ = self.vllm.generate([c for c, _ in requests], None, 1)
        ids = [list(c) for c in completion_ids]
        lps = first_logprobs(logprobs, ids)
        return [cut(i, lp, self.eos, n) for i, lp, (_, n) in zip(ids, lps, requests, strict=True)]


@contextmanager
def vllm_awake(vllm_generation: Any) -> Iterator[None]:
    """Keep a colocated engine awake (weights and KV cache) for a whole multi-turn rollout.

    TRL's ``generate`` wakes the KV cache and sleeps (level 2, weights dropped) around every
    call, which would re-push the weights on every turn; here the engine wakes once, with the
    current weights, and goes back to sleep when the rollout ends, as TRL expects.
    """
    if vllm_generation.mode != "colocate" or not vllm_generation.enable_sleep_mode:
        yield
        return
    if vllm_generation._llm_weights_sleeping:  # level-2 sleep dropped them: push the current ones
        vllm_generation.sync_weights()
    vllm_generation.llm.wake_up(tags=["kv_cache"])
    vllm_generation.enable_sleep_mode = False  # so TRL's generate leaves the engine awake
    try:
        yield
    finally:
        vllm_generation.enable_sleep_mode = True
        vllm_generation.llm.sleep(level=2)
        vllm_generation._llm_weights_sleeping = True


class ServerRounds:
    """``Generator`` for ``vllm_mode='server'`` across all training processes.

    A thread per process runs rounds until every process has finished its episodes: each round
    gathers every process's pending requests, the main process (the only one with a
    ``vllm_client``) sends them to the server as one call, and broadcasts the samples, or the
    error, to all. Use as a context manager around the rollout.
    """

    def __init__(
        self,
        vllm_generation: Any,
        rank: int,
        eos: int | None,
        window_s: float = 0.02,
        collectives: tuple[Callable, Callable] | None = None,
    ):
        self.vllm, self.rank, self.eos, self.window_s = vllm_generation, rank, eos, window_s
        if collectives is None:
            from accelerate.utils import broadcast_object_list, gather_object

            collectives = (gather_object, broadcast_object_list)
        self._gather, self._broadcast = collectives
        self.clock = EngineClock()
        self._lock = threading.Lock()
        self._pending: list[tuple[Request, concurrent.futures.Future]] = []
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vllm-server-rounds", daemon=True)
        self._failure: BaseException | None = None

    def __enter__(self) -> ServerRounds:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._finished.set()  # this process's episodes are over; keep serving the others
        self._thread.join()
        if self._failure is not None:
            raise BackendError(f"vLLM server rounds failed: {self._failure}") from self._failure

    async def sample(self, context: list[int], max_new_tokens: int, key: str = "") -> Sample:
        """Sample after ``context`` (``key`` unused: the server seeds its own sampling)."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            if self._failure is not None or not self._thread.is_alive():
                raise BackendError(f"vLLM server rounds are not running ({self._failure})")
            self._pending.append(((context, max_new_tokens), future))
        return await asyncio.wrap_future(future)

    def _run(self) -> None:
        try:
            while self._round():
                pass
        except BaseException as exc:  # noqa: BLE001 - hand it to the waiting episodes, then exit
            self._failure = exc
            with self._lock:
                batch, self._pending = self._pending, []
            for _, future in batch:
                future.set_exception(BackendError(f"vLLM server rounds failed: {exc}"))

    def _round(self) -> bool:
        """One round; False once every process is done."""
        time.sleep(self.window_s)
        with self._lock:
            batch, self._pending = self._pending, []
            done = self._finished.is_set() and not batch
        per_rank = self._gather([([r for r, _ in batch], done)])
        if all(d for _, d in per_rank):
            return False
        requests = [r for reqs, _ in per_rank for r in reqs]
        if not requests:
            return True
        start = time.perf_counter()
        payload = [self._call_server(requests) if self.rank == 0 else None]
        self._broadcast(payload, from_process=0)
        self._tick(time.perf_counter() - start, len(requests))
        received = payload[0]
        assert received is not None  # the broadcast filled it in on every rank
        status, value = received
        offset = sum(len(reqs) for reqs, _ in per_rank[: self.rank])  # gathered in rank order
        for i, (request, future) in enumerate(batch):
            if status == "error":
                future.set_exception(BackendError(f"vLLM server failed: {value}"))
            else:
                ids, lps = value[offset + i]
                future.set_result(cut(ids, lps, self.eos, request[1]))
        return True

    def _call_server(self, requests: list[Request]) -> tuple[str, Any]:
        vllm = self.vllm
        try:
            out = vllm.vllm_client.generate(
                prompts=[c for c, _ in requests],
                n=1,
                repetition_penalty=vllm.repetition_penalty,
                temperature=vllm.temperature,
                top_p=vllm.top_p,
                top_k=vllm.top_k,
                min_p=vllm.min_p or 0.0,
                max_tokens=max(n for _, n in requests),
                logprobs=vllm.logprobs,
                generation_kwargs=vllm.generation_kwargs,
            )
            ids = [list(i) for i in out["completion_ids"]]
            return "ok", list(zip(ids, first_logprobs(out["logprobs"], ids), strict=True))
        except Exception as exc:  # noqa: BLE001 - broadcast the failure instead of hanging the others
            return "error", f"{type(exc).__name__}: {exc}"

    def _tick(self, seconds: float, requests: int) -> None:
        self.clock.seconds += seconds
        self.clock.calls += 1
        self.clock.requests += requests
