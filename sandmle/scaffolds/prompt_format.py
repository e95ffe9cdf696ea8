"""The shape every tree-scaffold prompt shares, so that any reader can tell what it asks.

An operator prompt is markdown with top-level sections headed by the constants below (as in
aideml's and aira-dojo's prompts). Which operator a prompt is for shows in its content, the
way a model reads it: a debug prompt holds a buggy solution and its output, an improve prompt
a solution to improve, a crossover prompt two solutions, an analyze prompt an implementation
to review; a draft holds none of them. No header exists only for machines.
"""

from __future__ import annotations

import re

TASK_SECTION = "# Task description"
"""The competition's task text (description + harness instructions)."""
MEMORY_SECTION = "# Memory"
"""Summaries of earlier solutions and their metrics."""
DATA_SECTION = "# Data overview"
"""The data preview: files, shapes, column types, ranges, missing values."""
ENVIRONMENT_SECTION = "# Environment"
"""Time and steps left, hardware, installed packages."""
IMPROVE_CODE_SECTION = "# Solution to improve"
"""The parent's code (improve)."""
BUGGY_CODE_SECTION = "# Buggy solution"
"""The failed parent's code (debug)."""
FIRST_CODE_SECTION = "# First solution"
"""The first parent's code (crossover)."""
SECOND_CODE_SECTION = "# Second solution"
"""The second parent's code (crossover)."""
IMPLEMENTATION_SECTION = "# Implementation"
"""The code whose run is reviewed (analyze)."""
EXECUTION_OUTPUT_SECTION = "# Execution output"
"""A run's output (debug, analyze; improve and crossover for context)."""
SECOND_OUTPUT_SECTION = "# Second execution output"
"""The second parent's run output (crossover)."""
INSTRUCTIONS_SECTION = "# Instructions"
"""What to return: a plan then one python block, or a review."""

OPERATORS = ("draft", "improve", "debug", "analyze", "crossover")
CODE_SECTIONS = {
    BUGGY_CODE_SECTION: "debug",
    IMPROVE_CODE_SECTION: "improve",
    FIRST_CODE_SECTION: "crossover",
    IMPLEMENTATION_SECTION: "analyze",
}
"""The section holding a prompt's main code, and the operator it shows."""

REVIEW_TOOL = "submit_review"
"""Function the analyze step offers: is_bug, summary, metric, lower_is_better."""
METRIC_LINE = re.compile(
    r"Validation metric:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)", re.IGNORECASE
)
"""A machine-readable metric line: when a run prints one, it is the metric trusted (no
prompt requires it; the reference policies print it)."""


def headings(prompt: str) -> list[str]:
    """The top-level headings of a prompt, outside code fences, in order."""
    found, fenced = [], False
    for line in prompt.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            found.append(line.strip())
    return found


def operator_of(prompt: str) -> str | None:
    """The operator a prompt asks for, read from its sections; None for other prompts."""
    present = headings(prompt)
    if TASK_SECTION not in present:
        return None
    for heading, operator in CODE_SECTIONS.items():
        if heading in present:
            return operator
    return "draft"


def section(prompt: str, heading: str) -> str | None:
    """The text under ``heading`` up to the next top-level heading; None when absent."""
    lines = prompt.splitlines()
    try:
        start = lines.index(heading) + 1
    except ValueError:
        return None
    body: list[str] = []
    fenced = False
    for line in lines[start:]:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            break
        body.append(line)
    return "\n".join(body).strip()


def main_code(prompt: str) -> str | None:
    """The section holding the prompt's main code (the parent, or the reviewed run)."""
    for heading in CODE_SECTIONS:
        found = section(prompt, heading)
        if found is not None:
            return found
    return None


_DATA_DIR = re.compile(r"data is in `(/[^`]+)`")
_SUBMISSION = re.compile(r"(?:predictions|submission)[^`\n]* to `(/[^`]+/submission\.csv)`")


def data_dir_of(task_text: str) -> str | None:
    """The data folder as the task's instructions name it (``The ... data is in `/x```)."""
    match = _DATA_DIR.search(task_text or "")
    return match.group(1).rstrip("/") if match else None


def submission_path_of(task_text: str) -> str | None:
    """The submission file as the task's instructions name it."""
    match = _SUBMISSION.search(task_text or "")
    return match.group(1) if match else None


def parse_metric(output: str) -> float | None:
    """The last ``Validation metric: <value>`` in a run's output; None when absent or not finite."""
    found = METRIC_LINE.findall(output or "")
    if not found:
        return None
    value = float(found[-1])
    return value if value == value and abs(value) != float("inf") else None
