"""Errors that the CLI prints as one line (no traceback).

Anything else that escapes to the CLI is a bug and keeps its traceback.
"""


class SandmleError(Exception):
    """A user-facing error: bad input, a broken competition folder, a missing tool."""


class CompetitionError(SandmleError):
    """A competition folder or its ``competition.yaml`` is broken."""


class InvalidSubmission(Exception):  # noqa: N818 - the name MLE-bench users know
    """A submission breaks a grading rule; the message is the one-line reason."""
