"""One sample's transcript and search tree, read on demand for the drill-down view."""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from inspect_ai.log import EvalSample, read_eval_log_sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from pydantic import ValidationError

from sandmle.harness.search_tree import STORE_KEY, SearchNode, compile_error

MAX_CHARS = 4000
"""Longer message texts are cut in the view; the log keeps them whole."""


@dataclass(frozen=True)
class MessageView:
    """One message as the drill-down shows it."""

    role: str
    text: str
    tool_calls: list[ToolCallView]
    tool_error: str | None = None


@dataclass(frozen=True)
class ToolCallView:
    """A tool call decoded for reading: its code (or arguments) and the language to colour it."""

    function: str
    body: str
    language: str


CODE_ARGUMENTS = {"code": "python", "cmd": "bash", "command": "bash", "script": "python"}
"""Argument names whose value is a program, and its language."""
INSPECT_VIEW_ENV = "SANDMLE_INSPECT_VIEW_URL"
INSPECT_VIEW_URL = "http://127.0.0.1:7575"
"""Where ``inspect view`` serves by default."""
_PATH_RE = re.compile(r"(?:/[\w.@+-]+){2,}/([\w.@+-]+)")
_EXCEPTION_RE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))\b.*$")


def read_sample(log: str, sample_id: str, epoch: int = 1) -> EvalSample:
    """The full sample (messages, store, events) from its log."""
    return read_eval_log_sample(log, id=_sample_id(sample_id), epoch=epoch)


def _sample_id(sample_id: str) -> str | int:
    # Inspect keeps integer ids as ints; the frames hold every id as text.
    return int(sample_id) if sample_id.isdigit() else sample_id


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"\n… ({len(text)} chars)"


def decode_call(function: str, arguments: dict[str, Any]) -> ToolCallView:
    """A program argument (``code``, ``cmd``) as code; anything else as indented JSON."""
    for name, language in CODE_ARGUMENTS.items():
        value = arguments.get(name)
        if isinstance(value, str) and len(arguments) == 1:
            return ToolCallView(function, value, "python" if function == "python" else language)
    return ToolCallView(function, json.dumps(arguments, indent=2, default=str), "json")


def message_view(message: ChatMessage) -> MessageView:
    """Text, tool calls and tool errors of a message, ready to print."""
    calls: list[ToolCallView] = []
    if isinstance(message, ChatMessageAssistant):
        for call in message.tool_calls or []:
            calls.append(decode_call(call.function, dict(call.arguments or {})))
    error = None
    role: str = message.role
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


def failure_kind(node: SearchNode) -> str | None:
    """Why a buggy node failed, in a few words: its recorded error, exception or exit code."""
    if not node.is_bug:
        return None
    error = node_error(node)
    if error:
        kind, message = error
        return ": ".join(
            x for x in (kind, message.strip().splitlines()[-1:][0] if message else "") if x
        )
    exceptions = [m.group(1) for m in map(_EXCEPTION_RE.match, node.output.splitlines()) if m]
    if exceptions:
        return exceptions[-1]
    code = node.extra.get("exit_code")
    if code == 127:
        return "exit 127: command not found"
    if code not in (None, 0):
        return f"exit {code}"
    stop = getattr(node, "stop_reason", None)
    return str(stop) if stop else (node.summary.splitlines()[0] if node.summary else "buggy")


def node_facts(node: SearchNode) -> list[tuple[str, str]]:
    """The node's card, label and value: operator, step, metric, run time and result (in
    full: the result names the failure, so it is never cut to a card's width)."""
    return [
        ("operator", node.operator),
        ("step", str(node.step)),
        ("metric", "—" if node.metric is None else f"{node.metric:.4g}"),
        ("run time", "—" if node.exec_time_s is None else f"{node.exec_time_s:.1f} s"),
        ("result", failure_kind(node) or "ok"),
    ]


def diff_title(parent: SearchNode, node: SearchNode) -> str:
    return f"Diff against parent node {parent.id} ({node.operator})"


def node_error(node: SearchNode) -> tuple[str, str] | None:
    """(kind, message) of the error a scaffold recorded on a node, in any of its shapes.

    Newer scaffolds record ``error`` (a string, a dict or a model with ``kind``/``message``)
    next to the output; older logs have none, and the failure is read from the output.
    """
    error: Any = getattr(node, "error", None) or node.extra.get("error")
    if not error:
        return None
    if isinstance(error, str):
        return ("", error)
    data = error if isinstance(error, dict) else getattr(error, "model_dump", dict)()
    kind = str(data.get("kind") or data.get("type") or "")
    message = str(data.get("message") or data.get("traceback") or "")
    return (kind, message) if kind or message else ("", str(error))


def strip_paths(value: Any) -> Any:
    """Host paths (temp dirs of the grader) cut to their file name."""
    if isinstance(value, str):
        return _PATH_RE.sub(lambda m: m.group(1), value)
    return value


def report_rows(report: dict[str, Any]) -> list[tuple[str, str]]:
    """The grading report as (field, value) rows for a two-column table, without host paths."""
    rows = []
    for key, value in report.items():
        shown = json.dumps(value, default=str) if isinstance(value, dict | list) else value
        rows.append((key.replace("_", " "), "" if shown is None else str(strip_paths(shown))))
    return rows


def inspect_view_root(log: str, log_dirs: list[str]) -> Path:
    """The dir one ``inspect view --log-dir`` must serve to show ``log`` among all ``log_dirs``.

    The common root of the log dirs, so one view (and one ``SANDMLE_INSPECT_VIEW_URL``) opens
    any sample of any of them; only when that root is the filesystem's own, the log's dir.
    """
    path = Path(log).resolve()
    dirs = [Path(d).resolve() for d in log_dirs if "://" not in str(d)]
    mine = [d for d in dirs if path.is_relative_to(d)]
    if not mine:
        return path.parent
    root = Path(os.path.commonpath([*dirs, path.parent]))
    return mine[0] if root == Path(root.anchor) else root


def inspect_view_command(root: Path) -> str:
    """The command that serves ``root`` where the links point."""
    base = os.environ.get(INSPECT_VIEW_ENV, INSPECT_VIEW_URL)
    port = urlsplit(base).port
    flag = f" --port {port}" if port and port != urlsplit(INSPECT_VIEW_URL).port else ""
    return f"inspect view --log-dir {shlex.quote(str(root))}{flag}"


def inspect_view_url(log: str, sample_id: str, epoch: int, log_dirs: list[str]) -> str:
    """The Inspect View address of a sample, for ``inspect view`` on ``inspect_view_root``."""
    base = os.environ.get(INSPECT_VIEW_ENV, INSPECT_VIEW_URL).rstrip("/")
    path = Path(log).resolve()
    relative = path.relative_to(inspect_view_root(log, log_dirs)).as_posix()
    return (
        f"{base}/#/logs/{quote(relative)}/samples/sample/"
        f"{quote(str(sample_id), safe='')}/{int(epoch)}/"
    )


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


@dataclass(frozen=True)
class RefusedReply:
    """A code reply a tree scaffold refused: what the model wrote, and where it broke."""

    attempt: int
    why: str
    reply: str
    code: str
    """The code the reply held (its python blocks joined, or the whole reply when unfenced)."""
    line: int | None
    """The line of ``code`` that does not compile, if that is why it was refused."""


_FENCE_RE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+)', re.MULTILINE)
TRACEBACK_HEAD = "Traceback (most recent call last):"


def reply_code(reply: str) -> str:
    """The python a reply holds: its fenced blocks, or all of it when nothing is fenced."""
    blocks = [b for b in _FENCE_RE.findall(reply) if b.strip()]
    return "\n".join(blocks) if blocks else reply


def syntax_error_line(code: str) -> int | None:
    """The line ``code`` fails to compile at, or None when it compiles."""
    exc = compile_error(code)
    if exc is None:
        return None
    return (exc.lineno or 1) if isinstance(exc, SyntaxError) else 1  # ValueError: null bytes


def refused_replies(node: SearchNode) -> list[RefusedReply]:
    """Each code reply the scaffold kept and refused (``calls[].reply``), oldest first."""
    out = []
    for call in node.extra.get("calls") or []:
        reply = call.get("reply") if isinstance(call, dict) else None
        if call.get("purpose") == "code" and isinstance(reply, str):
            code = reply_code(reply)
            why = str(call.get("error") or "")
            out.append(RefusedReply(int(call.get("attempt") or 0), why, reply, code,
                                    syntax_error_line(code)))  # fmt: skip
    return out


def code_diff(parent: SearchNode, node: SearchNode) -> str:
    """``node``'s code as a unified diff against its parent's ("" when they are the same)."""
    lines = difflib.unified_diff(
        parent.code.splitlines(), node.code.splitlines(),
        f"node {parent.id}", f"node {node.id}", lineterm="",
    )  # fmt: skip
    return "\n".join(lines)


def mark_line(code: str, line: int | None) -> str:
    """``code`` with line numbers, the failing ``line`` marked ``▶`` (the drill-down and export)."""
    lines = code.splitlines() or [""]
    width = len(str(len(lines)))
    return "\n".join(
        f"{'▶' if i == line else ' '} {i:>{width}} │ {text}" for i, text in enumerate(lines, 1)
    )


def traceback_of(output: str) -> str | None:
    """The last Python traceback in a run's output, or None."""
    start = output.rfind(TRACEBACK_HEAD)
    if start < 0:
        return None
    lines = output[start:].splitlines()
    # frames are indented; the first unindented line after the head names the exception
    end = next((i for i, line in enumerate(lines[1:], 1) if line[:1] not in (" ", "\t")), None)
    return "\n".join(lines if end is None else lines[: end + 1]).strip()


def crash_line(traceback: str) -> int | None:
    """The line of the node's own script where a traceback ends (library frames skipped)."""
    frames = [(f, int(n)) for f, n in _FRAME_RE.findall(traceback)]
    mine = [n for f, n in frames if "site-packages" not in f and "/lib/python" not in f]
    return mine[-1] if mine else None
