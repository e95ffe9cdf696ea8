"""``sandmle/react``: a ReAct tool loop, the agent MLE-bench's Inspect port runs.

Inspect's ``react()`` agent with the harness tools (bash, python, ``validate_submission``) and
a ``submit`` tool that ends the run once ``submission.csv`` is written. The model is nudged
to go on when it replies without a tool call, and old turns are trimmed when the context
overflows, so long runs end by the sample's limits rather than an error. Each bash/python call
gets the task's seconds per command (``-T command_timeout`` or its profile's) unless
``-S command_timeout`` says otherwise.
"""

from __future__ import annotations

from inspect_ai.agent import Agent, AgentPrompt, AgentSubmit, as_solver
from inspect_ai.agent import react as react_agent
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.solvers import guard
from sandmle.harness.tools import agent_tools
from sandmle.harness.tools import command_timeout as task_command_timeout

INSTRUCTIONS = f"""You are an expert machine-learning engineer solving a Kaggle-style task \
on your own. Work step by step: look at the data, write and run code with the tools, \
check your validation score, and improve your solution while time allows. Write your final \
predictions to `{SUBMISSION_PATH}` and check its format with `validate_submission` before \
you finish. There is no human to ask: make reasonable decisions yourself."""
SUBMIT_DESCRIPTION = (
    f"Call this once {SUBMISSION_PATH} holds your final predictions; it ends your work. "
    "Pass a one-line summary of your solution as the answer."
)
CONTINUE_PROMPT = (
    "Please continue working on the task with your tools. When "
    f"{SUBMISSION_PATH} holds your final predictions, call `submit`."
)


def mle_engineer(timeout_s: int, score_feedback: bool, attempts: int) -> Agent:
    """The ReAct agent, ``timeout_s`` seconds per bash/python call."""
    return react_agent(
        name="mle_engineer",
        description="Solves a machine-learning engineering task in a sandbox.",
        prompt=AgentPrompt(instructions=INSTRUCTIONS),
        tools=agent_tools(timeout_s, score_feedback),
        attempts=attempts,
        # kept: the log (and SFT data built from it) holds the call that ended the run
        submit=AgentSubmit(name="submit", description=SUBMIT_DESCRIPTION, keep_in_messages=True),
        on_continue=CONTINUE_PROMPT,
        truncation="auto",
    )


@solver
def react(
    command_timeout: int | None = None,
    score_feedback: bool = False,
    attempts: int = 1,
) -> Solver:
    """A ReAct agent with bash, python, ``validate_submission`` and ``submit``.

    Args:
        command_timeout: Seconds per bash/python call (None: the task's ``command_timeout``).
        score_feedback: Let ``validate_submission`` reveal the score (training only).
        attempts: Submissions allowed (each after the first follows an incorrect one; the
            medal scorer grades the file, so 1 is the norm).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        # built per sample: the task's clock is known only once the sample is set up
        agent = mle_engineer(task_command_timeout(command_timeout), score_feedback, attempts)
        return await as_solver(agent)(state, generate)

    return guard(solve)
