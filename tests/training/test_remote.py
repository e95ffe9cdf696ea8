"""The Ray backend's retry, without a cluster: an episode whose actor dies mid-way is run again
from scratch on another actor (its token record dropped first, so the result holds one run's
turns), slots are lent on the live actor with the most room and given back, and an episode
that loses every actor it tries ends failed, never scored. Actors here are stand-ins that
answer as ``EnvironmentHost`` does; Ray's own errors are replaced by one of the test's (the
real ones, on a real cluster: ``test_ray_rollouts.py``, slow lane)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from sandmle.env import pool as pool_module
from sandmle.env.pool import Lending, Lent
from sandmle.env.protocol import Action, EndpointModel, Observation, WholeEpisode, WholeRequest
from sandmle.errors import SandmleError
from sandmle.training import remote
from sandmle.training.policy_api import Episode


class Died(Exception):
    """Stands for Ray's ``ActorDiedError``."""


@pytest.fixture(autouse=True)
def fake_ray_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "lost_errors", lambda: (Died,))
    monkeypatch.setattr(pool_module, "task_errors", lambda: (SandmleError,))


class Call:
    """``handle.<method>.remote(...)``: an awaitable, as a Ray actor method's object ref."""

    def __init__(self, method: Any) -> None:
        self.method = method

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        return self.method(*args, **kwargs)


class Actor:
    """An actor whose episodes are one turn long; it dies at its ``dies_at``-th step."""

    def __init__(self, name: str, dies_at: int | None = None) -> None:
        self.name, self.dies_at, self.steps = name, dies_at, 0
        self.reset, self.step, self.close = Call(self._reset), Call(self._step), Call(self._close)
        self.running: set[str] = set()
        self.peak = 0

    async def _reset(self, episode_id: str, task: str) -> Observation:
        self.running.add(episode_id)
        self.peak = max(self.peak, len(self.running))
        await asyncio.sleep(0.01)
        return Observation(episode_id=episode_id, task=task, messages=[{"role": "user"}])

    async def _step(self, episode_id: str, action: Action) -> Observation:
        self.steps += 1
        if self.dies_at is not None and self.steps >= self.dies_at:
            raise Died(f"{self.name} died")
        return Observation(episode_id=episode_id, done=True, grade={"valid_submission": 1.0})

    async def _close(self, episode_id: str) -> None:
        if self.dies_at is not None and self.steps >= self.dies_at:
            raise Died(f"{self.name} died")
        self.running.discard(episode_id)


@dataclass
class Turn:
    message: dict[str, Any]


@dataclass
class Session:
    """``PolicySession``'s side the loop uses: a record per episode key, one turn per call."""

    episodes: dict[str, Episode] = field(default_factory=dict)
    seed: str = "seed-0/step-3/rank-0"

    async def turn(self, key: str, messages: list[dict], tools: list[dict]) -> Turn:
        self.episodes.setdefault(key, Episode()).assistant_turns.append(f"turn of {key}")
        return Turn({"role": "assistant", "content": "x"})


def _pool(*actors: Actor, per_actor: int = 2) -> Lending:
    return Lending([Lent(a, a.name, {"actor": a.name, "node_id": a.name, "host": "h"})
                    for a in actors], per_actor)  # fmt: skip


def test_an_episode_whose_actor_dies_runs_again_elsewhere_with_one_record() -> None:
    doomed, spare = Actor("a", dies_at=1), Actor("b")
    pool, session = _pool(doomed, spare), Session()
    result = asyncio.run(remote.pool_episode(pool, session, "plant-watering", 0, retries=2))
    assert result.error is None and result.medal == {"valid_submission": 1.0}
    assert result.attempts == 2 and result.where["actor"] == "b"
    assert session.episodes["plant-watering#0"].assistant_turns == ["turn of plant-watering#0"]
    assert [a.alive for a in pool.actors] == [False, True]
    assert [a.running for a in pool.actors] == [0, 0]  # every slot given back


def test_an_episode_that_loses_every_actor_fails_unscored() -> None:
    pool, session = _pool(Actor("a", dies_at=1), Actor("b", dies_at=1)), Session()
    result = asyncio.run(remote.pool_episode(pool, session, "bike-rentals", 1, retries=1))
    assert result.error is not None and "lost its actor 2 times: a (Died), b (Died)" in result.error
    assert result.medal == {} and "bike-rentals#1" not in session.episodes
    with pytest.raises(SandmleError, match="every actor of the Ray pool died"):
        asyncio.run(remote.pool_episode(pool, session, "bike-rentals", 2, retries=1))


def test_slots_go_to_the_roomiest_live_actor_and_never_past_its_bound() -> None:
    first, second = Actor("a"), Actor("b")
    pool, session = _pool(first, second, per_actor=2), Session()

    async def many() -> list[Any]:
        return await asyncio.gather(
            *(remote.pool_episode(pool, session, "plant-watering", i, 0) for i in range(9))
        )

    results = asyncio.run(many())
    assert all(r.error is None and r.attempts == 1 for r in results)
    assert first.peak == second.peak == 2  # both used, neither past its two slots
    assert {r.where["actor"] for r in results} == {"a", "b"}


def test_episode_ids_are_stable_and_in_the_environment_alphabet() -> None:
    from sandmle.env.environment import EPISODE_ID

    short = remote.episode_id("seed-0/step-3/rank-0", "plant-watering#12")
    assert short == "seed-0-step-3-rank-0-plant-watering-12"
    long = remote.episode_id("seed-0/step-3/rank-0", "a-task-with-a-very-long-name-indeed#7" * 2)
    assert long == remote.episode_id(
        "seed-0/step-3/rank-0", "a-task-with-a-very-long-name-indeed#7" * 2
    )
    assert long != remote.episode_id(
        "seed-0/step-4/rank-0", "a-task-with-a-very-long-name-indeed#7" * 2
    )
    assert all(EPISODE_ID.match(i) for i in (short, long))


class Replacing(Lending):
    """A pool that starts a stand-in in place of a dead actor, as ``RayPool`` starts a Ray
    actor: it runs (its slots are lent) from its ``polls``-th look on."""

    def __init__(self, actors: list[Actor], per_actor: int = 2, polls: int = 3) -> None:
        super().__init__([Lent(a, a.name, {"actor": a.name, "node_id": a.name, "host": "h"})
                          for a in actors], per_actor, retries=1)  # fmt: skip
        self.polls, self.looks = polls, 0
        self.pending: list[Actor] = []

    def starting(self) -> int:
        return len(self.pending)

    def replace(self, actor: Lent) -> None:
        self.pending.append(Actor(f"{actor.name}-new"))

    def admit(self) -> None:
        self.looks += 1
        if self.pending and self.looks >= self.polls:
            new = self.pending.pop()
            self.actors.append(
                Lent(new, new.name, {"actor": new.name, "node_id": "n", "host": "h"})
            )


def test_a_dead_actor_is_replaced_and_its_episode_waits_for_the_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool's only actor dies mid-episode: the rerun waits while its replacement starts
    (not 'every actor died'), runs there, and the pool is back to one live actor."""
    monkeypatch.setattr(pool_module, "POLL_S", 0.01)
    pool, session = Replacing([Actor("a", dies_at=1)], polls=4), Session()
    result = asyncio.run(remote.pool_episode(pool, session, "plant-watering", 0, retries=1))
    assert result.error is None and result.attempts == 2 and result.where["actor"] == "a-new"
    assert [a.name for a in pool.live()] == ["a-new"] and not pool.pending
    assert pool.looks >= 4  # it waited for the replacement's start


class WholeActor(Actor):
    """An actor that runs whole episodes; it dies in its first one when ``dies_at`` is set."""

    def __init__(self, name: str, dies_at: int | None = None) -> None:
        super().__init__(name, dies_at)
        self.whole = Call(self._whole)
        self.asked: list[WholeRequest] = []

    async def _whole(self, body: WholeRequest) -> WholeEpisode:
        self.asked.append(body)
        if self.dies_at is not None:
            raise Died(f"{self.name} died")
        assert body.episode_id is not None
        return WholeEpisode(episode_id=body.episode_id, task="plant-watering", scaffold="aide")


def test_a_whole_episode_whose_actor_dies_runs_again_under_its_id() -> None:
    doomed, spare = WholeActor("a", dies_at=1), WholeActor("b")
    pool = Replacing([doomed, spare], polls=10**9)
    model = EndpointModel(base_url="http://127.0.0.1:1/v1", name="m")
    reply = asyncio.run(pool.whole(WholeRequest(model=model)))
    assert len(doomed.asked) == len(spare.asked) == 1
    assert doomed.asked[0].episode_id == spare.asked[0].episode_id == reply.episode_id
    assert reply.episode_id.startswith("whole-") and [a.name for a in pool.live()] == ["b"]
    assert len(pool.pending) == 1  # the dead one's replacement is on its way
    alone = Replacing([WholeActor("c", dies_at=1)], polls=10**9)
    alone.retries = 0
    with pytest.raises(SandmleError, match=r"episode e-1 lost its actor 1 times: c \(Died\)"):
        asyncio.run(alone.whole(WholeRequest(model=model, episode_id="e-1")))
