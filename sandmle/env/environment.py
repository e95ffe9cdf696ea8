"""The step-wise environment: a sandmle task as reset → step → … → done, with its reward.

An episode is the very sample ``inspect eval`` runs (``sandmle.env.worker``); this module is
the host's side: it picks the task, bounds how many episodes run, turns each policy action
into the worker's turn and each answer into an observation (the messages the environment
appended), and grades a finished episode with the training reward and its components.
Hidden answers stay on the host: the worker's Inspect scorer grades outside the sandbox.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
import uuid
from pathlib import Path
from typing import Any

from sandmle.env.process import EpisodeGone, EpisodeProcess
from sandmle.env.protocol import (
    Action,
    ActionLine,
    DoneLine,
    EpisodeRequest,
    FailedLine,
    Observation,
    ObservationLine,
    WholeEpisode,
    WholeRequest,
)
from sandmle.env.rewards import reward_functions, total_reward
from sandmle.errors import SandmleError
from sandmle.harness.pack import competition_digest, load_pack
from sandmle.specs.environment import (
    DEADLINE_MARGIN_S,
    FALLBACK_TIME_LIMIT_S,
    EnvSettings,
)

EPISODE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class Busy(SandmleError):
    """Every episode slot is taken and the queue is full or the wait ran out."""


class Slots:
    """How many episodes run at once, with a bounded queue and a clear "busy" answer."""

    def __init__(self, running: int, waiting: int, timeout_s: float) -> None:
        self.running, self.waiting, self.timeout_s = running, waiting, timeout_s
        self._free = asyncio.Semaphore(running)
        self._queued = 0

    async def acquire(self) -> None:
        if self._free.locked() and self._queued >= self.waiting:
            raise Busy(f"server busy: {self.running} episodes running, {self._queued} waiting")
        self._queued += 1
        try:
            await asyncio.wait_for(self._free.acquire(), self.timeout_s)
        except TimeoutError:
            raise Busy(
                f"server busy: no episode slot came free in {self.timeout_s:g} s "
                f"({self.running} running)"
            ) from None
        finally:
            self._queued -= 1

    def release(self) -> None:
        self._free.release()


class PackTasks:
    """The task ids a server may run, read once from the pack (confined as every pack load)."""

    def __init__(self, settings: EnvSettings) -> None:
        pack = settings.pack
        if pack is None:
            from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir

            pack = str(builtin_pack_dir())
        self.pack = str(Path(pack).resolve())
        competitions = load_pack(self.pack, settings.tasks).competitions
        self.ids = [c.id for c in competitions]
        # each task's content: a trainer checks the server runs the tasks it trains on
        self.digests = {c.id: competition_digest(c) for c in competitions}

    def pick(self, task: str | None, index: int | None, seed: int | None) -> str:
        """A task named, by index, by seed, or the first."""
        if task is not None:
            if task not in self.ids:
                raise SandmleError(f"unknown task {task!r}: this server has {_listing(self.ids)}")
            return task
        if index is not None:
            if not 0 <= index < len(self.ids):
                raise SandmleError(f"task index {index} out of range 0..{len(self.ids) - 1}")
            return self.ids[index]
        return random.Random(seed).choice(self.ids) if seed is not None else self.ids[0]


def _listing(ids: list[str], shown: int = 8) -> str:
    more = f", … ({len(ids)} in all)" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


class Environment:
    """One client's environment: at most one running episode at a time."""

    def __init__(self, settings: EnvSettings, tasks: PackTasks, slots: Slots) -> None:
        self.settings, self.tasks, self.slots = settings, tasks, slots
        self.state_dir = Path(settings.state_dir or Path(settings.log_dir) / ".state")
        self.process: EpisodeProcess | None = None
        self.seen: list[dict[str, Any]] = []
        self.turns: list[str] = []
        self.last = Observation()
        self._slot = False
        self._timer: asyncio.TimerHandle | None = None
        self._idle: asyncio.TimerHandle | None = None
        self.expired = False
        self.idled = False

    async def reset(
        self,
        task: str | None = None,
        index: int | None = None,
        seed: int | None = None,
        episode_id: str | None = None,
    ) -> Observation:
        """Start an episode (ending the running one) and return its first observation."""
        await self.aclose()
        self.seen, self.turns, self.expired, self.idled = [], [], False, False
        episode_id = self._episode_id(episode_id)
        request = EpisodeRequest(
            episode_id=episode_id,
            pack=self.tasks.pack,
            task=self.tasks.pick(task, index, seed),
            episode=self.settings.episode,
            seed=seed,
            log_dir=str(Path(self.settings.log_dir).resolve()),
        )
        return await self._answered(await self._launch(request), first=True)

    async def whole(self, body: WholeRequest) -> WholeEpisode:
        """Run one whole episode of ``body.scaffold`` against ``body.model``'s endpoint: the
        scaffold keeps its control loop (a search tree's calls are independent), under the
        served episode spec's limits, slots and deadline."""
        from sandmle.env.task import WHOLE_SOLVERS, episode_agent  # scaffolds: only here

        await self.aclose()
        self.seen, self.turns, self.expired, self.idled = [], [], False, False
        episode_id = self._episode_id(body.episode_id)
        if body.scaffold not in WHOLE_SOLVERS:
            raise SandmleError(
                f"scaffold {body.scaffold[:80]!r}: unknown (whole episodes: "
                f"{', '.join(WHOLE_SOLVERS)})"
            )
        spec = self.settings.episode.model_copy(
            update={"solver": body.scaffold, "solver_args": body.scaffold_args}
        )
        episode_agent(spec, whole=True)  # a wrong scaffold argument: one line, no worker
        request = EpisodeRequest(
            episode_id=episode_id,
            pack=self.tasks.pack,
            task=self.tasks.pick(body.task, body.index, body.seed),
            episode=spec,
            seed=body.seed,
            log_dir=str(Path(self.settings.log_dir).resolve()),
            model=body.model,
        )
        try:
            answer = await self._launch(request)
        finally:
            await self.aclose()
        reply = WholeEpisode(episode_id=episode_id, task=request.task, scaffold=body.scaffold)
        if isinstance(answer, FailedLine):
            return reply.model_copy(update={"error": answer.error})
        if not isinstance(answer, DoneLine):  # a step-wise turn from a whole episode's worker
            return reply.model_copy(update={"error": "the worker asked for a step-wise turn"})
        self.turns = [_content(call.reply) for call in answer.calls]
        reward, components = self.reward(answer)
        return reply.model_copy(
            update={
                "calls": answer.calls, "messages": answer.messages, "reward": reward,
                "components": components, "grade": answer.grade, "error": answer.error,
                "log": answer.log, "seconds": answer.seconds, "tool_calls": answer.tool_calls,
            }
        )  # fmt: skip

    def _episode_id(self, episode_id: str | None) -> str:
        episode_id = episode_id or uuid.uuid4().hex[:16]
        if not EPISODE_ID.match(episode_id):
            raise SandmleError(f"episode_id {episode_id[:80]!r}: use 1-64 of A-Z a-z 0-9 . _ -")
        return episode_id

    async def _launch(self, request: EpisodeRequest) -> ObservationLine | DoneLine | FailedLine:
        """Take a slot, start the worker under the deadline; its first answer."""
        await self.slots.acquire()
        self._slot = True
        self.process = EpisodeProcess(request, self.state_dir)
        self.last = Observation(episode_id=request.episode_id, task=request.task)
        self._timer = asyncio.get_running_loop().call_later(self.deadline_s(), self._expire)
        try:
            return await self.process.start()
        except BaseException as exc:
            await self.aclose()
            if isinstance(exc, SandmleError) and self.expired:  # killed at any point of start
                raise SandmleError(self._deadline_passed()) from None
            raise

    async def step(self, action: Action | dict[str, Any]) -> Observation:
        """Hand the running episode one policy turn; the environment's answer."""
        turn = self._checked(action)
        if self.process is None or self.process.ended:
            if self.idled:
                raise SandmleError(
                    f"the episode was closed after {self.settings.idle_timeout_s:g} s without "
                    "a step (idle_timeout_s): reset to start another"
                )
            raise SandmleError("no running episode: reset first")
        self._cancel_idle()  # a step in flight is not idleness, however long its command runs
        if turn.limit is None:  # a limit is no turn of the policy's (no format to reward)
            self.turns.append(turn.text if turn.text is not None else _content(turn.message))
        line = ActionLine(message=turn.message, text=turn.text, limit=turn.limit)
        try:
            answer = await self.process.act(line)
        except EpisodeGone as exc:
            answer = FailedLine(error=self._deadline_passed() if self.expired else str(exc))
        return await self._answered(answer, first=False)

    async def _answered(
        self, answer: ObservationLine | DoneLine | FailedLine, first: bool
    ) -> Observation:
        observation = self._observe(answer, first)
        if observation.done:
            await self.aclose()
        else:
            self._idle = asyncio.get_running_loop().call_later(
                self.settings.idle_timeout_s, self._go_idle
            )
        return observation

    def _go_idle(self) -> None:
        if self.process is not None and not self.process.ended:
            self.idled = True
            self.close()

    def _cancel_idle(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _checked(self, action: Action | dict[str, Any]) -> Action:
        raw = action.model_dump() if isinstance(action, Action) else action
        size = len(json.dumps(raw, default=str))
        if size > self.settings.max_action_bytes:
            raise SandmleError(
                f"action of {size} bytes: the limit is {self.settings.max_action_bytes}"
            )
        turn = Action.model_validate(raw)
        if sum(x is not None for x in (turn.message, turn.text, turn.limit)) != 1:
            raise SandmleError(
                "an action is one of message (a chat dict), text (raw output) or limit "
                "(the policy's context is spent)"
            )
        return turn

    def _observe(self, answer: ObservationLine | DoneLine | FailedLine, first: bool) -> Observation:
        base = Observation(
            episode_id=self.last.episode_id, task=self.last.task, turn=len(self.turns)
        )
        if isinstance(answer, ObservationLine):
            new, rewritten = self._new_messages(answer.messages, first)
            self.seen = answer.messages
            tools = answer.tools if first else []
            self.last = base.model_copy(
                update={"messages": new, "tools": tools, "rewritten": rewritten}
            )
            return self.last
        if isinstance(answer, FailedLine):
            self.last = base.model_copy(update={"done": True, "error": answer.error})
        else:
            new, rewritten = self._new_messages(answer.messages, first)
            reward, components = self.reward(answer)
            self.last = base.model_copy(
                update={
                    "messages": new, "done": True, "reward": reward, "components": components,
                    "grade": answer.grade, "error": answer.error, "log": answer.log,
                    "rewritten": rewritten, "seconds": answer.seconds,
                    "tool_calls": answer.tool_calls, "cut_waiting": answer.cut_waiting,
                }
            )  # fmt: skip
            self.seen = answer.messages or self.seen
        return self.last

    def _new_messages(self, messages: list[dict], first: bool) -> tuple[list[dict], bool]:
        """The messages after the last observation and the policy's reply to it."""
        if first:
            return messages, False
        if messages[: len(self.seen)] == self.seen:
            return messages[len(self.seen) + 1 :], False
        return messages, True

    def reward(self, done: DoneLine) -> tuple[float | None, dict[str, float]]:
        """The episode's reward and its unweighted components (none for a failed episode)."""
        if done.error is not None:
            return None, {}
        medal = {k: math.nan if v is None else v for k, v in done.grade.items()}
        extra = {"medal": [medal], "assistant_turns": [self.turns]}
        funcs, _ = reward_functions(self.settings.reward)
        values = {f.__name__: f([""], **extra)[0] or 0.0 for f in funcs}
        return total_reward(self.settings.reward, [""], **extra)[0], values

    def deadline_s(self) -> float:
        if self.settings.deadline_s is not None:
            return self.settings.deadline_s
        limit = self.settings.episode.task_limits().time_limit or FALLBACK_TIME_LIMIT_S
        return limit + DEADLINE_MARGIN_S

    def _deadline_passed(self) -> str:
        return f"the episode passed its deadline of {self.deadline_s():g} s (worker killed)"

    def _expire(self) -> None:
        if self.process is not None and not self.process.ended:
            self.expired = True
            self.process.kill()

    def state(self) -> dict[str, Any]:
        """The episode so far: its id, task, turn count, whether done, the whole conversation."""
        return {
            "episode_id": self.last.episode_id or None,
            "step_count": len(self.turns),
            "task": self.last.task,
            "done": self.last.done,
            "messages": self.seen,
            "episode": self.settings.episode.model_dump(mode="json"),
            "task_digests": self.tasks.digests,
        }

    async def aclose(self) -> None:
        """``close``, then wait until the worker is reaped (an event loop that ends right after
        then leaves no subprocess transport behind)."""
        process = self.process
        self.close()
        if process is not None:
            await process.wait_closed()

    def close(self) -> None:
        """End the running episode, if any: its worker and sandbox killed, its slot freed."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._cancel_idle()
        if self.process is not None:
            self.process.kill()
        if self._slot:
            self._slot = False
            self.slots.release()
        self.process = None


def _content(message: dict[str, Any] | None) -> str:
    content = (message or {}).get("content") or ""
    return content if isinstance(content, str) else json.dumps(content)
