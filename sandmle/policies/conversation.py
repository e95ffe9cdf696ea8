"""Reading a conversation and writing replies, shared by the reference policies."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
)
from inspect_ai.tool import ToolInfo

SUBMIT_TOOLS = ("submit",)
RUN_TOOLS = ("python", "bash", "execute_code")
SCRIPT_PATH = "/home/agent/solution.py"
HEREDOC_END = "SANDMLE_EOF"


@dataclass
class ToolRun:
    """One tool call the policy made earlier, with what it returned."""

    function: str
    arguments: dict[str, Any]
    output: str


def prompt_texts(messages: list[ChatMessage]) -> list[str]:
    """The prompts a model was sent, in order: system and user messages (the tree scaffolds
    send each operator prompt as the system message, as aideml and aira-dojo do)."""
    return [m.text for m in messages if isinstance(m, ChatMessageSystem | ChatMessageUser)]


def last_user_text(messages: list[ChatMessage]) -> str:
    """The latest prompt (user or system message)."""
    texts = prompt_texts(messages)
    return texts[-1] if texts else ""


def first_user_text(messages: list[ChatMessage]) -> str:
    for message in messages:
        if isinstance(message, ChatMessageUser):
            return message.text
    return ""


JSON_ACTION_FORMAT = re.compile(r'"action"\s*:\s*"execute_code"')
"""A prompt that asks for actions as JSON text (MLE-Dojo's agent loop) shows this format."""


def json_actions(messages: list[ChatMessage], tools: list[ToolInfo]) -> bool:
    """Whether the loop wants actions written as JSON text: no tools, and the format shown."""
    return not tools and bool(JSON_ACTION_FORMAT.search(first_user_text(messages)))


def json_action(text: str) -> tuple[str, dict[str, Any]] | None:
    """A reply's JSON-text action (bare or in a ```json fence), else None."""
    fenced = re.search(r"```json\s*(.*?)```", text or "", re.S)
    try:
        parsed = json.loads(fenced.group(1) if fenced else text or "")
    except json.JSONDecodeError:
        return None
    if isinstance(parsed, dict) and isinstance(parsed.get("params"), dict):
        return str(parsed.get("action")), parsed["params"]
    return None


def json_runs(messages: list[ChatMessage]) -> list[ToolRun]:
    """Every earlier JSON-text action, paired with the user message that answered it."""
    runs = []
    for i, message in enumerate(messages):
        action = json_action(message.text) if isinstance(message, ChatMessageAssistant) else None
        if action is not None:
            answer = messages[i + 1].text if i + 1 < len(messages) else ""
            runs.append(ToolRun(action[0], action[1], answer))
    return runs


def act(
    model: str, messages: list[ChatMessage], tools: list[ToolInfo], code: str, text: str
) -> ModelOutput | None:
    """Run code: as a JSON-text execute_code where the loop asks for that, else with a tool."""
    if json_actions(messages, tools):
        return reply(model, json.dumps({"action": "execute_code", "params": {"code": code}}))
    return run_code(model, tools, code, text)


def tool_runs(messages: list[ChatMessage]) -> list[ToolRun]:
    """Every earlier tool call (or JSON-text action) in order, paired with its result (empty
    while pending)."""
    results = {
        m.tool_call_id: (m.text + (f"\n{m.error.message}" if m.error else ""))
        for m in messages
        if isinstance(m, ChatMessageTool)
    }
    runs = []
    for message in messages:
        if isinstance(message, ChatMessageAssistant):
            for call in message.tool_calls or []:
                runs.append(ToolRun(call.function, dict(call.arguments), results.get(call.id, "")))
    return runs or json_runs(messages)


def run_text(run: ToolRun) -> str:
    """The code or command a run executed."""
    return str(run.arguments.get("code") or run.arguments.get("cmd") or "")


def tool_names(tools: list[ToolInfo]) -> set[str]:
    return {t.name for t in tools}


def first_parameter(tools: list[ToolInfo], name: str, default: str) -> str:
    for info in tools:
        if info.name == name and info.parameters.properties:
            return next(iter(info.parameters.properties))
    return default


def reply(model: str, text: str) -> ModelOutput:
    return ModelOutput.from_content(model=model, content=text)


def call(model: str, tool: str, arguments: dict[str, Any], text: str) -> ModelOutput:
    return ModelOutput.for_tool_call(
        model=model,
        tool_name=tool,
        tool_arguments=arguments,
        tool_call_id=f"call_{uuid.uuid4().hex[:12]}",
        content=text,
    )


def run_code(model: str, tools: list[ToolInfo], code: str, text: str) -> ModelOutput | None:
    """Run a Python script with the python tool, else through bash; None when neither exists."""
    names = tool_names(tools)
    if "execute_code" in names:  # MLE-Dojo's action: run the code, then grade its submission
        return call(model, "execute_code", {"code": code}, text)
    if "python" in names:
        return call(model, "python", {first_parameter(tools, "python", "code"): code}, text)
    if "bash" in names:
        command = (
            f"mkdir -p {SCRIPT_PATH.rsplit('/', 1)[0]} && cat > {SCRIPT_PATH} <<'{HEREDOC_END}'\n"
            f"{code}\n{HEREDOC_END}\npython3 {SCRIPT_PATH}"
        )
        return call(model, "bash", {first_parameter(tools, "bash", "cmd"): command}, text)
    return None


WAIT = {"action": "request_info", "params": {"info_type": "name"}}
"""A harmless JSON-text action: MLE-Dojo's agent has none that ends the run (its steps do)."""


def finish(model: str, tools: list[ToolInfo], summary: str, json_text: bool = False) -> ModelOutput:
    """Submit through the submit tool when there is one; in a JSON-text loop, which has no
    ending action, ask for something harmless; else answer in plain text."""
    if json_text:
        return reply(model, json.dumps(WAIT))
    for name in SUBMIT_TOOLS:
        if name in tool_names(tools):
            return call(model, name, {first_parameter(tools, name, "answer"): summary}, summary)
    return reply(model, summary)


def code_block(text: str) -> str | None:
    """The first fenced python block of a text (or of a prompt section)."""
    match = re.search(r"```(?:python|py)?[^\n]*\n(.*?)```", text or "", re.S)
    return match.group(1) if match else None


SAMPLE_PATH = re.compile(r"/[\w./-]*sample[\w./-]*\.csv")


def sample_submission_path(task_text: str) -> str | None:
    """The sample submission's sandbox path as the task text names it."""
    match = SAMPLE_PATH.search(task_text or "")
    return match.group(0) if match else None
