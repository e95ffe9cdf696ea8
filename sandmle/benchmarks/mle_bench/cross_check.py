"""``-T cross_check=true``: grade each submission with MLE-bench's own grader as well.

Where the ``mlebench`` package is importable, the scorer grades the same file with
``mlebench.grade.grade_csv`` and records, in the score's metadata, every report field on which
the two disagree (scores compared to 1e-9; NaN equals NaN). Our report stays the score.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import tempfile
from pathlib import Path
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from sandmle.harness.grading.report import CompetitionReport
from sandmle.harness.samples import competition_for
from sandmle.harness.scorer import (
    RATE_KEYS,
    fetch_submission,
    grade_sandbox_submission,
    report_score,
)

SCORE_TOLERANCE = 1e-9
COMPARED = (
    "score",
    "valid_submission",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "any_medal",
    "above_median",
    "gold_threshold",
    "silver_threshold",
    "bronze_threshold",
    "median_threshold",
    "is_lower_better",
)


def mlebench_available() -> bool:
    return importlib.util.find_spec("mlebench") is not None


def mlebench_report(submission: Path, competition_id: str, data_dir: Path) -> dict[str, Any]:
    """MLE-bench's report for ``submission``, as a dict (its ``CompetitionReport.to_dict``)."""
    from mlebench.grade import grade_csv
    from mlebench.registry import registry

    competition = registry.set_data_dir(Path(data_dir)).get_competition(competition_id)
    return dict(grade_csv(Path(submission), competition).to_dict())


def _same(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, float | int) and isinstance(theirs, float | int):
        a, b = float(ours), float(theirs)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= SCORE_TOLERANCE
    return ours == theirs


def report_differences(ours: CompetitionReport, theirs: dict[str, Any]) -> dict[str, list[Any]]:
    """``{field: [ours, theirs]}`` for each compared field on which the reports differ."""
    mine = ours.to_dict()
    return {
        key: [mine.get(key), theirs.get(key)]
        for key in COMPARED
        if key in theirs and not _same(mine.get(key), theirs.get(key))
    }


def cross_check(submission: Path, ours: CompetitionReport, data_dir: Path) -> dict[str, Any]:
    """The cross-check record for one graded submission (never raises)."""
    if not mlebench_available():
        return {"skipped": "the mlebench package is not importable"}
    if not submission.is_file():
        return {"skipped": "no submission file to grade"}
    try:
        theirs = mlebench_report(submission, ours.competition_id, data_dir)
    except Exception as exc:  # noqa: BLE001 - MLE-bench crashes on some files (grading spec §1.1.2)
        return {"mlebench_error": f"{type(exc).__name__}: {exc}", "agree": False}
    differences = report_differences(ours, theirs)
    return {
        "agree": not differences,
        "differences": differences,
        "mlebench_score": theirs.get("score"),
    }


@scorer(metrics={key: [mean(), stderr()] for key in RATE_KEYS})
def cross_checked_medal_scorer() -> Scorer:
    """The medal scorer, plus MLE-bench's own verdict in ``metadata["cross_check"]``."""

    async def score(state: TaskState, target: Target) -> Score:
        competition = competition_for(state.metadata)
        report = await grade_sandbox_submission(competition)
        result = report_score(report, competition)
        with tempfile.TemporaryDirectory(prefix="sandmle-cross-check-") as tmp:
            path = Path(tmp) / "submission.csv"
            await fetch_submission(path)
            record = await asyncio.to_thread(cross_check, path, report, competition.root.parent)
        result.metadata = {**(result.metadata or {}), "cross_check": record}
        return result

    return score
