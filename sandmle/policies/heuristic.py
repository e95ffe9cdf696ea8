"""``sandmle/heuristic``: a deterministic AutoML baseline that answers every scaffold's prompts.

With tools (ReAct), or asked for JSON-text actions (MLE-Dojo's agent loop), it runs the AutoML script, retries weaker and safer versions if a run
fails, checks the file with ``validate_submission`` and submits. On operator prompts
(``sandmle.scaffolds.prompt_format``) it answers draft, improve, debug and crossover with a
plan and the script at a chosen strength, and analyze with an honest ``submit_review`` read
from the run's output. It is a baseline, not an agent: it never looks at scores it is not shown.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo

from sandmle.policies.automl import DEFAULT_LEVEL, LEVEL_NAMES, automl_code, parse_metric
from sandmle.policies.conversation import (
    RUN_TOOLS,
    ToolRun,
    act,
    call,
    finish,
    first_user_text,
    json_actions,
    prompt_texts,
    reply,
    run_text,
    sample_submission_path,
    tool_names,
    tool_runs,
)
from sandmle.policies.operators import analyze, answer_operator, error_line, task_automl_code
from sandmle.policies.sample_copy import COPIED, copy_code
from sandmle.scaffolds import prompt_format as pf

MODEL = "sandmle/heuristic"
LABEL = "sandmle/heuristic (deterministic AutoML baseline)"
WROTE = "Wrote submission:"
# ReAct retries: the default model, then simpler and safer ones, then the sample submission.
LADDER: tuple[tuple[int, bool], ...] = ((DEFAULT_LEVEL, False), (1, False), (1, True), (0, True))

__all__ = ["analyze", "heuristic_policy"]


def heuristic_policy(
    messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> ModelOutput:
    prompt = operator_prompt(messages)
    operator = "analyze" if pf.REVIEW_TOOL in tool_names(tools) else pf.operator_of(prompt)
    if operator is not None:
        return answer_operator(operator, prompt, tools, MODEL)
    if tool_names(tools) & set(RUN_TOOLS) or json_actions(messages, tools):
        return react_step(messages, tools)
    return reply(MODEL, f"{LABEL}. Run this script:\n\n```python\n{automl_code()}```\n")


def operator_prompt(messages: list[ChatMessage]) -> str:
    """The latest prompt that is an operator prompt (a repair request refers back to it), else
    the latest prompt (system or user message)."""
    users = prompt_texts(messages)
    for text in reversed(users):
        if pf.operator_of(text) is not None:
            return text
    return users[-1] if users else ""


def succeeded(run: ToolRun) -> bool:
    return (WROTE in run.output or COPIED in run.output) and "Traceback" not in run.output


def react_step(messages: list[ChatMessage], tools: list[ToolInfo]) -> ModelOutput:
    """The next action from what has happened so far: run, retry, validate, or submit."""
    runs = tool_runs(messages)
    # a call whose arguments held no code ran nothing: it is not an attempt
    attempts = [r for r in runs if r.function in RUN_TOOLS and run_text(r)]
    good = [i for i, r in enumerate(runs) if r in attempts and succeeded(r)]
    if not good:
        return next_attempt(messages, tools, attempts)
    last_good = runs[good[-1]]
    checks = [r for r in runs[good[-1] + 1 :] if r.function == "validate_submission"]
    if "validate_submission" in tool_names(tools) and not checks:
        return call(MODEL, "validate_submission", {}, "Check the submission's format.")
    if checks and "invalid" in checks[-1].output.lower() and len(attempts) < len(LADDER) + 1:
        return next_attempt(messages, tools, attempts)
    metric = parse_metric(last_good.output)
    shown = "n/a" if metric is None else f"{metric:.5f}"
    summary = f"{LABEL}: wrote the submission file (validation metric {shown})."
    return finish(MODEL, tools, summary, json_actions(messages, tools))


def next_attempt(
    messages: list[ChatMessage], tools: list[ToolInfo], attempts: list[ToolRun]
) -> ModelOutput:
    if len(attempts) < len(LADDER):
        level, safe = LADDER[len(attempts)]
        why = f" The previous run failed: {error_line(attempts[-1].output)}." if attempts else ""
        text = (
            f"{LABEL}.{why} Write and run an AutoML script: {LEVEL_NAMES[level]} "
            f"(level {level}{', safe features' if safe else ''})."
        )
        code = task_automl_code(first_user_text(messages), level, safe)
        action = act(MODEL, messages, tools, code, text)
    elif len(attempts) == len(LADDER) and not any(COPIED in run_text(a) for a in attempts):
        task = first_user_text(messages)
        code = copy_code(sample_submission_path(task), pf.submission_path_of(task))
        action = act(MODEL, messages, tools, code, "Every model failed: hand in the sample.")
    else:
        action = None
    return action or finish(
        MODEL, tools, f"{LABEL}: no run succeeded.", json_actions(messages, tools)
    )
