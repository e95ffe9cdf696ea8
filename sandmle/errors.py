"""Errors that the CLI prints as one line (no traceback).

Anything else that escapes to the CLI is a bug and keeps its traceback. Under ``inspect eval``
a task's ``SandmleError`` becomes Inspect's ``PrerequisiteError`` (``prerequisite_errors``),
which Inspect prints as its message alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

if TYPE_CHECKING:
    from pydantic import ValidationError

P = ParamSpec("P")
R = TypeVar("R")


class SandmleError(Exception):
    """A user-facing error: bad input, a broken competition folder, a missing tool."""


class CompetitionError(SandmleError):
    """A competition folder or its ``competition.yaml`` is broken."""


class SandmleWarning(UserWarning):
    """Something left out that a user should hear of; the CLI prints it as one ``note:`` line."""


class InvalidSubmission(Exception):  # noqa: N818 - the name MLE-bench users know
    """A submission breaks a grading rule; the message is the one-line reason."""


def validation_message(exc: ValidationError, where: str = "") -> str:
    """The first error of a pydantic validation as ``field.path: message``: the one format every
    user file (competition, pack, run file, profile, study) reports a bad field in.

    ``where`` stands for the field path when the error is about the whole document.
    """
    err = exc.errors()[0]
    path = ".".join(str(part) for part in err["loc"]) or where
    message = str(err["msg"]).removeprefix("Value error, ")
    return f"{path}: {message}" if path else message


def prerequisite_errors(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` with its ``SandmleError`` raised as one that is also Inspect's
    ``PrerequisiteError``.

    Put it under ``@task``: ``inspect eval sandmle/synthetic -T pack=/missing`` then prints one
    line, not the 250 lines of a traceback through Inspect's task group; a caller that catches
    ``SandmleError`` (sandmle's own CLI, the study runner) still catches it.
    """
    # Inspect exports no public name for it; its CLI's exception hook matches this class.
    from inspect_ai._util.error import PrerequisiteError

    class TaskPrerequisiteError(SandmleError, PrerequisiteError):
        def __init__(self, message: str) -> None:
            SandmleError.__init__(self, message)
            self.message = message

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except SandmleError as exc:
            raise TaskPrerequisiteError(str(exc)) from None

    return wrapper
