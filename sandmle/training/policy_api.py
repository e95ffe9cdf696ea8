"""The policy as an Inspect model API that records every token of every episode.

Inspect runs the episode (the synthetic task's sandbox, tools and scorer, unchanged); this
API only turns the conversation into tokens and back. It keeps one running token sequence per
episode: the first prompt, then for each turn the tokens the environment appended (the
template's text for tool results and the next generation prompt; mask 0) and the tokens the
policy sampled (mask 1, with their logprobs). The policy's tokens are never re-tokenized, so
the sequence TRL trains on is exactly the one that was sampled.
"""

from __future__ import annotations

import asyncio
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
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

from sandmle.training.chat import (
    chat_dicts,
    continuation_text,
    parse_tool_calls,
    render,
    tool_schema,
)

EPISODE_KEY = "sandmle:episode"
"""Store key naming the episode a generate call belongs to (set by ``rollouts.episode_setup``)."""


class Generator(Protocol):
    """A sampling backend: context token ids in, sampled ids and their logprobs out."""

    async def sample(
        self, context: list[int], max_new_tokens: int
    ) -> tuple[list[int], list[float]]:
        """Sample one continuation of ``context``."""
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
    rerendered_at: int | None = None
    """The first policy turn (0-based) the template renders differently from how it was sampled
    (e.g. a turn without a reasoning block, which the template gives an empty one); from there
    on, the context evaluation would show differs from the trained one by that rendering."""

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)

    def add(self, ids: list[int], logprobs: list[float], policy: bool) -> None:
        self.completion_ids += ids
        self.env_mask += [int(policy)] * len(ids)
        self.logprobs += logprobs if policy else [0.0] * len(ids)


@dataclass
class PolicySession:
    """What one rollout batch shares: the backend, the tokenizer, limits and the records."""

    generator: Generator
    tokenizer: Any
    max_turn_tokens: int = 512
    max_episode_tokens: int = 8192
    episodes: dict[str, Episode] = field(default_factory=dict)


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
        episode = self.session.episodes.setdefault(key, Episode())
        messages, schemas = chat_dicts(input), [tool_schema(t) for t in tools]
        await asyncio.to_thread(self._append_environment, episode, messages, schemas)
        budget = self.session.max_episode_tokens - episode.length
        if budget <= 0:
            episode.truncated = True
            return self._output("", [], "model_length", 0)
        context = episode.prompt_ids + episode.completion_ids
        limit = min(self.session.max_turn_tokens, budget)
        start = time.perf_counter()
        try:
            ids, logprobs = await self.session.generator.sample(context, limit)
        finally:
            episode.generation_seconds += time.perf_counter() - start
        episode.add(ids, logprobs, policy=True)
        eos = self.session.tokenizer.eos_token_id
        episode.ended_with_eos = bool(ids) and ids[-1] == eos
        raw = self._decode(ids)
        episode.assistant_turns.append(raw)
        text, calls = parse_tool_calls(raw)
        reply = ChatMessageAssistant(content=text, tool_calls=calls or None, model=self.model_name)
        episode.seen = [*messages, *chat_dicts([reply])]
        if episode.rerendered_at is None and not await asyncio.to_thread(
            self._renders_as_sampled, episode, schemas
        ):
            episode.rerendered_at = len(episode.assistant_turns) - 1
        stop = "stop" if episode.ended_with_eos else "max_tokens"
        return self._output(
            text, calls, "tool_calls" if calls else stop, len(ids), reply, len(context)
        )

    def _decode(self, ids: list[int]) -> str:
        """The turn's text, markup tokens (``<tool_call>``, ``<think>``) kept, end/pad dropped."""
        tokenizer = self.session.tokenizer
        drop = {tokenizer.eos_token_id, tokenizer.pad_token_id}
        return tokenizer.decode([i for i in ids if i not in drop], skip_special_tokens=False)

    def _renders_as_sampled(self, episode: Episode, schemas: list[dict]) -> bool:
        """Whether the template renders the conversation so far as the token record reads."""
        tokenizer = self.session.tokenizer
        text = render(tokenizer, episode.seen, schemas, add_generation_prompt=False)
        record = tokenizer.decode(episode.prompt_ids + episode.completion_ids)
        return text.startswith(record)

    def _append_environment(
        self, episode: Episode, messages: list[dict], schemas: list[dict]
    ) -> None:
        tokenizer = self.session.tokenizer
        if not episode.prompt_ids:
            text = render(tokenizer, messages, schemas, add_generation_prompt=True)
            episode.prompt_ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            return
        delta = continuation_text(
            tokenizer, episode.seen, messages, schemas, episode.ended_with_eos
        )
        episode.add(tokenizer(delta, add_special_tokens=False)["input_ids"], [], policy=False)

    def _output(
        self,
        text: str,
        calls: list,
        stop: str,
        n_out: int,
        reply: ChatMessageAssistant | None = None,
        n_in: int = 0,
    ) -> ModelOutput:
        message = reply or ChatMessageAssistant(content=text, model=self.model_name)
        usage = ModelUsage(input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
        choice = ChatCompletionChoice(message=message, stop_reason=stop)  # type: ignore[arg-type]
        return ModelOutput(model=self.model_name, choices=[choice], usage=usage)
