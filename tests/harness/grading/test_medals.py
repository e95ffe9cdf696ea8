"""Tests for sandmle.harness.grading.medals: MLE-bench's medal rule and MLE-Dojo's HumanRank."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandmle.errors import SandmleError
from sandmle.harness.grading.medals import (
    MedalThresholds,
    human_rank,
    is_lower_better_from_leaderboard,
    medal_flags,
    medal_rows,
    position_score,
    read_leaderboard,
    thresholds_from_leaderboard,
)
from tests.conftest import LEADERBOARDS
from tests.spec_tables import SPEC_TABLE

NAN = float("nan")


def ranked_board(teams: int, lower_is_better: bool = False) -> np.ndarray:
    """A board whose score at 1-based row r encodes r, so a threshold tells its row."""
    rows = np.arange(1, teams + 1, dtype=float)
    return rows if lower_is_better else teams + 1 - rows


def row_of(threshold: float, teams: int, lower_is_better: bool = False) -> int:
    return int(threshold) if lower_is_better else int(teams + 1 - threshold)


# --- the row rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("teams", "rows"),
    [
        (1, (1, 1, 1)),
        (4, (1, 1, 1)),
        (9, (1, 1, 3)),
        (10, (1, 2, 4)),
        (50, (5, 10, 20)),
        (99, (9, 19, 39)),
        (100, (10, 20, 40)),
        (249, (10, 49, 99)),
        (250, (10, 50, 100)),
        (499, (10, 50, 100)),
        (500, (11, 50, 100)),
        (999, (11, 50, 100)),
        (1000, (12, 50, 100)),
        (1967, (13, 98, 196)),
        (4539, (19, 226, 453)),
    ],
)
def test_medal_rows_band_edges(teams: int, rows: tuple[int, int, int]) -> None:
    assert medal_rows(teams) == rows


def _exact_rows(n: int) -> tuple[int, int, int]:
    """The rule with exact rational floors, written independently of the module."""

    def fl(p: str) -> int:
        return math.floor(n * Fraction(p))

    if n < 100:
        return max(1, fl("0.1")), max(1, fl("0.2")), max(1, fl("0.4"))
    if n < 250:
        return 10, max(1, fl("0.2")), max(1, fl("0.4"))
    if n < 1000:
        return 10 + fl("0.002"), 50, 100
    return 10 + fl("0.002"), max(1, fl("0.05")), max(1, fl("0.1"))


def test_truncated_float_product_equals_exact_floor() -> None:
    # Spec §1.5: the binary constants sit just above the decimal ones, so truncation is exact.
    for n in range(1, 20001):
        assert medal_rows(n) == _exact_rows(n), n


@pytest.mark.parametrize("teams", [0, -3])
def test_medal_rows_rejects_no_teams(teams: int) -> None:
    with pytest.raises(SandmleError):
        medal_rows(teams)


@pytest.mark.parametrize("teams", [1, 9, 99, 100, 249, 250, 999, 1000, 1967])
@pytest.mark.parametrize("lower", [False, True])
def test_thresholds_are_scores_at_rule_rows(teams: int, lower: bool) -> None:
    board = ranked_board(teams, lower)
    t = thresholds_from_leaderboard(board)
    rows = (
        row_of(t.gold, teams, lower),
        row_of(t.silver, teams, lower),
        row_of(t.bronze, teams, lower),
    )
    assert rows == medal_rows(teams)
    assert t.teams == teams
    assert t.is_lower_better is (lower and teams > 1)
    assert t.median == pytest.approx((teams + 1) / 2)


def test_thresholds_use_file_order_not_sorted_order() -> None:
    board = [5.0, 9.0, 1.0, 7.0, 3.0, 8.0, 2.0, 6.0, 4.0, 0.5]  # 10 teams: rows 1, 2, 4
    t = thresholds_from_leaderboard(board)
    assert (t.gold, t.silver, t.bronze) == (5.0, 9.0, 7.0)
    assert t.is_lower_better is False


def test_explicit_direction_overrides_the_leaderboard() -> None:
    t = thresholds_from_leaderboard([3.0, 2.0, 1.0], is_lower_better=True)
    assert t.is_lower_better is True


def test_empty_leaderboard_is_an_error() -> None:
    with pytest.raises(SandmleError, match="empty"):
        thresholds_from_leaderboard([])


def test_nan_rows_count_as_teams_and_median_skips_them() -> None:
    board = [10.0, 9.0, NAN, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, NAN]  # 10 teams: rows 1, 2, 4
    t = thresholds_from_leaderboard(board)
    assert t.teams == 10
    assert (t.gold, t.silver, t.bronze) == (10.0, 9.0, 8.0)
    assert t.median == 6.5  # median of the 8 numbers
    assert t.is_lower_better is False  # NaN at the end


def test_nan_threshold_row_is_kept() -> None:
    t = thresholds_from_leaderboard([NAN, 2.0, 1.0])
    assert math.isnan(t.gold)
    assert medal_flags(5.0, t, t.is_lower_better)["gold_medal"] is False


def test_to_dict_keys() -> None:
    t = MedalThresholds(1.0, 2.0, 3.0, 4.0, True, 7)
    assert t.to_dict() == {
        "gold_threshold": 1.0,
        "silver_threshold": 2.0,
        "bronze_threshold": 3.0,
        "median_threshold": 4.0,
        "is_lower_better": True,
        "teams": 7,
    }


# --- direction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("board", "lower"),
    [
        ([1.0, 2.0, 3.0], True),
        ([3.0, 2.0, 1.0], False),
        ([2.0, 1.0, 2.0], False),  # equal ends
        ([5.0], False),
        ([NAN, 2.0, 3.0], False),
        ([1.0, 2.0, NAN], False),
        ([1.0, 9.0, 0.5, 1.5], True),  # only the ends matter
    ],
)
def test_direction_from_first_and_last(board: list[float], lower: bool) -> None:
    assert is_lower_better_from_leaderboard(board) is lower


# --- flags ---------------------------------------------------------------------------------

HIGHER = MedalThresholds(
    gold=0.9, silver=0.8, bronze=0.7, median=0.5, is_lower_better=False, teams=9
)
LOWER = MedalThresholds(gold=0.1, silver=0.2, bronze=0.3, median=0.5, is_lower_better=True, teams=9)


@pytest.mark.parametrize(
    ("thresholds", "score", "tier", "above"),
    [
        (HIGHER, 0.95, "gold_medal", True),
        (HIGHER, 0.9, "gold_medal", True),  # equal to the threshold earns it
        (HIGHER, 0.85, "silver_medal", True),
        (HIGHER, 0.8, "silver_medal", True),
        (HIGHER, 0.7, "bronze_medal", True),
        (HIGHER, 0.6, None, True),
        (HIGHER, 0.5, None, False),  # equal to the median is not above it
        (HIGHER, 0.1, None, False),
        (LOWER, 0.05, "gold_medal", True),
        (LOWER, 0.1, "gold_medal", True),
        (LOWER, 0.2, "silver_medal", True),
        (LOWER, 0.3, "bronze_medal", True),
        (LOWER, 0.4, None, True),
        (LOWER, 0.5, None, False),
        (LOWER, 0.9, None, False),
    ],
)
def test_medal_flags(
    thresholds: MedalThresholds, score: float, tier: str | None, above: bool
) -> None:
    flags = medal_flags(score, thresholds, thresholds.is_lower_better)
    for name in ("gold_medal", "silver_medal", "bronze_medal"):
        assert flags[name] is (name == tier), name
    assert flags["any_medal"] is (tier is not None)
    assert flags["above_median"] is above


def test_tiers_are_exclusive_when_thresholds_coincide() -> None:
    # aerial-cactus: gold = silver = bronze = 1.0
    t = MedalThresholds(1.0, 1.0, 1.0, 0.9991, False, 1221)
    flags = medal_flags(1.0, t, False)
    assert flags == {
        "gold_medal": True,
        "silver_medal": False,
        "bronze_medal": False,
        "any_medal": True,
        "above_median": True,
    }


@pytest.mark.parametrize("score", [None, NAN])
def test_missing_score_gets_no_flags(score: float | None) -> None:
    for t in (HIGHER, LOWER):
        assert not any(medal_flags(score, t, t.is_lower_better).values())


def test_flags_use_the_direction_argument() -> None:
    # The same threshold values read as higher-is-better give the opposite verdict.
    assert medal_flags(0.05, LOWER, False)["any_medal"] is False
    assert medal_flags(0.05, LOWER, True)["gold_medal"] is True


def test_flags_accept_competition_thresholds() -> None:
    from sandmle.harness.competition import Thresholds

    t = Thresholds(gold=0.9, silver=0.8, bronze=0.7, median=0.5)
    assert medal_flags(0.8, t, False)["silver_medal"] is True


# --- reading -------------------------------------------------------------------------------


def test_read_rank_score(tmp_path: Path) -> None:
    path = tmp_path / "lb.csv"
    path.write_text("rank,score\n1,0.9\n2,\n3,0.7\n")
    scores = read_leaderboard(path)
    assert scores.dtype == np.float64
    assert scores[0] == 0.9 and math.isnan(scores[1]) and scores[2] == 0.7


def test_read_mlebench_columns_uses_only_score(tmp_path: Path) -> None:
    path = tmp_path / "lb.csv"
    frame = pd.DataFrame(
        {
            "scoreNullable": [0.1, 0.2, 0.3],
            "teamId": [7, 8, 9],
            "hasTeamName": [True, True, False],
            "submissionDate": ["2019-01-01"] * 3,
            "score": [0.3, 0.2, 0.1],
            "hasScore": [True] * 3,
        }
    )
    frame.to_csv(path, index=False)
    assert read_leaderboard(path).tolist() == [0.3, 0.2, 0.1]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("", "not a readable CSV"),
        ("rank,points\n1,0.5\n", "no 'score' column"),
        ("rank,score\n", "no rows"),
        ("rank,score\n1,abc\n", "non-numeric"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "CSV|score"),
    ],
)
def test_read_bad_input(tmp_path: Path, content: str | bytes | None, message: str) -> None:
    path = tmp_path / "lb.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(SandmleError, match=message) as info:
        read_leaderboard(path)
    assert "\n" not in str(info.value)


def test_read_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SandmleError):
        read_leaderboard(tmp_path)


# --- real leaderboards ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("competition", "teams"),
    [("spaceship-titanic", 1967), ("detecting-insults-in-social-commentary", 50)],
)
def test_real_board_rule_positions(competition: str, teams: int) -> None:
    # teams: the files' data rows (MLE-Dojo@667a8fd's boards in tests/fixtures/leaderboards)
    path = LEADERBOARDS / competition / "private_leaderboard.csv"
    scores = read_leaderboard(path)
    raw = pd.read_csv(path)["score"]
    assert scores.size == teams
    t = thresholds_from_leaderboard(scores)
    gold, silver, bronze = medal_rows(teams)
    assert (t.gold, t.silver, t.bronze) == (raw[gold - 1], raw[silver - 1], raw[bronze - 1])
    assert t.median == raw.median()
    assert t.is_lower_better is False


@pytest.mark.parametrize("competition", sorted(SPEC_TABLE))
def test_spec_illustration_table(competition: str) -> None:
    teams, lower, gold, silver, bronze, median = SPEC_TABLE[competition]
    t = thresholds_from_leaderboard(
        read_leaderboard(LEADERBOARDS / competition / "private_leaderboard.csv")
    )
    assert (t.teams, t.is_lower_better) == (teams, lower)
    assert (t.gold, t.silver, t.bronze) == (gold, silver, bronze)
    assert t.median == pytest.approx(median, abs=1e-12)  # the table prints the median rounded


def test_spec_table_has_the_21_lite_boards() -> None:
    assert len(SPEC_TABLE) == 21
    assert "siim-isic-melanoma-classification" not in SPEC_TABLE


# --- HumanRank -----------------------------------------------------------------------------

BOARD_HIGH = [0.9, 0.8, 0.8, 0.7, 0.6]
BOARD_LOW = [0.1, 0.2, 0.2, 0.3, 0.4]


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (1.0, 1.0),  # beats everyone: position 1
        (0.9, 1.0),  # ties the leader: ranked at the top of the tie
        (0.85, 4 / 5),  # position 2
        (0.8, 4 / 5),  # ties two entries at rows 2-3: position 2
        (0.75, 2 / 5),  # position 4
        (0.6, 1 / 5),  # ties the last entry: position 5
        (0.5, 0.0),  # beats nobody: position N + 1
    ],
)
def test_position_score_higher_is_better(score: float, expected: float) -> None:
    assert position_score(score, BOARD_HIGH, is_lower_better=False) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("score", "expected"),
    [(0.0, 1.0), (0.1, 1.0), (0.15, 4 / 5), (0.2, 4 / 5), (0.25, 2 / 5), (0.4, 1 / 5), (0.5, 0.0)],
)
def test_position_score_lower_is_better(score: float, expected: float) -> None:
    assert position_score(score, BOARD_LOW, is_lower_better=True) == pytest.approx(expected)


def test_position_score_ignores_file_order() -> None:
    shuffled = [0.7, 0.9, 0.6, 0.8, 0.8]
    for score in (1.0, 0.8, 0.75, 0.5):
        assert position_score(score, shuffled, False) == position_score(score, BOARD_HIGH, False)


@pytest.mark.parametrize("score", [None, NAN])
def test_position_score_of_missing_score_is_zero(score: float | None) -> None:
    assert position_score(score, BOARD_HIGH, False) == 0.0


def test_position_score_nan_entries_count_but_are_never_beaten() -> None:
    assert position_score(1.0, [0.9, NAN, 0.5, 0.1], False) == 3 / 4


def test_position_score_empty_board_is_an_error() -> None:
    with pytest.raises(SandmleError):
        position_score(0.5, [], False)


def test_human_rank_averages_private_and_public() -> None:
    private = [0.9, 0.8, 0.7, 0.6]  # 0.75 ties or beats 2 of 4
    public = [0.95, 0.9, 0.85, 0.8, 0.7]  # 0.75 beats 1 of 5
    assert human_rank(0.75, private, public, is_lower_better=False) == pytest.approx(
        (2 / 4 + 1 / 5) / 2
    )


def test_human_rank_private_only() -> None:
    assert human_rank(0.75, [0.9, 0.8, 0.7, 0.6], is_lower_better=False) == 0.5


def test_human_rank_lower_is_better_extremes() -> None:
    assert human_rank(0.0, BOARD_LOW, BOARD_LOW, is_lower_better=True) == 1.0
    assert human_rank(9.9, BOARD_LOW, BOARD_LOW, is_lower_better=True) == 0.0
    assert human_rank(None, BOARD_LOW, BOARD_LOW, is_lower_better=True) == 0.0


def test_human_rank_on_real_boards() -> None:
    folder = LEADERBOARDS / "spaceship-titanic"
    private = read_leaderboard(folder / "private_leaderboard.csv")
    public = read_leaderboard(folder / "public_leaderboard.csv")
    assert human_rank(1.0, private, public, is_lower_better=False) == 1.0
    assert human_rank(0.0, private, public, is_lower_better=False) == pytest.approx(
        (
            np.count_nonzero(private <= 0.0) / private.size
            + np.count_nonzero(public <= 0.0) / public.size
        )
        / 2
    )
    median = float(np.median(private))
    assert 0.4 < position_score(median, private, False) < 0.6
