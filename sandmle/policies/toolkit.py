"""``sandmle/toolkit``: a teacher of mixed quality for the task toolkit (``-T toolkit=true``).

With the toolkit, every sandbox holds the AutoML program as ``automl.py`` in the agent's work
dir, and ``python automl.py LEVEL`` fits a model of that strength and writes the submission
(0 dummy, 1 linear, 2 random forest, 3 gradient boosting, 4 tuned by cross-validation). This
policy makes that one short call, then submits. Its level is drawn per episode, so imitation
learns a mix of good and poor calls and a reward that counts above-median can learn to prefer
the better ones: the k-th episode on a prompt takes level ``levels[(offset + k) % len]``, the
offset a hash of the prompt, so ``epochs = len(levels)`` gives every task each level exactly
once, whatever order the episodes run in. ``-M levels=3,4`` narrows the mix, ``-M level=4``
fixes it. Tree scaffolds get a Python script that runs the same command.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo

from sandmle.errors import SandmleError
from sandmle.harness.layout import TOOLKIT_PATH
from sandmle.policies.automl import LEVEL_NAMES
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
TOOLKIT_FILE = TOOLKIT_PATH.rsplit("/", 1)[1]
LEVELS = tuple(range(len(LEVEL_NAMES)))


def toolkit_command(level: int) -> str:
    """The shell command for one variant (the work dir is the shell's cwd)."""
    return f"python {TOOLKIT_FILE} {level}"


def toolkit_code(level: int) -> str:
    """The same call as a Python script, for scaffolds that ask for code."""
    return (
        "import subprocess\nimport sys\n\n"
        f'subprocess.run([sys.executable, "{TOOLKIT_PATH}", "{level}"], check=True)\n'
    )


def parse_levels(levels: Any = None, level: Any = None) -> tuple[int, ...]:
    """The mix from model args: ``level`` (one), ``levels`` ("0,3,4" or a list), or all."""
    raw = [level] if level is not None else levels
    if raw is None:
        return LEVELS
    items = str(raw).replace(" ", "").strip("[]()").split(",") if isinstance(raw, str) else raw
    try:
        chosen = tuple(int(str(item).strip()) for item in items)
    except ValueError:
        raise SandmleError(
            f"sandmle/toolkit: levels must be integers in 0-4, got {raw!r}"
        ) from None
    if not chosen or any(value not in LEVELS for value in chosen):
        raise SandmleError(f"sandmle/toolkit: levels must be integers in 0-4, got {raw!r}")
    return chosen


class ToolkitPolicy:
    """Draws a level per episode (see the module), then acts on it."""

    def __init__(self, levels: tuple[int, ...]) -> None:
        self.levels = levels
        self.seen: Counter[str] = Counter()

    def next_level(self, prompt: str) -> int:
        digest = hashlib.sha256(prompt.encode("utf-8")).digest()
        offset = int.from_bytes(digest[:4], "big")
        index = (offset + self.seen[prompt]) % len(self.levels)
        self.seen[prompt] += 1
        return self.levels[index]

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
        level = self.next_level(prompt)
        if operator is not None or not names:
            return reply(MODEL, f"```python\n{toolkit_code(level)}```\n")
        if "bash" in names:
            command = toolkit_command(level)
            return call(MODEL, "bash", {first_parameter(tools, "bash", "cmd"): command}, "")
        action = run_code(MODEL, tools, toolkit_code(level), "")
        return action or reply(MODEL, f"```python\n{toolkit_code(level)}```\n")


def toolkit_policy(levels: Any = None, level: Any = None) -> Policy:
    return ToolkitPolicy(parse_levels(levels, level))
