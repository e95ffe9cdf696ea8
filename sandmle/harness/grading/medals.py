"""Medal thresholds, medal flags and HumanRank from a Kaggle leaderboard.

The medal rule is MLE-bench's (grading spec §1.3–1.6): rows of the leaderboard file are used in file
order (best first, never sorted), the direction comes from the first and last scores, and each
medal threshold is the score at a 1-based row chosen by Kaggle's team-count bands.

HumanRank is MLE-Dojo's leaderboard position score (see :func:`position_score`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from sandmle.errors import SandmleError

Scores = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class MedalThresholds:
    """Medal and median thresholds of one leaderboard, in the metric's own units."""

    gold: float
    silver: float
    bronze: float
    median: float
    is_lower_better: bool
    teams: int

    def to_dict(self) -> dict[str, float | bool | int]:
        """The report fields, named as in MLE-bench's ``CompetitionReport``."""
        return {
            "gold_threshold": self.gold,
            "silver_threshold": self.silver,
            "bronze_threshold": self.bronze,
            "median_threshold": self.median,
            "is_lower_better": self.is_lower_better,
            "teams": self.teams,
        }


class ThresholdValues(Protocol):
    """Anything with the four thresholds (``MedalThresholds``, ``competition.Thresholds``)."""

    @property
    def gold(self) -> float: ...
    @property
    def silver(self) -> float: ...
    @property
    def bronze(self) -> float: ...
    @property
    def median(self) -> float: ...


def read_leaderboard(path: str | Path) -> np.ndarray:
    """Read the ``score`` column of a leaderboard CSV, rows in file order.

    Pandas defaults, as MLE-bench reads it; rows with a missing score stay (as NaN) because
    they still count as teams. Any other column is ignored.
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path)
    except FileNotFoundError:
        raise SandmleError(f"leaderboard not found: {path}") from None
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError, OSError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise SandmleError(f"leaderboard {path} is not a readable CSV: {reason}") from None
    if "score" not in frame.columns:
        raise SandmleError(
            f"leaderboard {path} has no 'score' column (columns: {list(frame.columns)})"
        )
    if frame.empty:
        raise SandmleError(f"leaderboard {path} has no rows")
    try:
        return frame["score"].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise SandmleError(f"leaderboard {path} has non-numeric values in 'score'") from None


def is_lower_better_from_leaderboard(scores: Scores) -> bool:
    """Lower is better iff the first score is strictly less than the last (NaN → higher)."""
    values = np.asarray(scores, dtype=float)
    if values.size == 0:
        raise SandmleError("cannot tell the direction of an empty leaderboard")
    # A comparison with NaN is False, so a NaN at either end means "higher is better".
    return bool(values[0] < values[-1])


def medal_rows(teams: int) -> tuple[int, int, int]:
    """The 1-based (gold, silver, bronze) rows for a leaderboard of ``teams`` rows.

    Kaggle's progression system; ``int()`` truncates the floating product, as MLE-bench does.
    """
    if teams < 1:
        raise SandmleError(f"a leaderboard needs at least one team, got {teams}")
    if teams < 100:
        return max(1, int(teams * 0.1)), max(1, int(teams * 0.2)), max(1, int(teams * 0.4))
    if teams < 250:
        return 10, max(1, int(teams * 0.2)), max(1, int(teams * 0.4))
    if teams < 1000:
        return 10 + int(teams * 0.002), 50, 100
    return 10 + int(teams * 0.002), max(1, int(teams * 0.05)), max(1, int(teams * 0.1))


def thresholds_from_leaderboard(
    scores: Scores, is_lower_better: bool | None = None
) -> MedalThresholds:
    """Medal thresholds: the scores at the rows of :func:`medal_rows`, file order, no sorting.

    ``is_lower_better`` defaults to :func:`is_lower_better_from_leaderboard`. The median is the
    pandas median of every score (NaN skipped).
    """
    values = np.asarray(scores, dtype=float)
    if values.size == 0:
        raise SandmleError("cannot compute medal thresholds from an empty leaderboard")
    if is_lower_better is None:
        is_lower_better = is_lower_better_from_leaderboard(values)
    gold, silver, bronze = (float(values[row - 1]) for row in medal_rows(values.size))
    return MedalThresholds(
        gold=gold,
        silver=silver,
        bronze=bronze,
        median=float(pd.Series(values).median()),
        is_lower_better=is_lower_better,
        teams=int(values.size),
    )


def _reaches(score: float, threshold: float, is_lower_better: bool) -> bool:
    return score <= threshold if is_lower_better else score >= threshold


def medal_flags(
    score: float | None, thresholds: ThresholdValues, is_lower_better: bool
) -> dict[str, bool]:
    """Medal and median flags for an already rounded score.

    Medals are inclusive (a score equal to a threshold earns it) and exclusive of each other
    (the best tier wins); above-median is strict. A missing or NaN score gets no flag.
    """
    flags = dict.fromkeys(
        ("gold_medal", "silver_medal", "bronze_medal", "any_medal", "above_median"), False
    )
    if score is None or math.isnan(score):
        return flags
    gold = _reaches(score, thresholds.gold, is_lower_better)
    silver = not gold and _reaches(score, thresholds.silver, is_lower_better)
    bronze = not gold and not silver and _reaches(score, thresholds.bronze, is_lower_better)
    median = thresholds.median
    above = score < median if is_lower_better else score > median
    flags.update(
        gold_medal=gold,
        silver_medal=silver,
        bronze_medal=bronze,
        any_medal=gold or silver or bronze,
        above_median=bool(above),
    )
    return flags


def position_score(score: float | None, board: Scores, is_lower_better: bool) -> float:
    """MLE-Dojo's position score of ``score`` on one leaderboard: ``(N - position + 1) / N``.

    Source: MLE-Dojo/MLE-Dojo ``mledojo/gym/interface.py``,
    ``CodeExecutionInterface._calculate_leaderboard_position``. There the board is sorted best
    first (by the competition's direction, not by file order), and ``position`` is the 1-based
    index of the first entry that the score ties or beats (``>=`` when higher is better, ``<=``
    when lower is better), or ``N + 1`` when it beats none. So a tie ranks the submission at the
    top of the tied group, and the result equals the share of the board the score ties or beats:
    1.0 at best, 0.0 at worst.

    MLE-Dojo's boards have no NaN (its ``sorted`` would be ill-defined with them); here a NaN
    entry still counts in ``N`` but is never beaten. A missing or NaN score beats nothing (0.0),
    as in MLE-Dojo, where every comparison with NaN fails.
    """
    values = np.asarray(board, dtype=float)
    if values.size == 0:
        raise SandmleError("cannot place a score on an empty leaderboard")
    if score is None or math.isnan(score):
        return 0.0
    tied_or_beaten = values >= score if is_lower_better else values <= score
    return int(np.count_nonzero(tied_or_beaten)) / values.size


def human_rank(
    score: float | None,
    private_scores: Scores,
    public_scores: Scores | None = None,
    *,
    is_lower_better: bool,
) -> float:
    """MLE-Dojo's HumanRank: the mean :func:`position_score` over the private and public boards.

    MLE-Dojo averages over whichever of ``private_leaderboard.csv`` and ``public_leaderboard.csv``
    exist; with no public board this is the private position score alone.
    """
    boards = [private_scores] if public_scores is None else [private_scores, public_scores]
    return sum(position_score(score, board, is_lower_better) for board in boards) / len(boards)
