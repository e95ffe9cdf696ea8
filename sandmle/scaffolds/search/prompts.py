"""Building operator prompts in the shared format of ``sandmle.scaffolds.prompt_format``.

Every prompt starts with ``# Operator: <name>`` and has top-level sections (task, memory,
previous code, execution output, instructions). Embedded free text has its top-level
headings demoted so that it cannot end a section early; code and outputs are fenced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sandmle.harness.layout import DATA_DIR, SUBMISSION_PATH
from sandmle.harness.search_tree import SearchNode
from sandmle.scaffolds.prompt_format import (
    EXECUTION_OUTPUT_SECTION,
    INSTRUCTIONS_SECTION,
    MEMORY_SECTION,
    OPERATOR_LINE,
    PREVIOUS_CODE_SECTION,
    REVIEW_TOOL,
    SECOND_CODE_SECTION,
    TASK_SECTION,
)

RESPONSE_FORMAT = (
    "Reply with a short plan in natural language (3-5 sentences), followed by a single "
    "markdown code block (```python ... ```) holding one complete, self-contained Python "
    "script that implements it. Nothing else: no extra headings, no other code blocks."
)
ANALYZE_INSTRUCTIONS = (
    "You are reviewing the run of a script written for the task above. Judge from the "
    "code and its output whether it ran without error and produced a valid submission, "
    "and report the validation metric it printed (null if none). Call the "
    f"`{REVIEW_TOOL}` function with is_bug, summary, metric and lower_is_better."
)


def script_rules(timeout: int) -> str:
    """What every script must do, in the harness's terms."""
    return (
        f"The data is in `{DATA_DIR}` (read-only). The script must print the validation "
        f"metric on a hold-out set and write its test predictions to `{SUBMISSION_PATH}`, "
        "in the format of the sample submission. It runs as `python solution.py` in its "
        f"own working directory, with no internet access, and must finish within {timeout} "
        "seconds."
    )


def demote(text: str) -> str:
    """Turn ``# Heading`` lines into ``## Heading`` so embedded text keeps its section."""
    return re.sub(r"^# ", "## ", text, flags=re.MULTILINE)


def fence(text: str, lang: str = "") -> str:
    """Fence text, neutralising fences inside it."""
    safe = text.replace("```", "'''")
    return f"```{lang}\n{safe}\n```"


def sections(operator: str, intro: str, parts: Iterable[tuple[str, str]]) -> str:
    """The full prompt: the operator line, an intro, then each non-empty section."""
    lines = [OPERATOR_LINE.format(name=operator), "", intro.strip(), ""]
    for heading, body in parts:
        if body.strip():
            lines += [heading, "", body.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"


def task_part(task: str) -> tuple[str, str]:
    return TASK_SECTION, demote(task)


def memory_part(memory: str) -> tuple[str, str]:
    return MEMORY_SECTION, demote(memory)


def code_part(node: SearchNode, second: bool = False) -> tuple[str, str]:
    heading = SECOND_CODE_SECTION if second else PREVIOUS_CODE_SECTION
    body = f"{demote(node.plan)}\n\n{fence(node.code, 'python')}" if node.plan else ""
    return heading, body or fence(node.code, "python")


def output_part(node: SearchNode) -> tuple[str, str]:
    return EXECUTION_OUTPUT_SECTION, fence(node.output or "(no output)")


def instructions_part(*lines: str) -> tuple[str, str]:
    return INSTRUCTIONS_SECTION, "\n".join(f"- {line}" for line in lines if line)


def node_summary(node: SearchNode) -> str:
    """One memory entry: the plan, the verdict and the metric."""
    if node.is_bug:
        result = "buggy (no metric)"
    else:
        result = f"validation metric {node.metric:.6g}"
    plan = " ".join(node.plan.split())[:600] or "(no plan given)"
    summary = " ".join(node.summary.split())[:400]
    return f"## Solution {node.id} ({node.operator}): {result}\nPlan: {plan}\n" + (
        f"Result: {summary}\n" if summary else ""
    )


def memory_text(nodes: Iterable[SearchNode]) -> str:
    return "\n".join(node_summary(n) for n in nodes)


def analyze_prompt(task: str, node: SearchNode) -> str:
    """The analyze step's prompt (shared by AIDE and AIRA: AIRA reuses AIDE's analyze)."""
    return sections(
        "analyze",
        "You are a Kaggle grandmaster reviewing an experiment's run.",
        [
            task_part(task),
            code_part(node),
            output_part(node),
            instructions_part(ANALYZE_INSTRUCTIONS),
        ],
    )
