"""GRPO's episodes on an environment server (``rollout.backend: server``) or a Ray pool of
environment actors (``rollout.backend: ray``).

The trainer keeps the policy and its token record; the server or the pool's actors keep the
sandboxes, the scaffold and the grading, on other machines if need be. An episode is a reset
to the task, then one step per policy turn, over a ``Transport``: a server's WebSocket session
or an actor of the pool. The policy's turn is ``PolicySession.turn``, the very code Inspect's
model API calls in-process, fed the same chat dicts the worker reads off the same Inspect
sample, so on a fixed seed every backend gives the same tokens, and the grade (the same medal
scorer's value) the same reward.

Before the first episode the trainer checks that the server (every actor) runs its episode
spec and its tasks, byte for byte; a mismatch stops the run with what differs. On the pool, an
episode whose actor or node died is run again from scratch on another actor, its token record
dropped first, under the same episode id: each episode yields one result, recorded once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import re
from pathlib import Path
from typing import Any, Protocol

from inspect_ai.util import LimitExceededError

from sandmle.env.protocol import Action, Observation, TokenLimit
from sandmle.errors import SandmleError
from sandmle.harness.pack import competition_digest, load_pack
from sandmle.specs.training import RolloutSettings
from sandmle.training.policy_api import CUT_WHILE_GENERATING, Episode, EpisodeResult, PolicySession

logger = logging.getLogger(__name__)
EPISODE_LOG = "ray-episodes.jsonl"
"""The pool's episode log in the rollout's log dir: one line per episode (node, attempts)."""


class Transport(Protocol):
    """One episode's link to where it runs."""

    errors: tuple[type[BaseException], ...]
    """What ends the episode as failed (not the agent's doing) rather than propagating."""
    name: str

    async def reset(self, task: str) -> Observation: ...
    async def step(self, action: Action) -> Observation: ...
    async def close(self) -> None: ...


class ServerTransport:
    """A WebSocket session of ``sandmle env serve``."""

    name = "environment server"

    def __init__(self, client: Any) -> None:
        from websockets.exceptions import WebSocketException

        self.env = client
        self.errors: tuple[type[BaseException], ...] = (
            TimeoutError, OSError, RuntimeError, WebSocketException,
        )  # fmt: skip

    async def reset(self, task: str) -> Observation:
        await self.env.connect()
        return (await self.env.reset(task=task)).observation

    async def step(self, action: Action) -> Observation:
        return (await self.env.step(action)).observation

    async def close(self) -> None:
        await self.env.close()


class ActorTransport:
    """An episode on one actor of the Ray pool, by its episode id."""

    name = "ray pool"

    def __init__(self, actor: Any, episode_id: str) -> None:
        from sandmle.env.pool import task_errors

        self.actor, self.episode_id = actor, episode_id
        self.errors = task_errors()

    async def reset(self, task: str) -> Observation:
        observation: Observation = await self.actor.reset.remote(self.episode_id, task=task)
        return observation

    async def step(self, action: Action) -> Observation:
        observation: Observation = await self.actor.step.remote(self.episode_id, action)
        return observation

    async def close(self) -> None:
        await self.actor.close.remote(self.episode_id)


def run_server_episodes(
    task_ids: list[str], session: PolicySession, settings: RolloutSettings
) -> list[EpisodeResult]:
    """One episode per entry of ``task_ids`` on ``settings.server``, in that order (as
    ``rollouts.run_episodes``, whose ``EpisodeResult`` it returns)."""
    return asyncio.run(_server_episodes(task_ids, session, settings))


async def _server_episodes(
    task_ids: list[str], session: PolicySession, settings: RolloutSettings
) -> list[EpisodeResult]:
    client = _client_class()
    token = os.environ.get(settings.server.token_env)
    async with client(settings.server.url, token=token) as env:
        state = await env.state()
    check_served(state, settings, task_ids, settings.server.url)
    gate = asyncio.Semaphore(settings.parallel_sandboxes)

    async def one(index: int, task_id: str) -> EpisodeResult:
        async with gate:
            env = ServerTransport(client(settings.server.url, token=token))
            return await _episode(env, session, task_id, index)

    return list(await asyncio.gather(*(one(i, t) for i, t in enumerate(task_ids))))


def check_served(
    state: dict[str, Any], settings: RolloutSettings, task_ids: list[str], where: str
) -> None:
    """Refuse a server (or pool actor) whose episode spec or tasks are not the trainer's."""
    served = state.get("episode")
    if served != settings.episode().model_dump(mode="json"):
        raise SandmleError(
            f"{where} runs another episode spec than rollout: "
            f"{_difference(served or {}, settings.episode().model_dump(mode='json'))}; start "
            "it with this run's episode settings (sandmle env serve --config)"
        )
    digests = state.get("task_digests") or {}
    pack = load_pack(_pack(settings), sorted(set(task_ids)))
    for competition in pack.competitions:
        if digests.get(competition.id) != competition_digest(competition):
            why = "does not serve" if competition.id not in digests else "serves another"
            raise SandmleError(
                f"{where} {why} task {competition.id!r} of {pack.root}: "
                "serve the pack this run trains on"
            )


def _difference(served: dict[str, Any], wanted: dict[str, Any]) -> str:
    keys = sorted(k for k in served.keys() | wanted.keys() if served.get(k) != wanted.get(k))
    return ", ".join(f"{k} {served.get(k)!r} (rollout: {wanted.get(k)!r})" for k in keys[:3])


def _pack(settings: RolloutSettings) -> str:
    if settings.pack is not None:
        return settings.pack
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir

    return str(builtin_pack_dir())


async def _episode(
    env: Transport, session: PolicySession, task_id: str, index: int
) -> EpisodeResult:
    """One episode; what ended it, as ``rollouts.EpisodeResult``. An error of ``env.errors``
    ends it as failed; any other (the pool's actor died) propagates."""
    key = f"{task_id}#{index}"  # the in-process sample id: the same request keys
    try:
        try:
            observation = await env.reset(task_id)
            conversation, tools = list(observation.messages), observation.tools
            while not observation.done:
                try:
                    turn = await session.turn(key, conversation, tools)
                except LimitExceededError as exc:
                    limit = TokenLimit(
                        value=int(exc.value or 0), limit=int(exc.limit or 0), message=exc.message
                    )
                    action = Action(limit=limit)
                else:
                    action = Action(message=turn.message)
                    conversation.append(turn.message)
                observation = await env.step(action)
                new = observation.messages
                conversation = new if observation.rewritten else [*conversation, *new]
        finally:
            await env.close()
    except env.errors as exc:  # the server, the link, or the actor's own error
        episode = session.episodes.get(key, Episode())
        return EpisodeResult(task_id, episode, error=f"{env.name}: {exc}")
    episode = session.episodes.get(key, Episode())
    error = observation.error
    if error is None and observation.cut_waiting:
        episode.cut_while_generating = True
        error = CUT_WHILE_GENERATING
    return EpisodeResult(
        task_id=task_id,
        episode=episode,
        medal={k: math.nan if v is None else v for k, v in observation.grade.items()},
        env_steps=observation.tool_calls,
        error=error,
        seconds=observation.seconds,
    )


_POOLS: dict[str, Any] = {}
"""The Ray pools this process started, by their settings: kept across GRPO steps."""


def ray_pool(settings: RolloutSettings) -> Any:
    """The pool ``settings.ray`` describes, started on first use (actors stay up across steps)."""
    from sandmle.env.pool import RayPool
    from sandmle.specs.environment import EnvSettings

    env = EnvSettings(
        pack=settings.pack, tasks=settings.tasks, episode=settings.episode(),
        log_dir=settings.ray.log_dir,
    )  # fmt: skip
    key = json.dumps([env.model_dump(mode="json"), settings.ray.model_dump(mode="json")])
    if key in _POOLS and not _POOLS[key].live() and not _POOLS[key].starting():
        _POOLS.pop(key).shutdown()  # every actor died, none on its way: start anew
    if key not in _POOLS:
        _POOLS[key] = RayPool(env, settings.ray)
    return _POOLS[key]


def shutdown_pools() -> None:
    """End every Ray pool this process started (their episodes, then the actors)."""
    while _POOLS:
        _POOLS.popitem()[1].shutdown()


def run_ray_episodes(
    task_ids: list[str], session: PolicySession, settings: RolloutSettings, log_dir: Path
) -> list[EpisodeResult]:
    """One episode per entry of ``task_ids`` on the Ray pool, in that order; each episode's
    node and attempts go to ``<log_dir>/ray-episodes.jsonl``, one line per episode."""
    pool = ray_pool(settings)
    for state in pool.states():
        check_served(state, settings, task_ids, f"ray actor {state['node']['actor']}")
    results = asyncio.run(_pool_episodes(pool, task_ids, session, settings))
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / EPISODE_LOG).open("a", encoding="utf-8") as log:
        for i, (task_id, result) in enumerate(zip(task_ids, results, strict=True)):
            line = {
                "episode_id": episode_id(session.seed, f"{task_id}#{i}"), "task": task_id,
                **result.where, "attempts": result.attempts, "error": result.error,
            }  # fmt: skip
            log.write(json.dumps(line) + "\n")
    return results


async def _pool_episodes(
    pool: Any, task_ids: list[str], session: PolicySession, settings: RolloutSettings
) -> list[EpisodeResult]:
    gate = asyncio.Semaphore(settings.parallel_sandboxes)

    async def one(index: int, task_id: str) -> EpisodeResult:
        async with gate:
            return await pool_episode(pool, session, task_id, index, settings.ray.retries)

    return list(await asyncio.gather(*(one(i, t) for i, t in enumerate(task_ids))))


async def pool_episode(
    pool: Any, session: PolicySession, task_id: str, index: int, retries: int
) -> EpisodeResult:
    """One episode on the pool; rerun from scratch on another actor when its actor died."""
    from sandmle.env.pool import lost_errors

    key = f"{task_id}#{index}"
    ident = episode_id(session.seed, key)
    lost: list[str] = []
    for attempt in range(1, retries + 2):
        async with pool.lease() as actor:
            try:
                result = await _episode(
                    ActorTransport(actor.handle, ident), session, task_id, index
                )
            except lost_errors() as exc:
                pool.lost(actor)
                session.episodes.pop(key, None)  # its tokens: the rerun records them anew
                lost.append(f"{actor.name} ({type(exc).__name__})")
                logger.warning("episode %s: %s died; run again", ident, actor.name)
                continue
        result.where = {k: actor.node[k] for k in ("actor", "node_id", "host")}
        result.attempts = attempt
        return result
    error = f"ray pool: episode {ident} lost its actor {len(lost)} times: {', '.join(lost)}"
    return EpisodeResult(task_id, Episode(), error=error, attempts=len(lost))


def episode_id(seed: str, key: str) -> str:
    """A stable episode id (the environment's alphabet) for the session's episode ``key``."""
    readable = re.sub(r"[^A-Za-z0-9._-]", "-", f"{seed}-{key}").strip("-._")
    if len(readable) <= 64 and readable:
        return readable
    return f"{readable[:40]}-{hashlib.sha256(f'{seed}/{key}'.encode()).hexdigest()[:20]}"


def _client_class() -> Any:
    try:
        from sandmle.env.client import SandmleEnvClient
    except ImportError as exc:
        raise SandmleError(
            f"rollout.backend: server needs the env extra ({exc.name} missing): "
            'pip install "sandmle[env]"'
        ) from None
    return SandmleEnvClient
