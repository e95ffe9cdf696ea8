"""MLE-bench-lite: the 22 competitions, their exact graders and medal thresholds.

Importing ``graders`` registers one grader per competition as ``mle-bench-lite/<id>``.
"""

from sandmle.benchmarks.mle_bench.competitions import (
    BENCHMARK,
    RULES_UNAVAILABLE,
    LiteCompetition,
    competition_config,
    competition_source,
    get_competition,
    grader_name,
    is_prepared,
    lite_competitions,
    split_ids,
)
from sandmle.benchmarks.mle_bench.thresholds import (
    MLEBENCH_DIR_ENV,
    ThresholdEntry,
    lite_thresholds,
    mlebench_leaderboard,
    packaged_thresholds,
)

__all__ = [
    "BENCHMARK",
    "MLEBENCH_DIR_ENV",
    "RULES_UNAVAILABLE",
    "LiteCompetition",
    "ThresholdEntry",
    "competition_config",
    "competition_source",
    "get_competition",
    "grader_name",
    "is_prepared",
    "lite_competitions",
    "lite_thresholds",
    "mlebench_leaderboard",
    "packaged_thresholds",
    "split_ids",
]
