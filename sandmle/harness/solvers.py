"""Harness solvers: the per-sample setup (and toolkit), the crash guard, and the copy-the-sample baseline."""

from __future__ import annotations

import inspect
import logging
from pathlib import Path
from types import TracebackType

from inspect_ai.model import Model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError, sandbox, store

from sandmle.harness.automl_program import toolkit_source
from sandmle.harness.layout import DATA_DIR, SUBMISSION_PATH, TOOLKIT_PATH
from sandmle.harness.samples import COMPETITION_ROOT_KEY, competition_for
from sandmle.harness.toolkit_memo import STORE_MEMO_KEY
from sandmle.harness.tools import STORE_COMMAND_TIMEOUT_KEY, STORE_ROOT_KEY

logger = logging.getLogger(__name__)
AGENT_ERROR_KEY = "sandmle:agent_error"


class BackendError(Exception):
    """The machinery behind the agent failed (the model's generation backend), not the agent.

    ``guard`` lets it through, so Inspect records ``sample.error`` and the sample is not
    scored: an infrastructure failure never reads as the agent's zero.
    """


@solver
def sample_setup(
    toolkit: bool = False, command_timeout: int | None = None, memo_scope: str | None = None
) -> Solver:
    """Record the sample's competition in its store, for tools that need it, and the task's
    seconds per command (``command_timeout``), which every scaffold's runs get unless told
    otherwise (``tools.command_timeout``); with ``toolkit``, put the AutoML program in the
    agent's work dir (``-T toolkit=true``); with ``memo_scope``, share its runs
    (``-T toolkit_memo=true``, ``toolkit_memo.py``)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        store().set(STORE_ROOT_KEY, state.metadata[COMPETITION_ROOT_KEY])
        if command_timeout is not None:
            store().set(STORE_COMMAND_TIMEOUT_KEY, command_timeout)
        if memo_scope is not None:
            store().set(STORE_MEMO_KEY, memo_scope)
        if toolkit:
            await sandbox().write_file(TOOLKIT_PATH, toolkit_source())
        return state

    return solve


_MODEL_FILE = Path(inspect.getfile(Model)).resolve()


def raised_in_model_call(exc: BaseException) -> bool:
    """Whether ``exc`` came out of Inspect's ``Model.generate`` (a provider or policy failure).

    Read from the traceback: providers raise their own exception types (openai, httpx, ...),
    with no common base, but every one of them passes through ``Model.generate``.
    """
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name in ("generate", "_generate") and Path(code.co_filename) == _MODEL_FILE:
            return True
        tb = tb.tb_next
    return False


@solver
def guard(inner: Solver) -> Solver:
    """Run ``inner``; if it crashes, end the sample (it is still scored) instead of the eval.

    A failed model call is not the agent's crash: it becomes a ``BackendError``, so Inspect
    records a sample error instead of scoring the agent's unfinished work (a provider's HTTP 400
    would otherwise read as the agent's 0).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        try:
            return await inner(state, generate)
        except LimitExceededError:
            raise  # Inspect records the limit and still scores the sample
        except BackendError:
            raise  # not the agent's fault: the sample errors instead of scoring 0
        except Exception as exc:  # noqa: BLE001 - an agent's crash must not end the eval
            if raised_in_model_call(exc):
                raise BackendError(f"model call failed: {type(exc).__name__}: {exc}") from exc
            logger.warning("agent crashed on %s: %s", state.sample_id, exc)
            store().set(AGENT_ERROR_KEY, f"{type(exc).__name__}: {exc}")
            state.completed = True
            return state

    return solve


@solver
def copy_sample_submission() -> Solver:
    """Hand in the competition's sample submission (MLE-bench's floor); no model calls."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        competition = competition_for(state.metadata)
        sample = competition.sample_submission_path
        if not sample.is_relative_to(competition.public_dir):
            return state  # the sample submission is not public: nothing to copy
        source = f"{DATA_DIR}/{sample.relative_to(competition.public_dir).as_posix()}"
        await sandbox().exec(["cp", source, SUBMISSION_PATH])
        state.completed = True
        return state

    return solve
