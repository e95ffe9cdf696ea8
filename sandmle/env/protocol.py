"""What crosses the environment's two boundaries: client ↔ host (``Action``, ``Observation``)
and host ↔ an episode's worker process (the ``*Line`` models).

One JSON object per line. The host writes an ``EpisodeRequest`` first, then one ``action`` per
policy turn; the worker answers every turn with an ``observation`` (the conversation the policy
would see, and its tools) and ends with one ``done`` (the grade, the log) or ``failed``.
Messages are Hugging Face chat dicts (``sandmle.env.chat``), the form chat templates render.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sandmle.specs.episode import EpisodeSpec

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line either side reads (a conversation with long tool outputs)."""


class EndpointModel(BaseModel):
    """An OpenAI-compatible chat endpoint (vLLM, SGLang, a trainer's policy server) that a whole
    episode's model calls go to, from the server's host (never from the sandbox)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(pattern=r"^https?://", max_length=2000)
    """The endpoint's base, ``/v1`` included (``http://10.0.0.5:8000/v1``)."""
    name: str = Field(min_length=1, max_length=200)
    """The model name the endpoint serves."""
    api_key: str | None = Field(default=None, max_length=500, repr=False)
    """Sent to the endpoint only; never logged."""
    logprobs: bool = True
    """Ask for each sampled token's logprob (the reply's ``calls`` carry them)."""
    token_ids: bool = False
    """Ask vLLM for token ids (``return_tokens_as_token_ids``); other endpoints may refuse it."""


class EpisodeRequest(BaseModel):
    """What the worker runs: one sample of the pack's task under the episode spec; with
    ``model``, the whole episode against that endpoint (no step-wise turns)."""

    episode_id: str
    pack: str | None = None
    task: str
    episode: EpisodeSpec = Field(default_factory=EpisodeSpec)
    seed: int | None = None
    log_dir: str
    model: EndpointModel | None = None


class ModelCall(BaseModel):
    """One model call of a whole episode: what the scaffold sent and what came back."""

    messages: list[dict[str, Any]]
    """The call's input (chat dicts): a tree scaffold's calls are independent conversations."""
    reply: dict[str, Any]
    tokens: list[str] | None = None
    """The sampled tokens as the endpoint spelled them (None: it gave no logprobs)."""
    token_ids: list[int] | None = None
    """The sampled token ids (vLLM with ``token_ids``; None otherwise)."""
    logprobs: list[float] | None = None


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
    calls: list[ModelCall] = Field(default_factory=list)
    """A whole episode's model calls, in order (empty for step-wise episodes)."""


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


class Outcome(BaseModel):
    """How an episode ended, once done: what a step-wise and a whole episode both report."""

    reward: float | None = None
    """The episode's reward once done (None when it failed for a reason not the agent's)."""
    components: dict[str, float] = Field(default_factory=dict)
    """The reward's parts, unweighted (``valid_reward``, ``tier_reward``, ``format_reward``)."""
    grade: dict[str, float | None] = Field(default_factory=dict)
    """The medal scorer's value: validity, medal flags, score, HumanRank (None: not had)."""
    error: str | None = None
    log: str = ""
    """The episode's Inspect log, on the server's machine."""
    seconds: float = 0.0
    """The episode's wall time in its worker (sandbox setup, turns, grading)."""
    tool_calls: int = 0
    """Tool calls the episode ran."""


class Observation(Outcome):
    """What the environment answers to a reset or a step (the outcome once ``done``)."""

    episode_id: str = ""
    task: str = ""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """New messages: the first prompt on reset, then the environment's answers to the action
    (tool results, a nudge to go on), or the whole conversation when the scaffold rewrote it."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The tools' JSON schemas (on reset)."""
    done: bool = False
    cut_waiting: bool = False
    """A time limit ended the episode while it waited for the policy (not the agent's doing)."""
    turn: int = 0
    rewritten: bool = False
    """The scaffold rewrote earlier messages (context trimming): ``messages`` is all of it."""


class WholeRequest(BaseModel):
    """``POST /episodes``: one whole episode of a scaffold, against the caller's endpoint."""

    model_config = ConfigDict(extra="forbid")

    task: str | None = None
    index: int | None = None
    seed: int | None = None
    scaffold: str = "aide"
    """Any of the harness's scaffolds: ``aide``, ``aira_greedy``, ``aira_mcts``, ``aira_evo``,
    ``dojo``, ``react``."""
    scaffold_args: dict[str, Any] = Field(default_factory=dict)
    """The scaffold's settings (``-S`` of ``inspect eval``: ``steps``, ``retries``, ...)."""
    model: EndpointModel
    episode_id: str | None = None


class WholeEpisode(Outcome):
    """The reply to ``POST /episodes``: the trajectory, the grade and the reward."""

    episode_id: str
    task: str
    scaffold: str
    calls: list[ModelCall] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """The sample's final conversation (for a tree scaffold, its last node's)."""
