"""``sandmle/chaos``: an offline adversary that answers like a weak real model.

Each reply is drawn, by a seeded hash of the conversation and of how often that conversation
was sent before (so a run repeats, and a retried prompt gets a fresh draw, as from a sampling
model), from a mix of failure modes; the rest are ``sandmle/heuristic``'s good
answers. Rates are model args: ``-M seed=1 -M prose=0.3`` (unnamed modes keep their
defaults; a mode's weight is relative to the others of its kind).

Operator prompts: good code, unfenced code, several blocks, a syntax error, code that runs and
crashes (a ``KeyError`` with a real traceback), prose only, an empty reply, a ``model_length``
stop mid-code, a very long reply, or a raised provider error.
Reviews: an honest ``submit_review`` call, the review as JSON text, a call with missing fields,
a hallucinated metric, arguments that are not valid JSON, prose, or a provider error.
Tool loops (ReAct, MLE-Dojo, also its JSON-text actions): the heuristic's next action, prose
without an action, an empty reply, an action with wrong argument names, or a long rambling reply.
"""

from __future__ import annotations

import ast
import hashlib
import json
from random import Random
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage
from inspect_ai.tool import ToolInfo

from sandmle.errors import SandmleError
from sandmle.policies.base import Policy
from sandmle.policies.conversation import RUN_TOOLS, call, json_actions, reply, tool_names
from sandmle.policies.heuristic import heuristic_policy
from sandmle.scaffolds import prompt_format as pf

MODEL = "sandmle/chaos"
CODE_MODES = {
    "good": 0.3,
    "unfenced": 0.08,
    "several_blocks": 0.08,
    "syntax_error": 0.1,
    "crash": 0.08,
    "prose": 0.1,
    "empty": 0.06,
    "length": 0.1,
    "long": 0.06,
    "error": 0.04,
}
REVIEW_MODES = {
    "honest": 0.4,
    "text_json": 0.15,
    "missing_fields": 0.1,
    "hallucinated_metric": 0.1,
    "bad_json": 0.1,
    "review_prose": 0.1,
    "review_error": 0.05,
}
TOOL_MODES = {"act": 0.65, "no_tool": 0.12, "tool_empty": 0.05, "wrong_args": 0.13, "ramble": 0.05}
RAMBLE = (
    "Let me think about this carefully. The data has several columns and the target looks "
    "noisy, so a robust model is probably best, although it depends on the metric. "
)


class ChaosError(RuntimeError):
    """The provider failure ``sandmle/chaos`` raises on purpose."""


def chaos_policy(seed: int = 0, **rates: float) -> Policy:
    """The chaos policy with the given seed and mode rates (see the module docstring)."""
    known = {**CODE_MODES, **REVIEW_MODES, **TOOL_MODES}
    unknown = set(rates) - set(known)
    if unknown:
        raise SandmleError(f"unknown sandmle/chaos rates: {', '.join(sorted(unknown))}")
    if any(float(v) < 0 for v in rates.values()):
        raise SandmleError("sandmle/chaos rates must be >= 0")
    weights = {**known, **{k: float(v) for k, v in rates.items()}}
    seen: dict[str, int] = {}

    def respond(
        messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        key = conversation_key(seed, messages)
        seen[key] = seen.get(key, 0) + 1
        rng = Random(f"{key}:{seen[key]}")
        output = answer(rng, weights, messages, tools)
        prompt_chars = sum(len(m.text) for m in messages)
        output.usage = ModelUsage(
            input_tokens=prompt_chars // 4,
            output_tokens=len(output.completion) // 4,
            total_tokens=(prompt_chars + len(output.completion)) // 4,
        )
        return output

    return respond


def answer(
    rng: Random, weights: dict[str, float], messages: list[ChatMessage], tools: list[ToolInfo]
) -> ModelOutput:
    names = tool_names(tools)
    if pf.REVIEW_TOOL in names:
        return review_reply(pick(rng, weights, REVIEW_MODES), messages, tools, rng)
    if names & set(RUN_TOOLS) or json_actions(messages, tools):
        return tool_reply(pick(rng, weights, TOOL_MODES), messages, tools)
    return code_reply(pick(rng, weights, CODE_MODES), messages, tools, rng)


def conversation_key(seed: int, messages: list[ChatMessage]) -> str:
    text = "\x00".join(f"{m.role}:{m.text}" for m in messages)
    return hashlib.sha256(f"{seed}\x00{text}".encode()).hexdigest()[:16]


def pick(rng: Random, weights: dict[str, float], modes: dict[str, float]) -> str:
    names = list(modes)
    values = [weights[n] for n in names]
    if sum(values) <= 0:
        return names[0]
    return rng.choices(names, weights=values, k=1)[0]


def _good(messages: list[ChatMessage], tools: list[ToolInfo]) -> ModelOutput:
    return heuristic_policy(messages, tools, GenerateConfig())


def _split(text: str) -> tuple[str, str]:
    """A good reply's plan and code."""
    plan, _, rest = text.partition("```python\n")
    return plan.strip(), rest.rsplit("```", 1)[0]


def code_reply(
    mode: str, messages: list[ChatMessage], tools: list[ToolInfo], rng: Random
) -> ModelOutput:
    if mode == "error":
        raise ChaosError("sandmle/chaos: simulated provider failure (HTTP 529 overloaded)")
    text = _good(messages, tools).message.text
    plan, code = _split(text)
    if mode == "good" or not code:
        return reply(MODEL, text)
    if mode == "unfenced":
        return reply(MODEL, code)
    if mode == "several_blocks":
        lines = code.splitlines(keepends=True)
        cut = next((i for i, line in enumerate(lines) if line.startswith("def ")), len(lines) // 2)
        head, tail = "".join(lines[:cut]), "".join(lines[cut:])
        blocks = f"```bash\npip list\n```\n\n```python\n{head}```\n\nThen:\n\n```python\n{tail}```"
        return reply(MODEL, f"{plan}\n\n{blocks}\n")
    if mode == "syntax_error":
        broken = code.replace("def ", "def broken(:\n    pass\n\ndef ", 1)
        return reply(MODEL, f"{plan}\n\n```python\n{broken}```\n")
    if mode == "crash":
        return reply(MODEL, f"{plan}\n\n```python\n{crashing(code)}```\n")
    if mode == "prose":
        return reply(MODEL, f"{plan}\n\nI would implement this with scikit-learn and pandas.")
    if mode == "empty":
        return reply(MODEL, "")
    if mode == "length":
        truncated = text[: rng.randint(len(text) // 4, len(text) // 2)]
        output = reply(MODEL, truncated)
        output.choices[0].stop_reason = "model_length"
        return output
    return reply(MODEL, f"{RAMBLE * 200}\n\n{text}")  # long


CRASH = 'settings = {"folds": 5, "seed": 0}\nfolds = settings["n_folds"]\n'
"""A slip that compiles and crashes when run: a ``KeyError`` traceback pointing at line 2."""


def crashing(code: str) -> str:
    """``code`` with a crashing line after its imports, so it compiles, starts and dies."""
    lines = code.splitlines(keepends=True)
    head = 0
    for statement in ast.parse(code).body:  # the good code compiles
        docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        if not (docstring or isinstance(statement, ast.Import | ast.ImportFrom)):
            break
        head = statement.end_lineno or head
    return "".join(lines[:head]) + CRASH + "".join(lines[head:])


def _review_args(messages: list[ChatMessage], tools: list[ToolInfo]) -> dict[str, Any]:
    honest = _good(messages, tools)
    calls = honest.message.tool_calls or []
    if calls:
        return dict(calls[0].arguments)
    return json.loads(honest.message.text)


def review_reply(
    mode: str, messages: list[ChatMessage], tools: list[ToolInfo], rng: Random
) -> ModelOutput:
    if mode == "review_error":
        raise ChaosError("sandmle/chaos: simulated provider failure (connection reset)")
    args = _review_args(messages, tools)
    if mode == "honest":
        return call(MODEL, pf.REVIEW_TOOL, args, "Review submitted.")
    if mode == "text_json":
        return reply(MODEL, f"Here is my review:\n{json.dumps(args)}\nThanks.")
    if mode == "missing_fields":
        partial = {k: v for k, v in args.items() if k in ("metric", "summary")}
        return call(MODEL, pf.REVIEW_TOOL, partial, "Review submitted.")
    if mode == "hallucinated_metric":
        invented = round(rng.uniform(0.9, 0.999), 4)
        return call(MODEL, pf.REVIEW_TOOL, {**args, "is_bug": False, "metric": invented}, "")
    if mode == "bad_json":
        output = call(MODEL, pf.REVIEW_TOOL, {}, "Review submitted.")
        for bad in output.message.tool_calls or []:  # the one call just made
            bad.parse_error = "Expecting ',' delimiter: line 1 column 40"
        return output
    return reply(MODEL, "The run looks fine to me overall; the model trained and predicted.")


def tool_reply(mode: str, messages: list[ChatMessage], tools: list[ToolInfo]) -> ModelOutput:
    if mode == "act":
        return _good(messages, tools)
    if mode == "no_tool":
        return reply(MODEL, "I will now train a gradient boosting model on the data.")
    if mode == "tool_empty":
        return reply(MODEL, "")
    if mode == "wrong_args" and not tools:  # a JSON-text action with the wrong params
        return reply(MODEL, json.dumps({"action": "execute_code", "params": {"script": "1"}}))
    if mode == "wrong_args":
        name = sorted(tool_names(tools) & set(RUN_TOOLS))[0]
        return call(MODEL, name, {"script": "print('hello')"}, "Running a quick check.")
    return reply(MODEL, RAMBLE * 50)  # ramble
