"""A vLLM tool parser for SmolLM2-135M-Instruct in the vLLM CPU lane (loaded by the server:
``--tool-parser-plugin bench/vllm_cpu/smollm2_tool_parser.py --tool-call-parser sandmle_smollm2``).

Hermes' ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` first (what the lane's
template asks for); else the model's own habit, a fenced code block: the first
```` ```python ```` block becomes a call of the offered ``python`` tool (its one string
argument; where no ``python`` tool is offered, the Dojo loop's ``execute_code``), a
```` ```bash ```` / ```` ```sh ```` block one of ``bash``. Measured on the first
turn of a sandmle/react episode: "<tool_call>" starts about 1 turn in 100 (logprob -4 to -6),
a code fence is the most likely opening. An unlabeled fence counts as a python block. The template renders past calls of these tools back
as the same fenced blocks, so a conversation re-renders as the model wrote it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vllm.entrypoints.generate.base.protocol import (
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.tool_parsers.abstract_tool_parser import ToolParserManager
from vllm.tool_parsers.hermes_tool_parser import Hermes2ProToolParser

FENCE = re.compile(r"```[ \t]*(python|py|bash|sh|shell)?[ \t]*\n(.*?)(?:```|$)", re.S)
TOOL_FOR = {"python": "python", "py": "python", "bash": "bash", "sh": "bash", "shell": "bash"}
"""An unlabeled fence is read as python: the 135M model opens code with a bare ``` too."""
RUNS_PYTHON = ("python", "execute_code")
"""Offered tools a python block may call, first one offered wins (execute_code: MLE-Dojo's)."""


def offered(request: Any) -> dict[str, str]:
    """Tool name -> its single required string parameter, for the tools the request offers."""
    out = {}
    for tool in getattr(request, "tools", None) or []:
        function = tool.function
        params = (function.parameters or {}).get("properties", {})
        strings = [k for k, v in params.items() if v.get("type") == "string"]
        if len(strings) == 1:
            out[function.name] = strings[0]
    return out


@ToolParserManager.register_module("sandmle_smollm2")
class SmolLM2ToolParser(Hermes2ProToolParser):
    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        hermes = super().extract_tool_calls(model_output, request)
        if hermes.tools_called:
            return hermes
        tools = offered(request)
        for match in FENCE.finditer(model_output):
            name = TOOL_FOR[match.group(1) or "python"]
            if name == "python":
                name = next((t for t in RUNS_PYTHON if t in tools), name)
            body = match.group(2).strip()
            if name in tools and body:
                call = ToolCall(
                    type="function",
                    function=FunctionCall(name=name, arguments=json.dumps({tools[name]: body})),
                )
                content = model_output[: match.start()].strip() or None
                return ExtractedToolCallInformation(
                    tools_called=True, tool_calls=[call], content=content
                )
        return hermes
