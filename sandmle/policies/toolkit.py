"""``sandmle/toolkit``: a teacher of mixed quality for the task toolkit (``-T toolkit=true``).

With the toolkit, every sandbox holds the AutoML program as ``automl.py`` in the agent's work
dir, and ``python automl.py FAMILY`` fits a gradient-boosting model on one family of the
data's inputs and writes the submission: ``table`` (numbers, categories, dates), or those plus
``text``, ``images``, ``audio`` or ``series`` (time trends). A family the task lacks fails, and
one that misses the task's signal scores low, so the right call depends on the task, as an ML
engineer's does. This policy makes that one short call, then submits. Its family is drawn per
episode, so imitation learns the call and a mix of families, and a reward that counts
above-median can learn which family each task wants: the k-th episode on a prompt takes
``options[(offset + k) % len]``, the offset a hash of the prompt, so ``epochs = len(options)``
gives every task each option exactly once, whatever order the episodes run in. ``-M
options=table,text`` narrows the mix, ``-M option=images`` fixes it. Tree scaffolds get a
Python script that runs the same command.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo

from sandmle.errors import SandmleError
from sandmle.harness.automl_program import TOOLKIT_OPTIONS, toolkit_command
from sandmle.harness.layout import TOOLKIT_PATH
from sandmle.policies.base import Policy
from sandmle.policies.conversation import (
    call,
    finish,
    first_parameter,
    first_user_text,
    json_actions,
    reply,
    run_code,
    tool_names,
    tool_runs,
)
from sandmle.policies.heuristic import WROTE
from sandmle.policies.operators import analyze
from sandmle.scaffolds.prompt_format import REVIEW_TOOL, operator_of

MODEL = "sandmle/toolkit"
OPTIONS = TOOLKIT_OPTIONS


def toolkit_code(option: str) -> str:
    """The same call as a Python script, for scaffolds that ask for code."""
    return (
        "import subprocess\nimport sys\n\n"
        f'subprocess.run([sys.executable, "{TOOLKIT_PATH}", "{option}"], check=True)\n'
    )


def parse_options(options: Any = None, option: Any = None) -> tuple[str, ...]:
    """The mix from model args: ``option`` (one), ``options`` ("table,text" or a list), or all."""
    raw = [option] if option is not None else options
    if raw is None:
        return OPTIONS
    items = str(raw).replace(" ", "").strip("[]()").split(",") if isinstance(raw, str) else raw
    chosen = tuple(str(item).strip().strip("'\"") for item in items)
    if not chosen or any(value not in OPTIONS for value in chosen):
        raise SandmleError(
            f"sandmle/toolkit: options must be among {', '.join(OPTIONS)}, got {raw!r}"
        )
    return chosen


class ToolkitPolicy:
    """Draws an option per episode (see the module), then acts on it."""

    def __init__(self, options: tuple[str, ...]) -> None:
        self.options = options
        self.seen: Counter[str] = Counter()

    def next_option(self, prompt: str) -> str:
        digest = hashlib.sha256(prompt.encode("utf-8")).digest()
        offset = int.from_bytes(digest[:4], "big")
        index = (offset + self.seen[prompt]) % len(self.options)
        self.seen[prompt] += 1
        return self.options[index]

    def __call__(
        self, messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        names = tool_names(tools)
        prompt = first_user_text(messages)
        operator = "analyze" if REVIEW_TOOL in names else operator_of(messages[-1].text)
        if operator == "analyze":
            return analyze(messages[-1].text, tools, MODEL)
        runs = tool_runs(messages)
        if runs:  # one call is all this policy makes
            done = any(WROTE in run.output for run in runs)
            note = "The toolkit wrote the submission." if done else "The toolkit call failed."
            return finish(MODEL, tools, note, json_actions(messages, tools))
        option = self.next_option(prompt)
        if operator is not None or not names:
            return reply(MODEL, f"```python\n{toolkit_code(option)}```\n")
        if "bash" in names:
            command = toolkit_command(option)
            return call(MODEL, "bash", {first_parameter(tools, "bash", "cmd"): command}, "")
        action = run_code(MODEL, tools, toolkit_code(option), "")
        return action or reply(MODEL, f"```python\n{toolkit_code(option)}```\n")


def toolkit_policy(options: Any = None, option: Any = None) -> Policy:
    return ToolkitPolicy(parse_options(options, option))
