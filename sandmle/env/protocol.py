"""What crosses the environment's two boundaries: client ↔ host (``Action``, ``Observation``)
and host ↔ an episode's worker process (the ``*Line`` models).

One JSON object per line. The host writes an ``EpisodeRequest`` first, then one ``action`` per
policy turn; the worker answers every turn with an ``observation`` (the conversation the policy
would see, and its tools) and ends with one ``done`` (the grade, the log) or ``failed``.
Messages are Hugging Face chat dicts (``sandmle.env.chat``), the form chat templates render.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from sandmle.specs.episode import EpisodeSpec

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line either side reads (a conversation with long tool outputs)."""


class EpisodeRequest(BaseModel):
    """What the worker runs: one sample of the pack's task under the episode spec."""

    episode_id: str
    pack: str | None = None
    task: str
    episode: EpisodeSpec = Field(default_factory=EpisodeSpec)
    seed: int | None = None
    log_dir: str


class ObservationLine(BaseModel):
    """The worker asks for the policy's next turn."""

    type: Literal["observation"] = "observation"
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]


class DoneLine(BaseModel):
    """The sample ended: Inspect scored it (or recorded why it could not)."""

    type: Literal["done"] = "done"
    grade: dict[str, float | None] = Field(default_factory=dict)
    """The medal scorer's value (``valid_submission``, medal flags, ``score``, ...); a value
    the scorer has not (NaN: no score of an invalid file) is None, as JSON can hold it."""
    error: str | None = None
    """The sample's error: the episode failed for a reason that is not the agent's."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """The final conversation, as the log holds it."""
    log: str = ""
    seconds: float = 0.0
    tool_calls: int = 0
    """Tool calls the sample ran (its tool events; react's ``submit`` included)."""
    cut_waiting: bool = False
    """A sample limit (time, working time) fell while the episode waited for the policy's
    turn: the clock, not the agent, ended it (a trainer drops it, as in-process)."""


class FailedLine(BaseModel):
    """The worker could not run the episode (a bad request, an unknown task)."""

    type: Literal["failed"] = "failed"
    error: str


class TokenLimit(BaseModel):
    """The policy's context is spent: the episode ends as at Inspect's token limit (the
    submission graded as it stands), as a trainer's context budget ends it in-process."""

    value: int = Field(ge=0)
    limit: int = Field(ge=0)
    message: str = Field(default="the policy's context budget is spent", max_length=500)


class ActionLine(BaseModel):
    """The policy's turn: one assistant chat dict, or the raw text it sampled (or, instead of
    a turn, the token limit that ends the episode)."""

    type: Literal["action"] = "action"
    message: dict[str, Any] | None = None
    text: str | None = None
    limit: TokenLimit | None = None


WorkerLine = ObservationLine | DoneLine | FailedLine


class Action(BaseModel):
    """One policy turn: an assistant chat message, or the raw text the policy sampled (its
    ``<tool_call>`` blocks parsed as in training); or ``limit``: the policy's context is spent,
    so the episode ends as at a token limit and is graded."""

    message: dict[str, Any] | None = None
    text: str | None = None
    limit: TokenLimit | None = None


class Observation(BaseModel):
    """What the environment answers to a reset or a step."""

    episode_id: str = ""
    task: str = ""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """New messages: the first prompt on reset, then the environment's answers to the action
    (tool results, a nudge to go on), or the whole conversation when the scaffold rewrote it."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The tools' JSON schemas (on reset)."""
    done: bool = False
    reward: float | None = None
    """The episode's reward once done (None when it failed for a reason not the agent's)."""
    components: dict[str, float] = Field(default_factory=dict)
    """The reward's parts, unweighted (``valid_reward``, ``tier_reward``, ``format_reward``)."""
    grade: dict[str, float | None] = Field(default_factory=dict)
    """The medal scorer's value: validity, medal flags, score, HumanRank (None: not had)."""
    error: str | None = None
    log: str = ""
    seconds: float = 0.0
    """The episode's wall time in its worker (sandbox setup, turns, grading), once done."""
    tool_calls: int = 0
    """Tool calls the episode ran, once done."""
    cut_waiting: bool = False
    """A time limit ended the episode while it waited for the policy (not the agent's doing)."""
    turn: int = 0
    rewritten: bool = False
    """The scaffold rewrote earlier messages (context trimming): ``messages`` is all of it."""
