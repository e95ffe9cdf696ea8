"""The grading core: one submission file in, MLE-bench's ``CompetitionReport`` out.

Every path of sandmle grades through here: the CLI, the Inspect scorer, training rewards
and the leaderboard. It runs on the host, never inside an agent's sandbox.
"""

from __future__ import annotations

import csv
import logging
import math
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import pandas as pd
from pydantic import BaseModel

from sandmle.errors import CompetitionError, InvalidSubmission
from sandmle.harness.competition import Competition, metric_direction
from sandmle.harness.grading.medals import (
    MedalThresholds,
    human_rank,
    medal_flags,
    read_leaderboard,
    thresholds_from_leaderboard,
)
from sandmle.harness.grading.reading import DEFAULT_MAX_BYTES, load_submission, read_csv_reference
from sandmle.harness.grading.registry import get_grader

logger = logging.getLogger(__name__)

SCORE_DECIMALS = 5
MIN_COLUMN_LIMIT = 1000
"""A submission may carry this many columns whatever its format (graders ignore extras)."""
GRADER_ERROR = "grader error"
"""How every reason that is the grader's failure, not the submission's, begins."""


class CompetitionReport(BaseModel):
    """MLE-bench's report, field for field, plus ``invalid_reason``."""

    competition_id: str
    score: float | None
    """The metric, rounded to 5 decimals; None when invalid, NaN when the metric is undefined."""
    gold_threshold: float
    silver_threshold: float
    bronze_threshold: float
    median_threshold: float
    any_medal: bool
    gold_medal: bool
    silver_medal: bool
    bronze_medal: bool
    above_median: bool
    submission_exists: bool
    valid_submission: bool
    is_lower_better: bool
    created_at: str
    submission_path: str
    invalid_reason: str | None = None
    """Why the submission is not valid, in one line; None when valid."""

    def to_dict(self) -> dict:
        return self.model_dump()


def competition_thresholds(competition: Competition) -> MedalThresholds:
    """The competition's milestones, from explicit thresholds or its leaderboard."""
    config = competition.config
    if config.thresholds is not None:
        t = config.thresholds
        return MedalThresholds(t.gold, t.silver, t.bronze, t.median, metric_direction(config), 0)
    path = competition.resolve(config.leaderboard or "")
    return _leaderboard_thresholds(path, path.stat().st_mtime_ns, config.is_lower_better)


@lru_cache(maxsize=256)
def _leaderboard_thresholds(
    path: Path, mtime_ns: int, is_lower_better: bool | None
) -> MedalThresholds:
    return thresholds_from_leaderboard(read_leaderboard(path), is_lower_better)


def load_answers(competition: Competition) -> pd.DataFrame:
    """The answers table, cached by path, size and modification time."""
    path = competition.answers_path
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise CompetitionError(f"{competition.id}: answers file {path} is missing") from None
    return _answers_cached(path, stat.st_size, stat.st_mtime_ns).copy()


@lru_cache(maxsize=64)
def _answers_cached(path: Path, size: int, mtime_ns: int) -> pd.DataFrame:
    return read_csv_reference(path)


def grade_csv(
    submission_path: str | Path,
    competition: Competition,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> CompetitionReport:
    """Grade a submission file; bad submissions are reported invalid, never raised."""
    limit = column_limit(competition)
    loaded = load_submission(submission_path, max_bytes=max_bytes, max_columns=limit)
    if loaded.frame is None:
        return _report(competition, submission_path, None, loaded.exists, loaded.reason)
    return grade_frame(loaded.frame, competition, submission_path=submission_path)


def column_limit(competition: Competition) -> int:
    """The most columns a submission's header may have: 4x the sample's, at least 1000."""
    path = competition.sample_submission_path
    try:
        stat = path.stat()
    except OSError:
        return MIN_COLUMN_LIMIT
    return max(MIN_COLUMN_LIMIT, 4 * _header_width(path, stat.st_mtime_ns))


@lru_cache(maxsize=256)
def _header_width(path: Path, mtime_ns: int) -> int:
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        return len(next(csv.reader(handle), []))


def is_grader_error(report: CompetitionReport) -> bool:
    """True when the report is invalid because grading failed (a crash, a limit), not the file."""
    return (report.invalid_reason or "").startswith(GRADER_ERROR)


def grade_frame(
    submission: pd.DataFrame,
    competition: Competition,
    *,
    submission_path: str | Path = "<in memory>",
) -> CompetitionReport:
    """Grade an in-memory submission table (parsed as :func:`read_csv_reference` does)."""
    answers = load_answers(competition)
    grade = get_grader(competition.config.grader.name)
    try:
        score = grade(submission.copy(), answers, competition.config)
    except InvalidSubmission as exc:
        return _report(competition, submission_path, None, True, str(exc) or "invalid submission")
    except (CompetitionError, MemoryError):
        raise  # a broken folder is the user's to fix; bounded grading reports memory
    except Exception as exc:  # a grader bug must not pass for the agent's mistake
        logger.exception("grader %s crashed on %s", competition.config.grader.name, submission_path)
        reason = (
            f"{GRADER_ERROR} (a bug in the grader, not the submission): {type(exc).__name__}: {exc}"
        )
        return _report(competition, submission_path, None, True, reason)
    return _report(competition, submission_path, round_score(score), True, None)


def invalid_report(
    competition: Competition, submission_path: str | Path, reason: str, exists: bool = True
) -> CompetitionReport:
    """A report of a submission that could not be graded, with its one-line reason."""
    return _report(competition, submission_path, None, exists, reason)


def round_score(score: float) -> float:
    """Round as MLE-bench does: ``round(x, 5)`` keeps numpy's rule for numpy floats."""
    return round(score, SCORE_DECIMALS)


def _report(
    competition: Competition,
    submission_path: str | Path,
    score: float | None,
    exists: bool,
    reason: str | None,
) -> CompetitionReport:
    thresholds = competition_thresholds(competition)
    flags = medal_flags(score, thresholds, thresholds.is_lower_better)
    return CompetitionReport(
        competition_id=competition.id,
        score=None if score is None else float(score),
        gold_threshold=thresholds.gold,
        silver_threshold=thresholds.silver,
        bronze_threshold=thresholds.bronze,
        median_threshold=thresholds.median,
        submission_exists=exists,
        valid_submission=score is not None,
        is_lower_better=thresholds.is_lower_better,
        created_at=datetime.now().isoformat(),
        submission_path=str(submission_path),
        invalid_reason=reason,
        **flags,
    )


def report_human_rank(report: CompetitionReport, competition: Competition) -> float | None:
    """MLE-Dojo's HumanRank of a report's score, where the competition has human boards."""
    boards = competition.config.human_leaderboards
    if boards is None:
        return None
    if report.score is None or math.isnan(report.score):
        return 0.0
    private = read_leaderboard(competition.resolve(boards.private))
    public = read_leaderboard(competition.resolve(boards.public)) if boards.public else None
    return human_rank(report.score, private, public, is_lower_better=report.is_lower_better)
