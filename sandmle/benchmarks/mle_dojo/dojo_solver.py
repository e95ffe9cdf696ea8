"""``sandmle/dojo``: MLE-Dojo's interaction loop as an optional scaffold.

Each turn the model takes one of Dojo's actions (``request_info``, ``validate_code``,
``execute_code``; see :mod:`.dojo_tools`) and sees the environment's JSON feedback, as in
``mledojo/gym/env.py``. The loop ends when the model answers without an action or after
``max_steps``; the task's scorer then grades the last submission. Like every sandmle scaffold it
is wrapped in :func:`sandmle.harness.solvers.guard`, so a crash ends the sample, not the eval.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, execute_tools, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandmle.benchmarks.mle_dojo.dojo_tools import dojo_tools
from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.solvers import guard
from sandmle.harness.tools import DEFAULT_COMMAND_TIMEOUT

DEFAULT_MAX_STEPS = 30
DOJO_PROMPT = """You are an agent in MLE-Dojo's environment for a Kaggle-style competition.
Act by calling exactly one tool per turn:
- request_info(info_type): overview, sample_submission, data_structure, data_path, output_path, \
name, metadata or all.
- validate_code(code): check a Python program's syntax and run it; its submission is discarded.
- execute_code(code): run a Python program that writes `{submission}`; the file is then graded\
{feedback}.
The last submission written by execute_code is your final answer. Reply without a tool call \
when you are done. You have at most {steps} actions."""


def dojo_prompt(max_steps: int, score_feedback: bool) -> str:
    feedback = " and you see its raw score and leaderboard position score" if score_feedback else ""
    return DOJO_PROMPT.format(submission=SUBMISSION_PATH, feedback=feedback, steps=max_steps)


@solver
def dojo_loop(
    max_steps: int = DEFAULT_MAX_STEPS,
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT,
    score_feedback: bool = True,
) -> Solver:
    """The unguarded loop; use :func:`dojo`."""
    tools = dojo_tools(command_timeout, score_feedback)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.insert(0, ChatMessageSystem(content=dojo_prompt(max_steps, score_feedback)))
        model = get_model()
        for _ in range(max_steps):
            state.output = await model.generate(state.messages, tools)
            state.messages.append(state.output.message)
            if not state.output.message.tool_calls:
                break
            result = await execute_tools(state.messages, tools)
            state.messages.extend(result.messages)
        state.completed = True
        return state

    return solve


@solver
def dojo(
    max_steps: int = DEFAULT_MAX_STEPS,
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT,
    score_feedback: bool = True,
) -> Solver:
    """MLE-Dojo's action loop (request_info, validate_code, execute_code), crash-guarded.

    Args:
        max_steps: Actions before the loop ends.
        command_timeout: Seconds per code run.
        score_feedback: Show the raw and position scores after execute_code, as MLE-Dojo does
            (it reveals test-set scores; set false to report validity only).
    """
    return guard(dojo_loop(max_steps, command_timeout, score_feedback))
