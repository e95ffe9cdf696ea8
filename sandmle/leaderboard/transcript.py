"""One sample's transcript and search tree, read on demand for the drill-down view."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalSample, read_eval_log_sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from pydantic import ValidationError

from sandmle.harness.search_tree import STORE_KEY, SearchNode

MAX_CHARS = 4000
"""Longer message texts are cut in the view; the log keeps them whole."""


@dataclass(frozen=True)
class MessageView:
    """One message as the drill-down shows it."""

    role: str
    text: str
    tool_calls: list[str]
    """Each call as ``name(arguments as JSON)``."""
    tool_error: str | None = None


def read_sample(log: str, sample_id: str, epoch: int = 1) -> EvalSample:
    """The full sample (messages, store, events) from its log."""
    return read_eval_log_sample(log, id=_sample_id(sample_id), epoch=epoch)


def _sample_id(sample_id: str) -> str | int:
    # Inspect keeps integer ids as ints; the frames hold every id as text.
    return int(sample_id) if sample_id.isdigit() else sample_id


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"\n… ({len(text)} chars)"


def message_view(message: ChatMessage) -> MessageView:
    """Text, tool calls and tool errors of a message, ready to print."""
    calls: list[str] = []
    if isinstance(message, ChatMessageAssistant):
        for call in message.tool_calls or []:
            calls.append(f"{call.function}({json.dumps(call.arguments, default=str)})")
    error = None
    role = message.role
    if isinstance(message, ChatMessageTool):
        role = f"tool: {message.function}" if message.function else "tool"
        error = message.error.message if message.error else None
    return MessageView(role=role, text=_cut(message.text), tool_calls=calls, tool_error=error)


def transcript(sample: EvalSample) -> list[MessageView]:
    return [message_view(m) for m in sample.messages]


def search_tree(sample: EvalSample) -> list[SearchNode]:
    """The nodes a tree scaffold stored; nodes that do not fit the schema are left out."""
    raw: Any = (sample.store or {}).get(STORE_KEY) or []
    nodes: list[SearchNode] = []
    for item in raw if isinstance(raw, list) else []:
        try:
            nodes.append(SearchNode.model_validate(item))
        except ValidationError:
            continue
    return nodes


def score_report(sample: EvalSample, scorer: str = "medal_scorer") -> dict[str, Any]:
    """The grading report the medal scorer kept as its explanation (empty if none)."""
    score = (sample.scores or {}).get(scorer)
    if score is None or not score.explanation:
        return {}
    try:
        report = json.loads(score.explanation)
    except json.JSONDecodeError:
        return {"explanation": score.explanation}
    return report if isinstance(report, dict) else {"explanation": score.explanation}
