"""An OpenAI-compatible chat endpoint over sandmle's reference policies, for the whole-episode
tests: ``/v1/chat/completions`` answers as vLLM does, with per-token logprobs and (when asked
with ``return_tokens_as_token_ids``) tokens spelled ``token_id:<n>``. The policy is the model
name (``heuristic``, ``sample-submission``); ``slow`` never answers within a test's patience.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from inspect_ai.model import GenerateConfig, messages_from_openai
from inspect_ai.tool import ToolInfo, ToolParams

from sandmle.policies.provider import get_policy
from tests.env.serving import free_port

PIECE = re.compile(r"\s*\S+|\s+")


def _pieces(text: str) -> list[str]:
    return PIECE.findall(text) or [""]


def _logprobs(text: str, as_ids: bool) -> dict[str, Any]:
    content = []
    for piece in _pieces(text):
        token_id = zlib.crc32(piece.encode()) % 50_000
        token = f"token_id:{token_id}" if as_ids else piece
        logprob = -((token_id % 7) + 1) / 10
        content.append({"token": token, "logprob": logprob, "bytes": None, "top_logprobs": []})
    return {"content": content}


class Endpoint:
    """The app, and what it was asked (one entry per completion request)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.app = FastAPI()
        self.app.add_api_route("/v1/chat/completions", self.complete, methods=["POST"])

    async def complete(self, request: Request) -> dict[str, Any]:
        body = await request.json()
        self.requests.append(body)
        if body["model"] == "slow":
            await asyncio.sleep(3600)
        policy = get_policy(body["model"])
        messages = await messages_from_openai(body["messages"])
        tools = [_tool(t["function"]) for t in body.get("tools") or []]
        output = policy(messages, tools, GenerateConfig())
        text = output.message.text
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function, "arguments": _json(c)},
            }
            for c in output.message.tool_calls or []
        ]
        choice: dict[str, Any] = {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": text,
                **({"tool_calls": calls} if calls else {}),
            },
            "finish_reason": "tool_calls" if calls else "stop",
        }
        if body.get("logprobs"):
            choice["logprobs"] = _logprobs(text, bool(body.get("return_tokens_as_token_ids")))
        n = len(_pieces(text))
        return {
            "id": f"cmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1},
        }


def _tool(function: dict[str, Any]) -> ToolInfo:
    return ToolInfo(
        name=function["name"],
        description=function.get("description", ""),
        parameters=ToolParams.model_validate(function.get("parameters") or {}),
    )


def _json(call: Any) -> str:
    import json

    return json.dumps(call.arguments)


@contextmanager
def serving() -> Iterator[tuple[str, Endpoint]]:
    """The endpoint on a free loopback port, in a thread: its ``/v1`` base and its record."""
    endpoint, port = Endpoint(), free_port()
    config = uvicorn.Config(endpoint.app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/v1", endpoint
    finally:
        server.should_exit = True
        thread.join(timeout=10)
