"""The agent's tools: Inspect's ``bash`` and ``python``, and ``validate_submission``.

``validate_submission`` checks the file's format on the host with the grading core and, like
MLE-bench's grading server, reveals no score. SandMLE-style score feedback (the score and the
milestone reached) is an option for training, off by default in evaluation.
"""

from __future__ import annotations

import math
from dataclasses import replace

from inspect_ai.tool import Tool, bash, python, tool
from inspect_ai.util import store

from sandmle.harness.grading.bounded import GradingLimits
from sandmle.harness.grading.report import CompetitionReport, is_grader_error
from sandmle.harness.samples import COMPETITION_ROOT_KEY, competition_for
from sandmle.harness.scorer import grade_sandbox_submission

DEFAULT_COMMAND_TIMEOUT = 600
VALIDATE_TIMEOUT_S = 300.0
"""A format check the agent asks for is cut off sooner than the final grading."""
STORE_ROOT_KEY = "sandmle:competition_root"


def milestone(report: CompetitionReport) -> str:
    """The highest milestone a report reaches, in words."""
    for flag, name in (
        ("gold_medal", "gold"),
        ("silver_medal", "silver"),
        ("bronze_medal", "bronze"),
        ("above_median", "above median"),
    ):
        if getattr(report, flag):
            return name
    return "below median"


def feedback_text(report: CompetitionReport, score_feedback: bool) -> str:
    if is_grader_error(report):
        return f"The check could not finish: {report.invalid_reason}"
    if not report.valid_submission:
        return f"Invalid submission: {report.invalid_reason}"
    if not score_feedback:
        return "Submission is valid: its format matches what the grader expects."
    score = "NaN" if report.score is None or math.isnan(report.score) else f"{report.score:.5f}"
    return f"Submission is valid. Score: {score} ({milestone(report)})."


@tool
def validate_submission(score_feedback: bool = False) -> Tool:
    """Check submission.csv's format (columns, ids, rows, values) without revealing a score.

    Args:
        score_feedback: Also tell the score and the milestone reached (training only).
    """

    async def execute() -> str:
        """Check /home/submission/submission.csv against the competition's submission format.

        Returns:
            Whether the file is a valid submission and, if not, why.
        """
        root = store().get(STORE_ROOT_KEY)
        competition = competition_for({COMPETITION_ROOT_KEY: root})
        limits = GradingLimits.from_env()
        limits = replace(limits, timeout_s=min(limits.timeout_s, VALIDATE_TIMEOUT_S))
        report = await grade_sandbox_submission(competition, limits=limits)
        return feedback_text(report, score_feedback)

    return execute


def agent_tools(
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT, score_feedback: bool = False
) -> list[Tool]:
    """The standard tool set every sandmle scaffold gives its agent."""
    return [
        bash(timeout=command_timeout),
        python(timeout=command_timeout),
        validate_submission(score_feedback=score_feedback),
    ]
