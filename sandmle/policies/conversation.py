"""Reading a conversation and writing replies, shared by the reference policies."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
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


def last_user_text(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ChatMessageUser):
            return message.text
    return ""


def first_user_text(messages: list[ChatMessage]) -> str:
    for message in messages:
        if isinstance(message, ChatMessageUser):
            return message.text
    return ""


def tool_runs(messages: list[ChatMessage]) -> list[ToolRun]:
    """Every earlier tool call in order, paired with its result (empty while pending)."""
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
    return runs


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


def finish(model: str, tools: list[ToolInfo], summary: str) -> ModelOutput:
    """Submit through the submit tool when there is one, else answer in plain text."""
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
