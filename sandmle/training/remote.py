"""GRPO's episodes on an environment server (``rollout.backend: server``).

The trainer keeps the policy and its token record; ``sandmle env serve`` keeps the sandboxes,
the scaffold and the grading, on its own machine if need be. Each episode is one WebSocket
session: reset to the task, then one step per policy turn. The policy's turn is
``PolicySession.turn``, the very code Inspect's model API calls in-process, fed the same chat
dicts the server's worker reads off the same Inspect sample, so on a fixed seed the two
backends give the same tokens, and the grade (the same medal scorer's value) the same reward.

Before the first episode the trainer checks that the server runs its episode spec and its
tasks, byte for byte; a mismatch stops the run with what differs.
"""

from __future__ import annotations

import asyncio
import math
import os
from typing import Any

from inspect_ai.util import LimitExceededError

from sandmle.errors import SandmleError
from sandmle.harness.pack import competition_digest, load_pack
from sandmle.specs.training import RolloutSettings
from sandmle.training.policy_api import CUT_WHILE_GENERATING, Episode, EpisodeResult, PolicySession


def run_server_episodes(
    task_ids: list[str], session: PolicySession, settings: RolloutSettings
) -> list[EpisodeResult]:
    """One episode per entry of ``task_ids`` on ``settings.server``, in that order (as
    ``rollouts.run_episodes``, whose ``EpisodeResult`` it returns)."""
    return asyncio.run(_episodes(task_ids, session, settings))


async def _episodes(
    task_ids: list[str], session: PolicySession, settings: RolloutSettings
) -> list[EpisodeResult]:
    client = _client_class()
    token = os.environ.get(settings.server.token_env)
    await check_server(client(settings.server.url, token=token), settings, task_ids)
    gate = asyncio.Semaphore(settings.parallel_sandboxes)

    async def one(index: int, task_id: str) -> EpisodeResult:
        async with gate:
            return await _episode(client(settings.server.url, token=token), session, task_id, index)

    return list(await asyncio.gather(*(one(i, t) for i, t in enumerate(task_ids))))


async def check_server(env: Any, settings: RolloutSettings, task_ids: list[str]) -> None:
    """Refuse a server whose episode spec or tasks are not the trainer's."""
    async with env:
        state = await env.state()
    served = state.get("episode")
    if served != settings.episode().model_dump(mode="json"):
        raise SandmleError(
            f"{settings.server.url} runs another episode spec than rollout: "
            f"{_difference(served or {}, settings.episode().model_dump(mode='json'))}; start "
            "it with this run's episode settings (sandmle env serve --config)"
        )
    digests = state.get("task_digests") or {}
    pack = load_pack(_pack(settings), sorted(set(task_ids)))
    for competition in pack.competitions:
        if digests.get(competition.id) != competition_digest(competition):
            why = "does not serve" if competition.id not in digests else "serves another"
            raise SandmleError(
                f"{settings.server.url} {why} task {competition.id!r} of {pack.root}: "
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


async def _episode(env: Any, session: PolicySession, task_id: str, index: int) -> EpisodeResult:
    """One episode; what ended it, as ``rollouts.EpisodeResult``."""
    from websockets.exceptions import WebSocketException

    from sandmle.env.protocol import Action, TokenLimit

    key = f"{task_id}#{index}"  # the in-process sample id: the same request keys
    try:
        async with env:
            observation = (await env.reset(task=task_id)).observation
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
                observation = (await env.step(action)).observation
                new = observation.messages
                conversation = new if observation.rewritten else [*conversation, *new]
    except (TimeoutError, OSError, RuntimeError, WebSocketException) as exc:  # server or link
        episode = session.episodes.get(key, Episode())
        return EpisodeResult(task_id, episode, error=f"environment server: {exc}")
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


def _client_class() -> Any:
    try:
        from sandmle.env.client import SandmleEnvClient
    except ImportError as exc:
        raise SandmleError(
            f"rollout.backend: server needs the env extra ({exc.name} missing): "
            'pip install "sandmle[env]"'
        ) from None
    return SandmleEnvClient
