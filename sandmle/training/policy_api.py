r"""The policy as an Inspect model API that records every token of every episode.

Inspect runs the episode (the synthetic task's sandbox, tools and scorer, unchanged); this
API only turns the conversation into tokens and back. It keeps one running token sequence per
episode: the first prompt, then for each turn the tokens the environment appended (the
template's text for tool results and the next generation prompt; mask 0) and the tokens the
policy sampled (mask 1, with their logprobs). The policy's tokens are never re-tokenized, so
the sequence TRL trains on is exactly the one that was sampled.

The record must also read as the chat template renders the conversation, since evaluation
re-renders every earlier turn that way. When the template writes an opening the policy did not
(Qwen3's training template gives a turn without reasoning an empty ``<think>\n\n</think>\n\n``),
the record takes that opening before the turn as environment tokens (mask 0, no logprob). Why
this and not the alternatives: forcing the opening into every generation prompt would take the
choice to skip reasoning away from the policy, which evaluation leaves to it; masking the whole
turn would throw its sampled tokens away. This way the trained tokens are the sampled ones with
their sampled logprobs, and every later turn is sampled and trained in exactly the context
evaluation shows; the cost, counted as ``inserted_openings``, is that the turn's own tokens are
scored after an opening they were not sampled after. A turn the token cap cut inside its
reasoning is stored with the block closed, so the template renders the sampled tokens as they
are and the environment appends the closing. A turn that no insertion makes equal (a
tool call written in another JSON layout, say) keeps its sampled tokens and is counted
(``rerendered_at``, a warning, the ``rollout/rerendered_episodes`` metric).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    StopReason,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import LimitExceededError, store

from sandmle.env.chat import (
    chat_dicts,
    close_reasoning,
    continuation_text,
    inserted_opening,
    parse_tool_calls,
    reasoning_block,
    render,
    tool_schema,
    turn_opening,
)

logger = logging.getLogger(__name__)

EPISODE_KEY = "sandmle:episode"
"""Store key naming the episode a generate call belongs to (set by ``rollouts.episode_setup``)."""


class Generator(Protocol):
    """A sampling backend: context token ids in, sampled ids and their logprobs out."""

    async def sample(
        self, context: list[int], max_new_tokens: int, key: str = ""
    ) -> tuple[list[int], list[float]]:
        """Sample one continuation of ``context``. ``key`` names the request independently of
        timing (run seed, episode, turn): a seeded backend draws its tokens from it alone."""
        ...


@dataclass
class Episode:
    """One episode's token record."""

    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    """1 for policy tokens (trained), 0 for environment tokens (masked out of the loss)."""
    logprobs: list[float] = field(default_factory=list)
    assistant_turns: list[str] = field(default_factory=list)
    """Raw text of every policy turn (for the format reward)."""
    seen: list[dict[str, Any]] = field(default_factory=list)
    """The conversation as of the last policy turn, its reply included."""
    ended_with_eos: bool = True
    truncated: bool = False
    generation_seconds: float = 0.0
    """Wall seconds this episode waited for the sampler (the rest of its time is the environment's)."""
    cut_while_generating: bool = False
    """A sample limit (time, working time) ended the episode in the middle of a policy turn:
    the clock, not the agent, ended it, so it is dropped or fails the step, never scored."""
    inserted_openings: int = 0
    """Policy turns the template's opening was inserted before (environment tokens)."""
    rerendered_at: int | None = None
    """The first policy turn (0-based) the template renders differently from the token record
    even after inserting its opening (e.g. a tool call in another JSON layout); from there on,
    the context evaluation would show differs from the trained one by that rendering."""

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)

    def add(self, ids: list[int], logprobs: list[float], policy: bool) -> None:
        self.completion_ids += ids
        self.env_mask += [int(policy)] * len(ids)
        self.logprobs += logprobs if policy else [0.0] * len(ids)


CUT_WHILE_GENERATING = (
    "a sample limit fell while the policy was generating (generation time, not the agent)"
)
"""Why an episode the clock ended mid-turn is not the agent's result (either backend)."""


@dataclass
class EpisodeResult:
    """One finished episode: its tokens and its grade."""

    task_id: str
    episode: Episode
    medal: dict[str, float] = field(default_factory=dict)
    env_steps: int = 0
    error: str | None = None
    seconds: float = 0.0
    """The sample's wall time in Inspect (sandbox setup, turns, grading)."""
    where: dict[str, Any] = field(default_factory=dict)
    """Where it ran, on a Ray pool: the actor, Ray's node id and the host name."""
    attempts: int = 1
    """Runs it took: more than 1 when its actor or node died and it was rerun from scratch."""


@dataclass
class PolicyTurn:
    """One policy turn: the reply as Inspect's message (and as the chat dict the record holds),
    whether it ended on its own, and its token counts."""

    reply: ChatMessageAssistant
    message: dict[str, Any]
    ended: bool
    input_tokens: int
    output_tokens: int


@dataclass
class PolicySession:
    """What one rollout batch shares: the backend, the tokenizer, limits and the records.

    ``turn`` is the whole of a policy turn, whatever carries the conversation: Inspect's model
    API in-process (``PolicyAPI``) or an environment server's observations (``remote``). Both
    hand it the same chat dicts, so both keep the same token record.
    """

    generator: Generator
    tokenizer: Any
    max_turn_tokens: int = 512
    max_episode_tokens: int = 8192
    episodes: dict[str, Episode] = field(default_factory=dict)
    seed: str = "0"
    """What makes this rollout's sampling differ from another's (the run seed, step and rank):
    a request's key is ``<seed>/<episode>/turn-<n>``, never a clock or an arrival order."""
    _parts_for: str | None = field(default=None, init=False, repr=False)
    _parts: tuple[str, tuple[str, str]] = field(default=("", ("", "")), init=False, repr=False)

    async def turn(
        self, key: str, messages: list[dict], schemas: list[dict], model: str = "policy"
    ) -> PolicyTurn:
        """Sample the policy's reply to ``messages`` (chat dicts) in episode ``key``, recording
        the environment's tokens before it and the sampled ones; raises Inspect's token
        ``LimitExceededError`` when the episode's context budget is spent."""
        episode = self.episodes.setdefault(key, Episode())
        await asyncio.to_thread(self._append_environment, episode, messages, schemas)
        budget = self.max_episode_tokens - episode.length
        if budget <= 0:  # the episode's context budget: ends the sample like a token limit
            episode.truncated = True
            raise LimitExceededError(
                "token",
                value=episode.length,
                limit=self.max_episode_tokens,
                message=f"episode context reached {self.max_episode_tokens} tokens",
            )
        context = episode.prompt_ids + episode.completion_ids
        limit = min(self.max_turn_tokens, budget)
        start = time.perf_counter()
        try:
            request = f"{self.seed}/{key}/turn-{len(episode.assistant_turns)}"
            ids, logprobs = await self.generator.sample(context, limit, key=request)
        except asyncio.CancelledError:  # a time limit fell while the policy generated
            episode.cut_while_generating = True
            raise
        finally:
            episode.generation_seconds += time.perf_counter() - start
        ended = bool(ids) and ids[-1] == self.tokenizer.eos_token_id
        raw = self._decode(ids)
        text, calls = parse_tool_calls(raw if ended else close_reasoning(raw, self._block()))
        reply = ChatMessageAssistant(content=text, tool_calls=calls or None, model=model)
        (message,) = chat_dicts([reply])
        seen = [*messages, message]
        opening = await asyncio.to_thread(self._opening, messages, seen, ids, schemas)
        if opening:
            episode.add(opening, [], policy=False)
            episode.inserted_openings += 1
        episode.add(ids, logprobs, policy=True)
        episode.ended_with_eos = ended
        episode.assistant_turns.append(raw)
        episode.seen = seen
        if episode.rerendered_at is None and not await asyncio.to_thread(
            self._renders_as_sampled, episode, schemas
        ):
            episode.rerendered_at = len(episode.assistant_turns) - 1
            logger.warning(
                "episode %s: policy turn %d renders differently from its sampled tokens; "
                "later turns are trained in a context evaluation would not show",
                key,
                episode.rerendered_at,
            )
        return PolicyTurn(reply, message, ended, len(context), len(ids))

    def _decode(self, ids: list[int]) -> str:
        """The turn's text, markup tokens (``<tool_call>``, ``<think>``) kept, end/pad dropped."""
        tokenizer = self.tokenizer
        drop = {tokenizer.eos_token_id, tokenizer.pad_token_id}
        return tokenizer.decode([i for i in ids if i not in drop], skip_special_tokens=False)

    def _opening(
        self, messages: list[dict], seen: list[dict], ids: list[int], schemas: list[dict]
    ) -> list[int]:
        """Token ids of the opening the template renders before the sampled turn ([] if none)."""
        tokenizer = self.tokenizer
        opening = self._template_parts()[0]
        if not opening:
            return []
        head = render(tokenizer, messages, schemas, add_generation_prompt=True)
        conversation = render(tokenizer, seen, schemas, add_generation_prompt=False)
        text = inserted_opening(head, conversation, tokenizer.decode(ids), opening)
        return tokenizer(text, add_special_tokens=False)["input_ids"] if text else []

    def _block(self) -> tuple[str, str]:
        return self._template_parts()[1]

    def _template_parts(self) -> tuple[str, tuple[str, str]]:
        """The template's turn opening and reasoning block, rendered once per template."""
        tokenizer = self.tokenizer
        if self._parts_for != tokenizer.chat_template:
            self._parts = (turn_opening(tokenizer), reasoning_block(tokenizer))
            self._parts_for = tokenizer.chat_template
        return self._parts

    def _renders_as_sampled(self, episode: Episode, schemas: list[dict]) -> bool:
        """Whether the re-tokenised conversation so far begins with the token record."""
        tokenizer = self.tokenizer
        text = render(tokenizer, episode.seen, schemas, add_generation_prompt=False)
        record = episode.prompt_ids + episode.completion_ids
        return tokenizer(text, add_special_tokens=False)["input_ids"][: len(record)] == record

    def _append_environment(
        self, episode: Episode, messages: list[dict], schemas: list[dict]
    ) -> None:
        tokenizer = self.tokenizer
        if not episode.prompt_ids:
            text = render(tokenizer, messages, schemas, add_generation_prompt=True)
            episode.prompt_ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            return
        record = tokenizer.decode(episode.prompt_ids + episode.completion_ids)
        delta = continuation_text(
            tokenizer, episode.seen, messages, schemas, episode.ended_with_eos, record
        )
        episode.add(tokenizer(delta, add_special_tokens=False)["input_ids"], [], policy=False)


@modelapi(name="sandmle-policy")
class PolicyAPI(ModelAPI):
    """``sandmle-policy/<name>``: the training policy behind a ``PolicySession``."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        session: PolicySession | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if session is None:
            raise ValueError("sandmle-policy needs a PolicySession (built by sandmle.training)")
        self.session = session

    async def count_text_tokens(self, text: str) -> int:  # offline: no tiktoken download
        return len(self.session.tokenizer(text, add_special_tokens=False)["input_ids"])

    def collapse_user_messages(self) -> bool:
        return True  # as Inspect's hf provider does: the same messages reach the template

    def max_connections(self) -> int:
        return 10_000  # episodes are bounded by max_samples/max_sandboxes, not here

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        key = str(store().get(EPISODE_KEY, "default"))
        schemas = [tool_schema(t) for t in tools]
        turn = await self.session.turn(key, chat_dicts(input), schemas, self.model_name)
        stop: StopReason = "stop" if turn.ended else "max_tokens"
        reply = turn.reply
        usage = ModelUsage(
            input_tokens=turn.input_tokens,
            output_tokens=turn.output_tokens,
            total_tokens=turn.input_tokens + turn.output_tokens,
        )
        choice = ChatCompletionChoice(
            message=reply, stop_reason="tool_calls" if reply.tool_calls else stop
        )
        return ModelOutput(model=self.model_name, choices=[choice], usage=usage)
