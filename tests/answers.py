"""Test-only perfect entrant: the task's hidden answers, read on the host, handed in.

Only tests may do this (the package never writes answers into a sandbox); the grading
tests need a known-perfect submission to check medals, ranks and reports against."""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.samples import competition_for


async def hand_in_answers(state: TaskState) -> None:
    """Write the sample's hidden answers as its submission."""
    answers = competition_for(state.metadata).answers_path.read_bytes()
    await sandbox().write_file(SUBMISSION_PATH, answers)


@solver
def copy_answers() -> Solver:
    """A perfect entrant: hands in the answers and completes."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await hand_in_answers(state)
        state.completed = True
        return state

    return solve
