"""``sandmle/dojo``: MLE-Dojo's interaction loop on Inspect's ``react()`` agent.

Each turn the model takes one of MLE-Dojo's five actions (``request_info``, ``validate_code``,
``execute_code``, ``get_history``, ``reset``; see :mod:`.tools`) and sees the environment's
JSON feedback, as in ``mledojo/gym/env.py``. A reply without an action gets a continue prompt
(the loop does not end there); old turns are trimmed when the context overflows; the loop ends
when the model calls ``submit``, after ``max_steps`` actions, or at the sample's limits. The
task's scorer then grades the last submission. Test-set scores stay hidden unless
``score_feedback`` asks for them (MLE-Dojo shows them; MLE-bench-style evaluation must not).
"""

from __future__ import annotations

from inspect_ai.agent import AgentContinue, AgentPrompt, AgentState, AgentSubmit, as_solver
from inspect_ai.agent import react as react_agent
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.solver import Solver, solver

from sandmle.benchmarks.mle_dojo.tools import dojo_tools
from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.solvers import guard
from sandmle.harness.tools import DEFAULT_COMMAND_TIMEOUT

DEFAULT_MAX_STEPS = 30
DOJO_PROMPT = """You are an agent in MLE-Dojo's environment for a Kaggle-style competition.
Act by calling one tool per turn:
- request_info(info_type): overview, sample_submission, data_structure, data_path, output_path, \
name, metadata or all.
- validate_code(code): check a Python program's syntax and run it; its submission is discarded.
- execute_code(code): run a Python program that writes `{submission}`; the file is then checked\
{feedback}.
- get_history(): the actions you took so far and their results.
- reset(): clear that history.
The last submission written by execute_code is your final answer. Call `submit` when you are \
done. You have at most {steps} actions."""
CONTINUE_PROMPT = (
    "Please continue: take your next action with one of the tools, or call `submit` when the "
    "last submission written by execute_code is your final answer."
)


def dojo_prompt(max_steps: int, score_feedback: bool) -> str:
    feedback = (
        " and you see its raw test score and leaderboard position score"
        if score_feedback
        else " for validity (no score is shown)"
    )
    return DOJO_PROMPT.format(submission=SUBMISSION_PATH, feedback=feedback, steps=max_steps)


def actions_taken(state: AgentState) -> int:
    return sum(
        len(m.tool_calls or []) for m in state.messages if isinstance(m, ChatMessageAssistant)
    )


def continue_until(max_steps: int) -> AgentContinue:
    """Continue prompt after a reply without an action; stop after ``max_steps`` actions."""

    async def on_continue(state: AgentState) -> bool | str:
        if actions_taken(state) >= max_steps:
            return False
        return True if state.output.message.tool_calls else CONTINUE_PROMPT

    return on_continue


@solver
def dojo(
    max_steps: int = DEFAULT_MAX_STEPS,
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT,
    score_feedback: bool = False,
) -> Solver:
    """MLE-Dojo's action loop (five actions) on Inspect's react agent, crash-guarded.

    Args:
        max_steps: Actions before the loop ends.
        command_timeout: Seconds per code run.
        score_feedback: Show the raw and position test scores after execute_code, as MLE-Dojo
            does (it reveals test-set scores; off by default).
    """
    agent = react_agent(
        name="mle_dojo",
        description="Solves a competition through MLE-Dojo's actions.",
        prompt=AgentPrompt(instructions=dojo_prompt(max_steps, score_feedback)),
        tools=dojo_tools(command_timeout, score_feedback),
        submit=AgentSubmit(
            name="submit",
            description="End your work; the last submission execute_code wrote is graded.",
        ),
        on_continue=continue_until(max_steps),
        truncation="auto",
    )
    return guard(as_solver(agent))
