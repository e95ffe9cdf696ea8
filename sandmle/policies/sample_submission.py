"""``sandmle/sample-submission``: hand in the sample submission unchanged (MLE-bench's floor)."""

from __future__ import annotations

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo

from sandmle.policies.conversation import (
    call,
    finish,
    first_parameter,
    first_user_text,
    last_user_text,
    reply,
    run_code,
    sample_submission_path,
    tool_names,
    tool_runs,
)
from sandmle.policies.operators import analyze
from sandmle.policies.sample_copy import COPIED, copy_code, copy_command
from sandmle.scaffolds.prompt_format import REVIEW_TOOL, operator_of

MODEL = "sandmle/sample-submission"
PLAN = "Plan: hand in the competition's sample submission unchanged (a floor baseline, no model)."


def sample_submission_policy(
    messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> ModelOutput:
    prompt = last_user_text(messages)
    operator = operator_of(prompt)
    sample = sample_submission_path(first_user_text(messages)) or sample_submission_path(prompt)
    if operator == "analyze":
        return analyze(prompt, tools, MODEL)
    if operator is not None:
        return reply(MODEL, f"{PLAN}\n\n```python\n{copy_code(sample)}```\n")
    runs = tool_runs(messages)
    if runs:  # one copy is all this policy does; report whether it worked
        done = any(COPIED in run.output for run in runs)
        note = "Handed in the sample submission unchanged." if done else "Copying failed."
        return finish(MODEL, tools, note)
    if "bash" in tool_names(tools):
        arguments = {first_parameter(tools, "bash", "cmd"): copy_command(sample)}
        return call(MODEL, "bash", arguments, PLAN)
    action = run_code(MODEL, tools, copy_code(sample), PLAN)
    if action is None or REVIEW_TOOL in tool_names(tools):
        return reply(MODEL, f"{PLAN}\n\n```python\n{copy_code(sample)}```\n")
    return action
