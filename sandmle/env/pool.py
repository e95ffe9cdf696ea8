"""A pool of sandmle environments on a Ray cluster: actors, each holding a bounded number of
episodes on its node, placed by Ray's scheduler with the resources they declare.

An ``EnvironmentHost`` actor is the environment server without the network: the same
``Environment`` per episode (worker process, sandbox, deadline, idle timer, reward), the same
``Action`` in and ``Observation`` out, addressed by episode id; and whole episodes. It tells
its node (Ray's node id and the host name, ``where``), so a caller can say where each episode
ran. On start an actor reaps what a previous actor of its name left (its own
ledger, ``<log_dir>/.state/<name>``); its episodes' workers die with it (parent-death signal),
so a lost node leaves no sandbox behind. The caller's side (``RayPool``) starts the actors,
lends their slots out (step-wise episodes, or whole ones: ``whole``), forgets an actor that
died so its episodes are rerun elsewhere, and starts another in its place wherever Ray finds
room, so the pool keeps its size.

Ray is imported here only: ``pip install "sandmle[ray]"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from uuid import uuid4

from sandmle.env.environment import Environment, PackTasks, Slots
from sandmle.env.process import reap
from sandmle.env.protocol import Action, Observation, WholeEpisode, WholeRequest
from sandmle.errors import SandmleError
from sandmle.specs.environment import EnvSettings
from sandmle.specs.training import RolloutRay

logger = logging.getLogger(__name__)
SWEEP_S = 5.0
"""How often an actor looks for what dead workers of its node's other actors left."""
POLL_S = 1.0
"""How often a lease that waits for room looks whether a replacement actor has started."""


class EnvironmentHost:
    """One actor's environments, each an episode addressed by its id (run as a Ray actor)."""

    def __init__(self, settings: EnvSettings, name: str) -> None:
        import ray

        self.settings, self.name = settings, name
        self.state_dir = Path(settings.state_dir or Path(settings.log_dir) / ".state")
        self.reaped = reap(self.state_dir)
        self._swept = 0.0
        self.sweep()
        self.tasks = PackTasks(settings)
        self.slots = Slots(settings.max_episodes, settings.max_waiting, settings.queue_timeout_s)
        self.envs: dict[str, Environment] = {}
        node = ray.get_runtime_context().get_node_id()
        self.node = {"actor": name, "node_id": node, "host": socket.gethostname()}

    def sweep(self) -> int:
        """Release what dead workers of this node's other actors left (a killed actor's workers
        die with it, by the parent-death signal, and cannot unmount their sandbox quotas);
        at most every ``SWEEP_S``. How many episodes' leftovers it released."""
        if time.monotonic() - self._swept < SWEEP_S:
            return 0
        self._swept = time.monotonic()
        others = (d for d in self.state_dir.parent.glob("actor-*") if d != self.state_dir)
        return sum(reap(other, dead_only=True) for other in others)

    def where(self) -> dict[str, Any]:
        """This actor's name, Ray node id, host name and pid, and what it reaped on start."""
        return {**self.node, "pid": os.getpid(), "reaped": self.reaped}

    def state(self) -> dict[str, Any]:
        """The served episode spec and task digests (as the server's ``state``), and the node."""
        return {
            "episode": self.settings.episode.model_dump(mode="json"),
            "task_digests": self.tasks.digests,
            "node": self.node,
        }

    async def reset(
        self, episode_id: str, task: str | None = None, index: int | None = None
    ) -> Observation:
        """Start episode ``episode_id`` (ending one of that id still running); its first
        observation."""
        await self.close(episode_id)
        self.sweep()
        env = self.envs[episode_id] = Environment(self.settings, self.tasks, self.slots)
        try:
            observation = await env.reset(task=task, index=index, episode_id=episode_id)
        except BaseException:
            await self.close(episode_id)
            raise
        if observation.done:
            self.envs.pop(episode_id, None)
        return observation

    async def step(self, episode_id: str, action: Action) -> Observation:
        """One policy turn of episode ``episode_id``; the environment's answer."""
        env = self.envs.get(episode_id)
        if env is None:
            raise SandmleError(f"episode {episode_id!r} is not running on {self.name}")
        observation = await env.step(action)
        if observation.done:
            self.envs.pop(episode_id, None)
        return observation

    async def close(self, episode_id: str) -> None:
        """End episode ``episode_id`` if it runs: its worker and sandbox killed, slot freed."""
        env = self.envs.pop(episode_id, None)
        if env is not None:
            await env.aclose()

    async def whole(self, body: WholeRequest) -> WholeEpisode:
        """One whole episode of a scaffold against the caller's endpoint (``POST /episodes``)."""
        env = Environment(self.settings, self.tasks, self.slots)
        key = f"whole-{id(env)}"  # held like any episode: a shutdown ends it too
        self.envs[key] = env
        try:
            return await env.whole(body)
        finally:
            self.envs.pop(key, None)

    def workers(self) -> list[int]:
        """The pids of this actor's running episode workers."""
        return [
            env.process.proc.pid
            for env in self.envs.values()
            if env.process is not None and env.process.proc is not None
        ]

    def shutdown(self) -> None:
        """End every episode (workers and sandboxes killed); the actor may then be killed."""
        for env in list(self.envs.values()):
            env.close()
        self.envs.clear()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.shutdown()


def actor_settings(env: EnvSettings, pool: RolloutRay, name: str) -> EnvSettings:
    """One actor's settings: its slots, its deadline, absolute paths, its own ledger."""
    log_dir = Path(env.log_dir).resolve()
    pack = str(Path(env.pack).resolve()) if env.pack is not None else None
    return env.model_copy(
        update={
            "pack": pack,
            "log_dir": str(log_dir),
            "state_dir": str(log_dir / ".state" / name),
            "max_episodes": pool.episodes_per_actor,
            "max_waiting": pool.episodes_per_actor,  # the pool lends no more than the slots
            "deadline_s": pool.deadline_s or env.deadline_s,
        }
    )


class Lent:
    """An actor's handle with its name, node and how many of its slots are lent out."""

    def __init__(self, handle: Any, name: str, node: dict[str, Any]) -> None:
        self.handle, self.name, self.node = handle, name, node
        self.running = 0
        self.alive = True


class Lending:
    """Episode slots over a list of actors: lent on the live actor with the most room."""

    def __init__(self, actors: list[Lent], per_actor: int, retries: int = 0) -> None:
        self.actors, self.per_actor, self.retries = actors, per_actor, retries
        self._changed: asyncio.Condition | None = None
        self._changed_loop: asyncio.AbstractEventLoop | None = None

    def live(self) -> list[Lent]:
        return [a for a in self.actors if a.alive]

    def starting(self) -> int:
        """How many replacement actors are on their way (``RayPool`` starts them)."""
        return 0

    def admit(self) -> None:
        """Lend the slots of replacement actors that have started (``RayPool``)."""

    def replace(self, actor: Lent) -> None:
        """Start an actor in place of ``actor``, which died (``RayPool``)."""

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[Lent]:
        """A slot on the live actor with the most room; waits while every slot is lent (or,
        with every actor dead, while a replacement is on its way)."""
        changed = self._condition()
        async with changed:
            while True:
                self.admit()
                actor = self._roomiest()
                if actor is not None:
                    break
                if not self.live() and not self.starting():
                    raise SandmleError("every actor of the Ray pool died: no episode can run")
                with contextlib.suppress(TimeoutError):  # a replacement is admitted on a poll
                    await asyncio.wait_for(changed.wait(), POLL_S if self.starting() else None)
            actor.running += 1
        try:
            yield actor
        finally:
            async with changed:
                actor.running -= 1
                changed.notify_all()

    def _condition(self) -> asyncio.Condition:
        """The condition slots free up on, one per event loop (each run is ``asyncio.run``)."""
        loop = asyncio.get_running_loop()
        if self._changed is None or self._changed_loop is not loop:
            self._changed, self._changed_loop = asyncio.Condition(), loop
        return self._changed

    def _roomiest(self) -> Lent | None:
        room = [a for a in self.live() if a.running < self.per_actor]
        return min(room, key=lambda a: a.running) if room else None

    def lost(self, actor: Lent) -> None:
        """Forget an actor that died (with its node): its slots are lent no more, and another
        is started in its place (``replace``)."""
        if actor.alive:
            actor.alive = False
            self.replace(actor)

    async def whole(self, body: WholeRequest) -> WholeEpisode:
        """One whole episode (``POST /episodes`` on the pool) on the live actor with the most
        room; run again from scratch on another actor, under the same episode id, when its
        actor died (up to ``retries`` times; the reply holds the last run's calls only)."""
        body = body.model_copy(
            update={"episode_id": body.episode_id or f"whole-{uuid4().hex[:16]}"}
        )
        lost: list[str] = []
        for _ in range(self.retries + 1):
            async with self.lease() as actor:
                try:
                    episode: WholeEpisode = await actor.handle.whole.remote(body)
                except lost_errors() as exc:
                    self.lost(actor)
                    lost.append(f"{actor.name} ({type(exc).__name__})")
                    logger.warning("episode %s: %s died; run again", body.episode_id, actor.name)
                    continue
            return episode
        raise SandmleError(
            f"ray pool: episode {body.episode_id} lost its actor {len(lost)} times: "
            f"{', '.join(lost)}"
        )


class RayPool(Lending):
    """The caller's side: starts the actors, lends out their episode slots, forgets the dead
    and starts others in their place."""

    def __init__(
        self, env: EnvSettings, settings: RolloutRay, host: type = EnvironmentHost
    ) -> None:
        """Start ``settings.actors`` actors of ``host`` (``EnvironmentHost``'s methods; the
        benchmark's sleeping stand-in measures the pool alone) and wait until all run."""
        ray = ray_module()
        if not ray.is_initialized():
            ray.init(address=settings.address, log_to_driver=False)
        self.settings = settings
        per = settings.episodes_per_actor
        options: dict[str, Any] = {
            "num_cpus": settings.cpus_per_episode * per,
            "resources": dict(settings.resources),
            "max_restarts": 0,  # a dead actor's episodes go to the others (the caller retries)
            "max_concurrency": 4 * per + 8,
        }
        if settings.memory_per_episode_mb:
            options["memory"] = settings.memory_per_episode_mb * per * 1024 * 1024
        if settings.spread:
            options["scheduling_strategy"] = "SPREAD"
        remote = ray.remote(host).options(**options)
        self._start = lambda name: remote.remote(actor_settings(env, settings, name), name)
        self._names = (f"actor-{i}" for i in itertools.count())
        names = [next(self._names) for _ in range(settings.actors)]
        handles = [self._start(n) for n in names]
        try:
            wheres = ray.get([h.where.remote() for h in handles], timeout=settings.start_timeout_s)
        except ray.exceptions.GetTimeoutError:
            for handle in handles:
                ray.kill(handle)
            raise SandmleError(
                f"the Ray pool's {settings.actors} actors did not all start in "
                f"{settings.start_timeout_s:g} s: the cluster lacks the CPUs, memory or resources "
                f"they declare ({options['num_cpus']:g} CPUs, {settings.resources or 'no'} "
                "custom resources each; `ray status` shows what is free)"
            ) from None
        actors = [Lent(h, n, w) for h, n, w in zip(handles, names, wheres, strict=True)]
        self.pending: list[tuple[Any, str, Any, float]] = []
        """Replacement actors on their way: handle, name, their ``where`` call, when started."""
        self.served: dict[str, Any] | None = None
        """The first actor's episode spec and task digests: a replacement must serve the same."""
        self.closed = False
        super().__init__(actors, per, settings.retries)

    def starting(self) -> int:
        return len(self.pending)

    def replace(self, actor: Lent) -> None:
        """Start a new actor (a new name: its own ledger) in place of ``actor``, on whichever
        node Ray finds room; its slots are lent once it runs (``admit``)."""
        if self.closed:
            return
        name = next(self._names)
        handle = self._start(name)
        self.pending.append((handle, name, handle.where.remote(), time.monotonic()))
        logger.warning("ray pool: %s died; %s starts in its place", actor.name, name)

    def admit(self) -> None:
        """Lend the slots of every replacement that has started and serves what the others
        serve. One not placed yet waits for room while other actors run (a node that joins
        gets it); with none left, it is given up after ``start_timeout_s``."""
        ray = ray_module()
        for entry in list(self.pending):
            handle, name, where, since = entry
            ready, _ = ray.wait([where], timeout=0)
            waited = time.monotonic() - since
            if not ready and (self.live() or waited < self.settings.start_timeout_s):
                continue
            self.pending.remove(entry)
            try:
                if not ready:
                    raise SandmleError(f"not placed in {self.settings.start_timeout_s:g} s")
                node = ray.get(where)
                state = ray.get(handle.state.remote(), timeout=60)
                if self.served is not None and _spec(state) != self.served:
                    raise SandmleError("it serves another episode spec or other tasks")
            except (*lost_errors(), *task_errors(), ray.exceptions.GetTimeoutError) as exc:
                logger.warning("ray pool: replacement %s dropped: %s", name, exc)
                ray.kill(handle)
                continue
            self.actors.append(Lent(handle, name, node))

    def states(self) -> list[dict[str, Any]]:
        """Every live actor's ``state``; an actor found dead (since the last step) is forgotten
        (and replaced)."""
        ray, states = ray_module(), []
        self.admit()
        for actor in self.live():
            try:
                states.append(ray.get(actor.handle.state.remote()))
            except lost_errors():
                self.lost(actor)
        if not self.live() and not self.pending:
            raise SandmleError("every actor of the Ray pool died: no episode can run")
        if states and self.served is None:
            self.served = _spec(states[0])
        return states

    def shutdown(self) -> None:
        """End every actor's episodes and the actors (replacements on their way too)."""
        ray = ray_module()
        self.closed = True
        for actor in self.live():
            with contextlib.suppress(Exception):
                ray.get(actor.handle.shutdown.remote(), timeout=30)
            ray.kill(actor.handle)
            actor.alive = False
        while self.pending:
            ray.kill(self.pending.pop()[0])


def _spec(state: dict[str, Any]) -> dict[str, Any]:
    return {k: state.get(k) for k in ("episode", "task_digests")}


def lost_errors() -> tuple[type[BaseException], ...]:
    """What Ray raises when an actor or its node is gone (not the episode's own error)."""
    from ray.exceptions import NodeDiedError, RayActorError

    return (RayActorError, NodeDiedError)


def task_errors() -> tuple[type[BaseException], ...]:
    """What an actor's method raised itself (a bad task, a busy actor): the episode failed."""
    from ray.exceptions import RayTaskError

    return (RayTaskError, SandmleError)


def ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise SandmleError('rollout.backend: ray needs Ray: pip install "sandmle[ray]"') from None
    return ray
