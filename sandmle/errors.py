"""Errors that the CLI prints as one line (no traceback).

Anything else that escapes to the CLI is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class SandmleError(Exception):
    """A user-facing error: bad input, a broken competition folder, a missing tool."""


class CompetitionError(SandmleError):
    """A competition folder or its ``competition.yaml`` is broken."""


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
