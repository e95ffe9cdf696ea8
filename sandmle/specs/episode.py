"""The episode spec: what one episode is, for every consumer of episodes.

The Seed-SFT teacher, GRPO's rollouts, the eval's trained scaffold and the environment server
all take one ``EpisodeSpec``: the task's limits (``-T``), the scaffold and its ``-S`` arguments,
the turn budget and the sampling settings. "What training runs is what eval runs" then holds by
construction: each consumer derives its task arguments, solver and generation config from the
same object, and a turn budget is one number (``max_turns``), never a message limit beside it.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from sandmle.errors import SandmleError
from sandmle.harness.task import TaskLimits
from sandmle.specs.files import Strict

FIRST_MESSAGES = 2
"""The system message and the task, before the agent's first turn."""
MESSAGES_PER_TURN = 2
"""One action and the environment's answer to it."""
RUNNER_ARGS = frozenset({"epochs"})
"""``-T`` arguments that belong to the runner (how often a sample runs), not to an episode."""


def message_limit(turns: int) -> int:
    """Inspect's message limit for ``turns`` policy turns.

    >>> message_limit(1), message_limit(30)
    (4, 62)
    """
    return FIRST_MESSAGES + MESSAGES_PER_TURN * turns


class EpisodeSpec(Strict):
    """One episode: the task's limits, the scaffold, the turn budget, the sampling."""

    solver: str = "react"
    """The scaffold, as ``inspect eval --solver sandmle/<solver>`` runs it."""
    solver_args: dict[str, Any] = Field(default_factory=dict)
    """The scaffold's ``-S`` arguments."""
    max_turns: int | None = Field(default=None, ge=1)
    """Policy turns per episode; the task's message limit is ``2 * max_turns + 2``. None: the
    budget profile's message limit."""
    max_turn_tokens: int = Field(default=2048, ge=1)
    """Tokens the policy samples per turn (Inspect's ``max_tokens``)."""
    temperature: float = Field(default=1.0, ge=0)
    """Sampling temperature of every turn."""
    limits: dict[str, Any] = Field(default_factory=dict)
    """The task's ``-T`` limits (``TaskLimits``: profile, sandbox, time_limit, command_timeout,
    memory_mb, toolkit, ...), checked as the task checks them. The message limit is not among
    them: it is ``max_turns``."""

    @field_validator("limits")
    @classmethod
    def _task_limits(cls, limits: dict[str, Any]) -> dict[str, Any]:
        if "message_limit" in limits:
            raise ValueError(
                "message_limit is the turn budget: set max_turns (message_limit = 2 * max_turns + 2)"
            )
        runner = sorted(RUNNER_ARGS & set(limits))
        if runner:
            raise ValueError(f"{', '.join(runner)}: set it on the runner, not the episode")
        try:
            TaskLimits.from_args(limits)
        except SandmleError as exc:
            raise ValueError(str(exc)) from None
        return limits

    @property
    def scaffold(self) -> str:
        """The scaffold's name without the ``sandmle/`` prefix."""
        return self.solver.removeprefix("sandmle/")

    def task_args(self) -> dict[str, Any]:
        """The ``-T`` arguments of the episode's task."""
        turns = {"message_limit": message_limit(self.max_turns)} if self.max_turns else {}
        return {**self.limits, **turns}

    def task_limits(self) -> TaskLimits:
        return TaskLimits.from_args(self.task_args())

    def turns(self) -> int:
        """Policy turns the task's message limit leaves (the profile's when ``max_turns`` is None)."""
        if self.max_turns is not None:
            return self.max_turns
        limit = self.task_limits().message_limit
        if limit is None:
            raise SandmleError("the episode has no turn budget: set max_turns")
        return max(1, (limit - FIRST_MESSAGES) // MESSAGES_PER_TURN)

    def generate_args(self) -> dict[str, Any]:
        """Inspect ``GenerateConfig`` fields every turn is sampled with."""
        return {"max_tokens": self.max_turn_tokens, "temperature": self.temperature}

    @property
    def toolkit(self) -> bool:
        return bool(self.limits.get("toolkit", False))
