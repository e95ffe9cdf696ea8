"""The agent's tools: Inspect's ``bash`` and ``python``, and ``validate_submission``; and the
seconds per command every scaffold's runs get (``command_timeout``).

``validate_submission`` checks the file's format on the host with the grading core and, like
MLE-bench's grading server, reveals no score. SandMLE-style score feedback (the score and the
milestone reached) is an option for training, off by default in evaluation.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from pathlib import Path

from inspect_ai.tool import Tool, bash, python, tool
from inspect_ai.util import store

from sandmle.harness.grading.bounded import GradingLimits
from sandmle.harness.grading.report import CompetitionReport, is_grader_error
from sandmle.harness.samples import COMPETITION_ROOT_KEY, competition_for
from sandmle.harness.sandbox.limits import DEFAULT_COMMAND_TIMEOUT_S
from sandmle.harness.scorer import grade_sandbox_submission
from sandmle.harness.toolkit_memo import STORE_MEMO_KEY, counting, shared_bash

logger = logging.getLogger(__name__)

VALIDATE_TIMEOUT_S = 300.0
"""A format check the agent asks for is cut off sooner than the final grading."""
STORE_ROOT_KEY = "sandmle:competition_root"
STORE_COMMAND_TIMEOUT_KEY = "sandmle:command_timeout"
"""The task's seconds per command (``TaskLimits.command_timeout``), set by ``sample_setup``."""


def command_timeout(explicit: int | None = None) -> int:
    """Seconds per agent command in this sample: ``explicit`` (a solver's ``-S`` value) when
    given, else the task's (``-T command_timeout`` or its profile's, the number the task
    states), else the default, said in the log (a task sandmle did not build states none).

    Call it at solve time: the task's value is in the sample's store.
    """
    if explicit is not None:
        return explicit
    stated = store().get(STORE_COMMAND_TIMEOUT_KEY)
    if stated is not None:
        return int(stated)
    logger.warning(
        "the task states no command timeout (not a sandmle task): %d s per command",
        DEFAULT_COMMAND_TIMEOUT_S,
    )
    return DEFAULT_COMMAND_TIMEOUT_S


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


def agent_tools(timeout_s: int, score_feedback: bool = False) -> list[Tool]:
    """The standard tool set every sandmle scaffold gives its agent, ``timeout_s`` seconds per
    bash/python call (``command_timeout()`` at solve time)."""
    tools = [bash(timeout=timeout_s), python(timeout=timeout_s)]
    if store().get(STORE_MEMO_KEY) is not None:  # -T toolkit_memo=true: share toolkit runs
        tools = [shared_bash(tools[0], _public_dir), counting(tools[1])]
    return [*tools, validate_submission(score_feedback=score_feedback)]


def _public_dir() -> Path:
    return competition_for({COMPETITION_ROOT_KEY: store().get(STORE_ROOT_KEY)}).public_dir
