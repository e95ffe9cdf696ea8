"""The medal scorer: copies ``submission.csv`` out of the sandbox and grades it on the host.

``Score.value`` is a dict of 0/1 flags plus the raw ``score`` and ``human_rank`` (NaN when
absent, which Inspect leaves out of that key's metrics), so each flag's rate is reported
with its standard error.
"""

from __future__ import annotations

import asyncio
import json
import math
import tempfile
from pathlib import Path

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import SandboxEnvironment, sandbox

from sandmle.harness.competition import Competition
from sandmle.harness.grading.bounded import GradingLimits, grade_csv_bounded
from sandmle.harness.grading.report import CompetitionReport, report_human_rank
from sandmle.harness.layout import SUBMISSION_DIR, SUBMISSION_PATH
from sandmle.harness.samples import competition_for
from sandmle.harness.submission_fetch import fetch_submission as fetch_from

FLAGS = (
    "valid_submission",
    "above_median",
    "bronze_medal",
    "silver_medal",
    "gold_medal",
    "any_medal",
)
RATE_KEYS = (*FLAGS, "human_rank")


def score_value(report: CompetitionReport, human_rank: float | None) -> dict[str, float]:
    """The dict an Inspect ``Score`` carries for one graded submission."""
    value: dict[str, float] = {flag: float(getattr(report, flag)) for flag in FLAGS}
    value["score"] = math.nan if report.score is None else float(report.score)
    value["human_rank"] = math.nan if human_rank is None else float(human_rank)
    return value


def report_score(report: CompetitionReport, competition: Competition) -> Score:
    """Turn a report into an Inspect ``Score`` (explanation: the report as JSON)."""
    rank = report_human_rank(report, competition)
    data = report.to_dict()
    if rank is not None:
        data["human_rank"] = rank
    return Score(
        value=score_value(report, rank),
        answer=None if report.score is None else str(report.score),
        explanation=json.dumps(data),
        metadata={
            "competition_id": report.competition_id,
            "gold_threshold": report.gold_threshold,
            "silver_threshold": report.silver_threshold,
            "bronze_threshold": report.bronze_threshold,
            "median_threshold": report.median_threshold,
            "is_lower_better": report.is_lower_better,
            "invalid_reason": report.invalid_reason,
        },
    )


async def fetch_submission(dest: Path, env: SandboxEnvironment | None = None) -> str | None:
    """Copy the sample's submission to ``dest``; returns why not, or None on success."""
    return await fetch_from(env or sandbox(), dest)


async def grade_sandbox_submission(
    competition: Competition,
    env: SandboxEnvironment | None = None,
    limits: GradingLimits | None = None,
) -> CompetitionReport:
    """Copy the sandbox's (default: the current sample's) submission out and grade it.

    Grading runs in a forked child under a time and memory cap (see
    :mod:`sandmle.harness.grading.bounded`); the host temp dir it grades in never shows in
    the report, which the agent may see through ``validate_submission``.
    """
    with tempfile.TemporaryDirectory(prefix="sandmle-grade-") as tmp:
        dest = Path(tmp) / "submission.csv"
        problem = await fetch_submission(dest, env)
        report = await asyncio.to_thread(grade_csv_bounded, dest, competition, limits)
    if problem is not None:
        report = report.model_copy(update={"invalid_reason": problem, "submission_exists": True})
    reason = report.invalid_reason
    if reason is not None:  # the grading core names the file it was given: our temp copy
        reason = reason.replace(str(dest), SUBMISSION_PATH).replace(tmp, SUBMISSION_DIR)
    return report.model_copy(update={"submission_path": SUBMISSION_PATH, "invalid_reason": reason})


@scorer(metrics={key: [mean(), stderr()] for key in RATE_KEYS})
def medal_scorer() -> Scorer:
    """Grade ``/home/submission/submission.csv`` exactly as MLE-bench does, on the host."""

    async def score(state: TaskState, target: Target) -> Score:
        competition = competition_for(state.metadata)
        report = await grade_sandbox_submission(competition)
        return report_score(report, competition)

    return score
