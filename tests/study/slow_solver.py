"""A test solver for the study tests: hands in the sample submission slowly, counting runs."""

import asyncio
import os

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox


@solver
def slow_copy(delay: float = 0.6) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        with open(os.environ["SANDMLE_TEST_COUNTER"], "a") as fh:
            fh.write(f"{state.model} {state.sample_id}\n")
        await asyncio.sleep(delay)
        await sandbox().exec(
            ["cp", "/home/data/sample_submission.csv", "/home/submission/submission.csv"]
        )
        return state

    return solve
