"""Inspect chat messages ↔ Hugging Face chat dicts, and tool calls out of raw policy text.

Shared by the rollout model API (rendering prompts, parsing actions) and SFT (turning logged
trajectories into chat data), so both see a conversation the same way. Tool calls use the
Hermes/Qwen convention most open chat templates expect:
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ContentReasoning
from inspect_ai.tool import ToolCall, ToolInfo

from sandmle.errors import SandmleError
from sandmle.harness.chat_template import with_prelude
from sandmle.harness.solvers import BackendError

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def tool_schema(tool: ToolInfo) -> dict[str, Any]:
    """An Inspect tool as the JSON schema chat templates render."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters.model_dump(exclude_none=True),
        },
    }


def message_dict(message: ChatMessage, reasoning_tag: str = "think") -> dict[str, Any]:
    """One Inspect message as a chat-template dict (text only: the sandbox speaks text).

    An assistant turn's reasoning (Inspect keeps a reasoning model's as ``ContentReasoning``)
    opens its text as the family's block, ``<think>\n…\n</think>\n\n`` for Qwen3, where the
    chat template expects it.
    """
    if isinstance(message, ChatMessageTool):  # an error reads as Inspect's OpenAI provider sends it
        text = f"Error: {message.error.message}" if message.error else message.text
        return {"role": "tool", "name": message.function or "", "content": text}
    out: dict[str, Any] = {"role": message.role, "content": message.text}
    if isinstance(message, ChatMessageAssistant) and (thought := reasoning(message)):
        out["content"] = f"<{reasoning_tag}>\n{thought}\n</{reasoning_tag}>\n\n{message.text}"
    if isinstance(message, ChatMessageAssistant) and message.tool_calls:
        out["tool_calls"] = [
            {"type": "function", "function": {"name": c.function, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return out


def chat_dicts(messages: list[ChatMessage], reasoning_tag: str = "think") -> list[dict[str, Any]]:
    return [message_dict(m, reasoning_tag) for m in messages]


def reasoning(message: ChatMessageAssistant) -> str:
    """The turn's reasoning text (its ``ContentReasoning`` parts; redacted ones are skipped)."""
    if isinstance(message.content, str):
        return ""
    parts = [c.reasoning for c in message.content if isinstance(c, ContentReasoning)]
    return "\n".join(p.strip() for p in parts if p and p.strip())


def parse_tool_calls(text: str) -> tuple[str, list[ToolCall]]:
    """Split a policy turn into its visible text and its tool calls.

    A block that is not ``{"name": str, "arguments": dict}`` JSON becomes a call with a
    ``parse_error``, so the agent is told its call was malformed instead of being ignored.

    >>> text, calls = parse_tool_calls('ok <tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call>')
    >>> text, calls[0].function, calls[0].arguments
    ('ok', 'bash', {'cmd': 'ls'})
    >>> parse_tool_calls("<tool_call>{oops</tool_call>")[1][0].parse_error is not None
    True
    """
    calls = [_tool_call(block) for block in _TOOL_CALL.findall(text)]
    return _TOOL_CALL.sub("", text).strip(), calls


def assistant_message(message: dict[str, Any], model: str = "") -> ChatMessageAssistant:
    """An assistant chat dict (``content``, OpenAI-style ``tool_calls``) as Inspect's message.

    A call whose name or arguments do not parse gets a ``parse_error`` (the agent is told, as
    for a malformed ``<tool_call>`` block).

    >>> m = assistant_message({"content": "look", "tool_calls": [
    ...     {"type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}]})
    >>> m.text, m.tool_calls[0].function, m.tool_calls[0].arguments
    ('look', 'bash', {'cmd': 'ls'})
    """
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function", call) if isinstance(call, dict) else {}
        block = {"name": function.get("name"), "arguments": function.get("arguments", {})}
        calls.append(_tool_call(json.dumps(block)))
    content = message.get("content") or ""
    return ChatMessageAssistant(
        content=content if isinstance(content, str) else json.dumps(content),
        tool_calls=calls or None,
        model=model or None,
    )


def _tool_call(block: str) -> ToolCall:
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    try:
        data = json.loads(block)
        name, arguments = data["name"], data.get("arguments", {})
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise TypeError("name must be a string and arguments an object")
    except (ValueError, KeyError, TypeError) as exc:
        error = f'malformed tool call ({exc}); write <tool_call>{{"name": ..., "arguments": {{...}}}}</tool_call>'
        return ToolCall(id=call_id, function="", arguments={}, parse_error=error)
    return ToolCall(id=call_id, function=name, arguments=arguments)


def render(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    add_generation_prompt: bool,
) -> str:
    """The chat template's text for a conversation."""
    return tokenizer.apply_chat_template(
        messages, tools=tools or None, add_generation_prompt=add_generation_prompt, tokenize=False
    )


def continuation_text(
    tokenizer: Any,
    seen: list[dict[str, Any]],
    now: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    ended_with_eos: bool,
    record: str | None = None,
) -> str:
    """What the environment appends after the policy's last turn: the template's text for the
    new messages plus the next generation prompt.

    The policy's raw tokens stay as sampled (token in, token out), so only this delta is
    tokenized. When the turn was cut at the token cap, the delta also closes it (the end-of-turn
    token, and a reasoning block the cut left open), as environment tokens: it is what the
    template renders after ``record`` (the token record's text) when that is a prefix of it.
    The template must be prefix-preserving (``use_training_template``); one that rewrites
    earlier turns would make the trained context differ from the one the model sees, so it
    stops the episode.
    """
    before = render(tokenizer, seen, tools, add_generation_prompt=False)
    after = render(tokenizer, now, tools, add_generation_prompt=True)
    if not after.startswith(before):
        raise BackendError("the chat template rewrote earlier turns; the episode cannot be trained")
    if record is not None and after.startswith(record):
        return after[len(record) :]
    end = tokenizer.eos_token or ""
    cut = before.rfind(end) if end else -1
    if cut < 0:
        return after[len(before) :]
    return after[cut + len(end) if ended_with_eos else cut :]


def turn_opening(tokenizer: Any) -> str:
    r"""What the template writes at the start of an assistant turn whatever its content (Qwen3's
    training template: an empty ``<think>\n\n</think>\n\n`` when the turn has no reasoning);
    empty for a template that renders turns as written."""
    user = [{"role": "user", "content": "x"}]
    head = render(tokenizer, user, None, add_generation_prompt=True)
    empty = [*user, {"role": "assistant", "content": ""}]
    turn = render(tokenizer, empty, None, add_generation_prompt=False)[len(head) :]
    end = tokenizer.eos_token or ""
    if not end or end not in turn:
        return ""
    return turn[: turn.index(end)]


def reasoning_block(tokenizer: Any) -> tuple[str, str]:
    r"""How the template writes an assistant turn's reasoning: the text before and after it
    (``("<think>\n", "\n</think>\n\n")`` for Qwen3), or ``("", "")`` when it renders no
    ``reasoning_content``."""
    marker = "sandmle-reasoning-marker"
    user = [{"role": "user", "content": "x"}]
    head = render(tokenizer, user, None, add_generation_prompt=True)
    turn = [*user, {"role": "assistant", "content": "", "reasoning_content": marker}]
    text = render(tokenizer, turn, None, add_generation_prompt=False)[len(head) :]
    end = tokenizer.eos_token or ""
    if text.count(marker) != 1 or not end or end not in text:
        return "", ""
    before, after = text[: text.index(end)].split(marker)
    return before, after


def close_reasoning(text: str, block: tuple[str, str]) -> str:
    r"""A turn cut inside its reasoning block, with the block closed as the template closes it
    (the template cannot render an open one: it would put an empty block before it).

    >>> close_reasoning("<think>\nstill thinking", ("<think>\n", "\n</think>\n\n"))
    '<think>\nstill thinking\n</think>\n\n'
    >>> close_reasoning("<think>\nshort</think> done", ("<think>\n", "\n</think>\n\n"))
    '<think>\nshort</think> done'
    """
    opener, closer = block
    if opener and text.startswith(opener) and closer.strip() not in text:
        return text + closer
    return text


def inserted_opening(head: str, conversation: str, sampled: str, opening: str) -> str:
    """The text the template renders before a sampled turn, which the policy never wrote.

    ``head`` is the context the turn was sampled in, ``conversation`` the template's text with
    the turn appended, ``sampled`` the turn's decoded tokens. Returns ``opening`` when the
    template gives the turn an opening it lacks, else "" (the turn renders as sampled, or it
    cannot be made equal by an insertion: the caller's check counts that).
    """
    turn = conversation[len(head) :] if conversation.startswith(head) else ""
    if opening and not turn.startswith(sampled) and turn.startswith(opening + sampled):
        return opening
    return ""


_PROBE_CALL = {"type": "function", "function": {"name": "bash", "arguments": {"command": "ls"}}}
PROBE_CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You solve ML tasks."},
    {"role": "user", "content": "Train a model."},
    {
        "role": "assistant",
        "content": "<think>\nlook first\n</think>\n\n",
        "tool_calls": [_PROBE_CALL],
    },
    {"role": "tool", "name": "bash", "content": "train.csv"},
    {"role": "assistant", "content": "<think>\nplan\n</think>\n\nI will train a forest."},
    {"role": "user", "content": "Please proceed to the next step using your best judgement."},
    {"role": "assistant", "content": "no reasoning here", "tool_calls": [_PROBE_CALL]},
    {"role": "tool", "name": "bash", "content": "done"},
]
"""The turns that expose a template rewriting history: a tool call with reasoning, a text-only
turn followed by the agent's continue message, and a turn without a reasoning block."""


def history_rewrites(tokenizer: Any, conversation: list[dict[str, Any]] | None = None) -> list[int]:
    """Indexes of assistant turns after which the template re-renders the earlier text.

    Empty for a prefix-preserving template: the conversation up to an assistant turn renders as a
    prefix of the conversation with the next message and generation prompt appended.
    """
    messages = conversation or PROBE_CONVERSATION
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    bad = []
    for i, message in enumerate(messages[:-1]):
        if message["role"] != "assistant":
            continue
        before = render(tokenizer, messages[: i + 1], tools, add_generation_prompt=False)
        after = render(tokenizer, messages[: i + 2], tools, add_generation_prompt=True)
        if not after.startswith(before):
            bad.append(i)
    return bad


def use_training_template(tokenizer: Any) -> bool:
    """Make the tokenizer's chat template prefix-preserving, or refuse to train.

    Multi-turn GRPO trains on one token sequence per episode, so every turn must render the
    earlier ones exactly as the model saw them. A template that rewrites them (Qwen3 drops
    ``<think>`` from past turns) is replaced by TRL's training variant of it; the checkpoint
    saves that template, so evaluation renders episodes as training did. The template also gets
    ``harness.chat_template``'s prelude, so Inspect's ``hf/`` provider, which hands it Inspect's
    own message objects, renders the same text. Returns whether it swapped the template.
    """
    from trl.chat_template_utils import (
        get_training_chat_template,
        is_chat_template_prefix_preserving,
    )

    def preserving() -> bool:
        return not history_rewrites(tokenizer) and is_chat_template_prefix_preserving(tokenizer)

    if preserving():
        tokenizer.chat_template = with_prelude(tokenizer.chat_template)
        return False
    try:
        template = get_training_chat_template(tokenizer)
    except ValueError:
        template = None
    if template is not None:
        tokenizer.chat_template = template
    if template is None or not preserving():
        raise SandmleError(
            f"{getattr(tokenizer, 'name_or_path', 'the model')}: its chat template re-renders "
            "earlier turns and TRL has no training template for it; give the tokenizer a "
            "prefix-preserving chat_template"
        )
    tokenizer.chat_template = with_prelude(template)
    return True
