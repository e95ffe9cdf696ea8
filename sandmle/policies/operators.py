"""The heuristic's answers to tree-scaffold operator prompts (``scaffolds/prompt_format.py``).

The operator is read from the prompt's sections, as a model reads it (``operator_of``); the
data folder and the submission path from the task's instructions.

draft: the AutoML script, its strength cycling with the number of solutions in memory, so
drafts differ; improve: one level stronger than the previous script; debug: what the error
calls for (drop the feature that broke, go simpler, or hand in the sample as a last resort);
crossover: the stronger of the two parents; analyze: ``submit_review`` read from the output.
"""

from __future__ import annotations

import json
import re

from inspect_ai.model import ModelOutput
from inspect_ai.tool import ToolInfo

from sandmle.policies.automl import (
    DEFAULT_LEVEL,
    LEVEL_NAMES,
    MAX_LEVEL,
    automl_code,
    code_is_safe,
    code_level,
    parse_metric,
)
from sandmle.policies.conversation import (
    call,
    code_block,
    reply,
    sample_submission_path,
    tool_names,
)
from sandmle.policies.sample_copy import COPIED, copy_code
from sandmle.scaffolds import prompt_format as pf

DRAFT_LEVELS = (1, 2, 3)
"""Drafts cycle linear → random forest → gradient boosting as memory grows."""
FEATURE_FAULTS = re.compile(
    r"PIL|Image|tfidf|Tfidf|image_features|date_parts|time_column|to_datetime"
)
HEAVY_FAULTS = re.compile(r"MemoryError|Killed|TimeoutError|timed out|time limit", re.I)
MISSING_SUBMISSION = re.compile(
    r"submission\.csv[^\n]*(not found|missing|was not written|does not exist)|no submission", re.I
)
LOWER_WORDS = re.compile(r"\((lower|higher) is better\)")


def answer_operator(operator: str, prompt: str, tools: list[ToolInfo], model: str) -> ModelOutput:
    if operator == "analyze":
        return analyze(prompt, tools, model)
    task = pf.section(prompt, pf.TASK_SECTION) or prompt
    previous = code_block(pf.main_code(prompt) or "")
    if operator == "draft":
        level, safe, why = draft_choice(pf.section(prompt, pf.MEMORY_SECTION) or "")
    elif operator == "improve":
        level, safe, why = improve_choice(previous)
    elif operator == "debug":
        output = pf.section(prompt, pf.EXECUTION_OUTPUT_SECTION) or ""
        level, safe, why = debug_choice(previous, output)
        if level < 0:
            sample = sample_submission_path(task)
            return reply(model, f"Plan: {why}\n\n```python\n{_copy(sample, task)}```\n")
    else:
        second = code_block(pf.section(prompt, pf.SECOND_CODE_SECTION) or "")
        level, safe, why = crossover_choice(previous, second)
    return solution(model, level, safe, why, task)


def solution(model: str, level: int, safe: bool, why: str, task: str = "") -> ModelOutput:
    features = "numbers and categories only" if safe else "every feature type found"
    data_dir = pf.data_dir_of(task) or "the data folder"
    plan = (
        f"Plan: {why} The script reads {data_dir}, infers the task from the sample submission, "
        f"builds features ({features}), fits a {LEVEL_NAMES[level]} model (level {level}), "
        "prints the cross-validated metric and writes the submission file."
    )
    code = task_automl_code(task, level, safe)
    return reply(model, f"{plan}\n\n```python\n{code}```\n")


def task_automl_code(task: str, level: int, safe: bool) -> str:
    """The AutoML script pointed at the folders the task's instructions name."""
    submission = pf.submission_path_of(task)
    return automl_code(
        level, safe, pf.data_dir_of(task), submission.rsplit("/", 1)[0] if submission else None
    )


def draft_choice(memory: str) -> tuple[int, bool, str]:
    entries = len(re.findall(r"^(?:Design|Debug plan):", memory, re.M))
    level = DRAFT_LEVELS[entries % len(DRAFT_LEVELS)]
    return level, False, f"Draft a {LEVEL_NAMES[level]} baseline ({entries} solutions in memory)."


def improve_choice(previous: str | None) -> tuple[int, bool, str]:
    level = code_level(previous)
    if level is None:
        return DEFAULT_LEVEL, False, "Replace the previous solution with a gradient-boosting model."
    if level >= MAX_LEVEL:
        return MAX_LEVEL, code_is_safe(previous), "Keep the tuned model (already the strongest)."
    return (
        level + 1,
        code_is_safe(previous),
        f"Move from {LEVEL_NAMES[level]} to {LEVEL_NAMES[level + 1]}.",
    )


def debug_choice(previous: str | None, output: str) -> tuple[int, bool, str]:
    """Level and SAFE for a fix; level -1 means hand in the sample submission."""
    error = error_line(output)
    level, safe = code_level(previous), code_is_safe(previous)
    if level is None:
        return 1, False, f"The previous script failed ({error}); use a robust linear script."
    if HEAVY_FAULTS.search(output):
        return max(level - 1, 0), True, f"The run ran out of time or memory ({error}); go simpler."
    if not safe and FEATURE_FAULTS.search(output):
        return level, True, f"Feature extraction failed ({error}); use numbers and categories."
    if level == 0 and safe:
        return -1, True, f"Even the simplest model failed ({error}); hand in the sample submission."
    return max(level - 1, 0), True, f"The script failed ({error}); use a simpler, safer model."


def crossover_choice(first: str | None, second: str | None) -> tuple[int, bool, str]:
    levels = [
        (found, code_is_safe(c)) for c in (first, second) if (found := code_level(c)) is not None
    ]
    if not levels:
        return DEFAULT_LEVEL, False, "Neither parent is an AutoML script; use gradient boosting."
    level, safe = max(levels, key=lambda pair: (pair[0], not pair[1]))
    return level, safe, f"Keep the stronger parent: {LEVEL_NAMES[level]}."


def error_line(output: str) -> str:
    """The exception line of a traceback, else the last non-empty line."""
    lines = [line.strip() for line in (output or "").splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[\w.]+(Error|Exception|Interrupt|Exit)\b", line):
            return line[:300]
    return lines[-1][:300] if lines else "no output"


def _copy(sample: str | None, task: str) -> str:
    return copy_code(sample, pf.submission_path_of(task))


# ---------------------------------------------------------------- analyze


def lower_is_better(task_text: str, output: str) -> bool:
    """From the metric the task names; else from what the script printed; else higher."""
    from sandmle.harness.grading.metrics import get_metric
    from sandmle.sandbox_scripts.automl import find_metric

    name = find_metric(task_text or "")
    if name is not None:
        try:
            return bool(get_metric(name).lower_is_better)
        except KeyError:
            pass
    words = LOWER_WORDS.search(output or "")
    return bool(words and words.group(1) == "lower")


def review(prompt: str) -> dict:
    """An honest review of one run: bug or not, what happened, and its metric."""
    output = pf.section(prompt, pf.EXECUTION_OUTPUT_SECTION) or ""
    code = code_block(pf.main_code(prompt) or "")
    metric = parse_metric(output)
    crashed = "Traceback (most recent call last)" in output
    copied = COPIED in output and not crashed
    missing = MISSING_SUBMISSION.search(output) is not None or (
        code_level(code) is not None and "Wrote submission:" not in output
    )
    is_bug = crashed or (missing and not copied) or (metric is None and not copied)
    if crashed:
        summary = f"The script crashed: {error_line(output)}"
    elif copied:
        summary = "The sample submission was handed in; there is no validation metric."
    elif metric is None:
        summary = "The run printed no 'Validation metric' line, so it cannot be judged."
    elif missing:
        summary = f"Validation metric {metric:.5f}, but no submission.csv was written."
    else:
        model = re.search(r"Model: ([^\n]+)", output)
        summary = f"{model.group(1) if model else 'The model'} ran; validation metric {metric:.5f}."
    lower = lower_is_better(pf.section(prompt, pf.TASK_SECTION) or prompt, output)
    return {
        "is_bug": is_bug,
        "summary": summary,
        "metric": None if is_bug else metric,
        "lower_is_better": lower,
    }


def analyze(prompt: str, tools: list[ToolInfo], model: str) -> ModelOutput:
    arguments = review(prompt)
    if pf.REVIEW_TOOL in tool_names(tools):
        return call(model, pf.REVIEW_TOOL, arguments, arguments["summary"])
    return reply(model, json.dumps(arguments))
