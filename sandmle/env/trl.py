"""TRL's ``GRPOTrainer(environment_factory=...)`` over ``sandmle env serve``.

TRL makes one environment per rollout, calls its ``reset(**row)`` with the dataset row, exposes
its public methods as the policy's tools (their JSON schemas rendered from the signatures and
Google-style docstrings), runs each tool call the policy writes, and scores the rollout with
``get_reward()``. ``SandmleToolEnv`` is that class for a sandmle server: one episode per
rollout, each tool call one step of the server's episode, the reward the server's.

>>> from trl import GRPOConfig, GRPOTrainer  # doctest: +SKIP
>>> trainer = GRPOTrainer(model, args=GRPOConfig(...), train_dataset=rows,  # doctest: +SKIP
...     environment_factory=environment_factory("http://127.0.0.1:8100"))

The tool methods mirror the tools of the server's react episodes (``bash``, ``python``,
``validate_submission``, ``submit``), descriptions included, so the policy reads the same
tools under TRL as under ``inspect eval``. This module imports neither torch nor TRL: TRL
imports it.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any

from sandmle.env.client import SandmleEnvClient
from sandmle.env.protocol import Action, Observation
from sandmle.errors import SandmleError

logger = logging.getLogger(__name__)

RESET_KEYS = ("task", "index", "seed")
"""The dataset columns ``reset`` forwards to the server (any other column is TRL's or the
user's). A group's rollouts share their row, so they share the task."""
FINAL_ANSWER = "Time is up: grading the submission as it stands."
"""The ``submit`` answer ``get_reward`` sends for a policy that did not submit."""


class EpisodeOver(RuntimeError):
    """A tool was called after the episode ended: TRL counts it as a failed tool call."""


class SandmleToolEnv:
    """One rollout's episode on a ``sandmle env serve`` server, as TRL's environment class.

    ``reset`` starts the episode and returns its first prompt; every tool method is one step
    of it (one assistant turn with that one tool call) and returns the tool's output;
    ``get_reward`` ends an episode the policy left open by submitting, and returns the
    server's reward. The connection opens on the first ``reset`` (TRL builds a probe instance
    that never runs) and stays open across episodes.

    Two server settings bound a run: TRL resets every rollout of a batch before it generates,
    so the server's ``--max-episodes`` must be at least the rollouts per batch (the rest wait
    for a slot that frees only when the batch ends, and fail as busy); and the server destroys
    a session silent for its ``idle_timeout_s`` (300 s by default), episode included, so that
    must exceed the longest generation of a batch. TRL passes a tool only its arguments, not
    the turn's text, so the server's ``format_reward`` (reasoning blocks) is 0 for every
    rollout: an offset that moves no advantage.
    """

    def __init__(
        self, base_url: str, token: str | None = None, message_timeout_s: float = 3600.0
    ) -> None:
        self.base_url, self.token, self.message_timeout_s = base_url, token, message_timeout_s
        self._client: Any = None
        self.observation = Observation(done=True)
        """The server's last answer (``reward``, ``components``, ``grade``, ``log`` once done)."""

    def reset(self, **kwargs: Any) -> str:
        """Start an episode of the row's ``task`` (or its ``index`` or ``seed``; else the server's
        first task) and return its first prompt, which TRL appends to the row's last user
        message."""
        chosen = {k: kwargs[k] for k in RESET_KEYS if kwargs.get(k) is not None}
        result = self._connected().reset(**chosen)
        self.observation = result.observation
        if self.observation.done:  # the sandbox did not start: the rollout is left unscored
            logger.warning("episode failed at reset: %s", self.observation.error)
            return f"(The environment failed to start: {self.observation.error})"
        _check_tools(type(self), self.observation.tools)
        return "\n\n".join(_text(m) for m in self.observation.messages)

    def bash(self, command: str) -> str:
        """Use this function to execute bash commands.

        Args:
            command: The bash command to execute.
        """
        return self._call("bash", command=command)

    def python(self, code: str) -> str:
        """Use the python function to execute Python code.

        The Python tool executes single-run Python scripts. Important notes:
        1. Each execution is independent - no state is preserved between runs
        2. You must explicitly use print() statements to see any output
        3. Simply writing expressions (like in notebooks) will not display results
        4. The script cannot accept interactive input during execution
        5. Return statements alone won't produce visible output
        6. All variables and imports are cleared between executions
        7. Standard output (via print()) is the only way to see results

        Args:
            code: The python code to execute.
        """
        return self._call("python", code=code)

    def validate_submission(self) -> str:
        """Check /home/submission/submission.csv against the competition's submission format."""
        return self._call("validate_submission")

    # One line: a docstring's line breaks stay in the description the policy reads.
    def submit(self, answer: str) -> str:
        """Call this once /home/submission/submission.csv holds your final predictions; it ends your work. Pass a one-line summary of your solution as the answer.

        Args:
            answer: Submitted answer
        """
        return self._call("submit", answer=answer)

    def get_reward(self) -> float | None:
        """The episode's reward; an episode still open is submitted first (the sandbox's
        ``submission.csv`` is graded as it stands). None for an episode that failed for a
        reason not the policy's (TRL leaves such a rollout out of its group's baseline)."""
        if not self.observation.done:
            self._step("submit", {"answer": FINAL_ANSWER})
        if not self.observation.done:
            raise RuntimeError("submit did not end the episode: is the server's scaffold react?")
        return self.observation.reward

    def _call(self, name: str, **arguments: Any) -> str:
        """One tool call as one step: the tool's output, then whatever else the environment
        said after it (a note that the episode ended)."""
        if self.observation.done:
            raise EpisodeOver(
                f"no running episode (it ended, or none was reset): {name} did not run"
            )
        self._step(name, arguments)
        return "\n\n".join(_text(m) for m in _replies(self.observation)) or _ending(
            self.observation
        )

    def _step(self, name: str, arguments: dict[str, Any]) -> None:
        call = {"type": "function", "function": {"name": name, "arguments": arguments}}
        message = {"role": "assistant", "content": "", "tool_calls": [call]}
        self.observation = self._connected().step(Action(message=message)).observation

    def _connected(self) -> Any:
        if self._client is None:
            client = SandmleEnvClient(
                self.base_url, token=self.token, message_timeout_s=self.message_timeout_s
            )
            self._client = client.sync()
            self._client.connect()
        return self._client

    def _close(self) -> None:
        """Close the connection (the server ends its episode); TRL itself never closes."""
        if self._client is not None:
            self._client.close()
            self._client = None


def _check_tools(cls: type, offered: list[dict[str, Any]]) -> None:
    """Fail when the server's episodes offer other tools than the class's methods (another
    scaffold, a toolkit): the policy would be shown tools that are not the episode's."""
    ours = sorted(
        name
        for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    )
    theirs = sorted(str(t.get("function", {}).get("name")) for t in offered)
    if theirs != ours:
        raise SandmleError(
            f"the server's episodes offer the tools {', '.join(theirs)}; {cls.__name__} has "
            f"{', '.join(ours)}: serve the react scaffold without a toolkit"
        )


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))


def _replies(observation: Observation) -> list[dict[str, Any]]:
    """The environment's messages after the call: all new ones, or those after the last
    assistant turn when the scaffold rewrote the conversation (they are all of it then)."""
    messages = observation.messages
    if observation.rewritten:
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        messages = messages[last + 1 :]
    return [m for m in messages if m.get("role") != "assistant"]


def _ending(observation: Observation) -> str:
    if observation.error:
        return f"(The episode ended: {observation.error})"
    return "(The episode ended.)" if observation.done else ""


def environment_factory(
    base_url: str, token: str | None = None, message_timeout_s: float = 3600.0
) -> Callable[[], SandmleToolEnv]:
    """TRL's ``environment_factory``: a zero-argument callable that makes one
    ``SandmleToolEnv`` on the server at ``base_url`` (``token``: the server's, needed off
    loopback; default ``$SANDMLE_ENV_TOKEN``)."""
    return functools.partial(SandmleToolEnv, base_url, token, message_timeout_s)
