"""``sandmle/dojo``: MLE-Dojo's interaction loop.

``variant="mle-dojo"`` (the default) is MLE-Dojo's own agent loop (MLE-Dojo/MLE-Dojo @ 667a8fd,
:mod:`.solver_json`): actions written as JSON text, 3 fixes for a reply that does not parse and
then the end, 10 actions (``config.yaml:18`` ``max_steps``), the actions and seconds left after
every action (``mledojo/agent/mleagent/prompt.py:75-76, 87-88``), ``validate_code`` deletes any
submission, the best-scoring ``execute_code`` submission is graded (``mledojo/gym/env.py:
384-388``), a reward per ``execute_code`` (its position score, kept host side), temperature
0.0 and top-p 1.0 (``mledojo/agent/mleagent/config.yaml:13-14``).

``variant="mle-dojo-tools"`` keeps MLE-Dojo's rules but the actions are tool calls on Inspect's
``react()`` agent, with all five of the environment's actions (``request_info``,
``validate_code``, ``execute_code``, ``get_history``, ``reset``; see :mod:`.tools`), a continue
prompt after a reply without an action, old turns trimmed when the context overflows.
``variant="sandmle"`` is the earlier tool loop: 30 actions, the last submission graded, an
earlier one kept on ``validate_code``, the budget stated once, the model's own sampling.
Test-set scores stay hidden unless ``score_feedback`` asks for them (MLE-Dojo shows them;
MLE-bench-style evaluation must not).
"""

from __future__ import annotations

from typing import Literal

from inspect_ai.agent import (
    Agent,
    AgentContinue,
    AgentPrompt,
    AgentState,
    AgentSubmit,
    agent,
    as_solver,
)
from inspect_ai.agent import react as react_agent
from inspect_ai.model import ChatMessageAssistant, GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from sandmle.benchmarks.mle_dojo.solver_json import json_loop
from sandmle.benchmarks.mle_dojo.tools import Budget, dojo_tools, hand_in_best
from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.solvers import guard

DEFAULT_MAX_STEPS = 30
"""The ``sandmle`` variant's action budget."""
MLE_DOJO_MAX_STEPS = 10
"""MLE-Dojo's ``env.max_steps`` (``config.yaml:18``)."""
MLE_DOJO_SAMPLING = GenerateConfig(temperature=0.0, top_p=1.0)
Variant = Literal["mle-dojo", "mle-dojo-tools", "sandmle"]
VARIANTS = ("mle-dojo", "mle-dojo-tools", "sandmle")
DOJO_PROMPT = """You are an agent in MLE-Dojo's environment for a Kaggle-style competition.
Act by calling one tool per turn:
- request_info(info_type): overview, sample_submission, data_structure, data_path, output_path, \
name, metadata or all.
- validate_code(code): check a Python program's syntax and run it; its submission is discarded.
- execute_code(code): run a Python program that writes `{submission}`; the file is then checked\
{feedback}.
- get_history(): the actions you took so far and their results.
- reset(): clear that history.
{final} Call `submit` when you are done. You have at most {steps} actions{budget}."""
LAST_FINAL = "The last submission written by execute_code is your final answer."
BEST_FINAL = (
    "The best-scoring submission written by execute_code is your final answer "
    "(validate_code deletes any submission file)."
)
CONTINUE_PROMPT = (
    "Please continue: take your next action with one of the tools, or call `submit` when the "
    "last submission written by execute_code is your final answer."
)


def dojo_prompt(max_steps: int, score_feedback: bool, variant: Variant = "sandmle") -> str:
    feedback = (
        " and you see its raw test score and leaderboard position score"
        if score_feedback
        else " for validity (no score is shown)"
    )
    mle_dojo = variant != "sandmle"
    return DOJO_PROMPT.format(
        submission=SUBMISSION_PATH,
        feedback=feedback,
        steps=max_steps,
        final=BEST_FINAL if mle_dojo else LAST_FINAL,
        budget="; each result says how many actions and seconds are left" if mle_dojo else "",
    )


@agent
def sampled_at(config: GenerateConfig) -> Agent:
    """The sample's model, called with ``config`` (MLE-Dojo's temperature 0.0)."""

    async def execute(state: AgentState, tools: list[Tool]) -> AgentState:
        state.output = await get_model().generate(state.messages, tools, config=config)
        state.messages.append(state.output.message)
        return state

    return execute


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
    max_steps: int | None = None,
    command_timeout: int | None = None,
    score_feedback: bool = False,
    variant: Variant = "mle-dojo",
) -> Solver:
    """MLE-Dojo's agent loop (JSON-text actions; or tool calls on Inspect's react agent),
    crash-guarded.

    Args:
        max_steps: Actions before the loop ends (mle-dojo 10, sandmle 30).
        command_timeout: Seconds per code run (None: the task's ``command_timeout``).
        score_feedback: Show the raw and position test scores after execute_code, as MLE-Dojo
            does (it reveals test-set scores; off by default).
        variant: ``mle-dojo`` (MLE-Dojo's own loop: JSON-text actions, see the module doc),
            ``mle-dojo-tools`` (its rules with tool calls) or ``sandmle`` (the earlier tool
            loop: last submission graded, budget stated once).
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown dojo variant {variant!r}: use one of {', '.join(VARIANTS)}")
    mle_dojo = variant != "sandmle"
    steps = max_steps or (MLE_DOJO_MAX_STEPS if mle_dojo else DEFAULT_MAX_STEPS)
    if variant == "mle-dojo":
        return guard(json_solver(steps, command_timeout, score_feedback))
    budget = Budget(steps) if mle_dojo else None
    loop = as_solver(
        react_agent(
            name="mle_dojo",
            description="Solves a competition through MLE-Dojo's actions.",
            prompt=AgentPrompt(instructions=dojo_prompt(steps, score_feedback, variant)),
            tools=dojo_tools(command_timeout, score_feedback, budget),
            model=sampled_at(MLE_DOJO_SAMPLING) if mle_dojo else None,
            submit=AgentSubmit(
                name="submit",
                description="End your work; "
                + ("the best executed submission is graded." if mle_dojo else LAST_FINAL),
            ),
            on_continue=continue_until(steps),
            truncation="auto",
        )
    )

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await loop(state, generate)
        if mle_dojo:
            await hand_in_best()  # already in place after every action; once more at the end
        return state

    return guard(solve)


def json_solver(steps: int, command_timeout: int | None, score_feedback: bool) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        # every action leaves the best executed submission in place (tools.hand_in_best)
        return await json_loop(
            state, steps, command_timeout, score_feedback, MLE_DOJO_SAMPLING, SUBMISSION_PATH
        )

    return solve
