from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandmle.harness.competition import Competition, load_competition
from sandmle.harness.grading.medals import read_leaderboard, thresholds_from_leaderboard
from sandmle.harness.grading.metrics import get_metric
from sandmle.harness.grading.registry import grader
from sandmle.harness.grading.report import (
    CompetitionReport,
    grade_csv,
    grade_frame,
    report_human_rank,
)

MLE_BENCH_FIELDS = [
    "competition_id",
    "score",
    "gold_threshold",
    "silver_threshold",
    "bronze_threshold",
    "median_threshold",
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "submission_exists",
    "valid_submission",
    "is_lower_better",
    "created_at",
    "submission_path",
]
FLAGS = ["any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median"]


@pytest.fixture
def plant(plant_dir: Path) -> Competition:
    return load_competition(plant_dir)


def _answers(comp: Competition) -> pd.DataFrame:
    return pd.read_csv(comp.answers_path)


def _write(tmp_path: Path, text: str | bytes, name: str = "submission.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _frame_csv(tmp_path: Path, frame: pd.DataFrame) -> Path:
    path = tmp_path / "submission.csv"
    frame.to_csv(path, index=False)
    return path


def _assert_invalid(report: CompetitionReport, reason: str, exists: bool = True) -> None:
    assert report.valid_submission is False
    assert report.score is None
    assert report.submission_exists is exists
    assert not any(getattr(report, f) for f in FLAGS)
    assert report.invalid_reason and reason in report.invalid_reason, report.invalid_reason
    assert "\n" not in report.invalid_reason
    assert report.gold_threshold == 0.95  # thresholds are kept on invalid submissions


def test_report_has_exactly_mle_bench_fields(plant: Competition) -> None:
    report = grade_csv(plant.sample_submission_path, plant)
    assert list(report.to_dict()) == [*MLE_BENCH_FIELDS, "invalid_reason"]


def test_sample_submission_is_valid_and_scores_half(plant: Competition) -> None:
    report = grade_csv(plant.sample_submission_path, plant)
    assert report.valid_submission and report.submission_exists
    assert report.score == 0.5 and report.invalid_reason is None
    assert not report.above_median and not report.any_medal


def test_perfect_submission_gets_gold(plant: Competition, tmp_path: Path) -> None:
    answers = _answers(plant)
    report = grade_csv(_frame_csv(tmp_path, answers.sample(frac=1, random_state=0)), plant)
    assert report.score == 1.0
    assert report.gold_medal and report.any_medal and report.above_median
    assert not report.silver_medal and not report.bronze_medal


def test_score_matches_metric_rounded(plant: Competition, tmp_path: Path) -> None:
    answers = _answers(plant)
    rng = np.random.default_rng(0)
    preds = np.clip(answers["needs_water"] * 0.3 + rng.uniform(size=len(answers)) * 0.7, 0, 1)
    sub = answers.assign(needs_water=preds)
    report = grade_csv(_frame_csv(tmp_path, sub), plant)
    expected = get_metric("roc_auc").fn(answers["needs_water"].to_numpy(), preds.to_numpy())
    assert report.score == round(expected, 5)


def test_extra_columns_are_ignored(plant: Competition, tmp_path: Path) -> None:
    sub = _answers(plant).assign(note="x")
    assert grade_csv(_frame_csv(tmp_path, sub), plant).score == 1.0


def test_grade_frame_in_memory(plant: Competition) -> None:
    report = grade_frame(_answers(plant), plant)
    assert report.valid_submission and report.submission_path == "<in memory>"


def _sub_lines(comp: Competition, edit: Callable[[pd.DataFrame], pd.DataFrame]) -> pd.DataFrame:
    return edit(_answers(comp).astype({"needs_water": float}))


BAD_FRAMES: dict[str, tuple[Callable[[pd.DataFrame], pd.DataFrame], str]] = {
    "missing target": (lambda d: d.drop(columns="needs_water"), "missing column(s) 'needs_water'"),
    "missing id": (lambda d: d.drop(columns="id"), "missing column(s) 'id'"),
    "renamed target": (
        lambda d: d.rename(columns={"needs_water": "Needs_Water"}),
        "missing column",
    ),
    "duplicate ids": (
        lambda d: d.assign(id=[d.id[0]] * 2 + list(d.id[2:])),
        "duplicate id(s) in submission: 'pot_040'",
    ),
    "unknown ids": (lambda d: d.assign(id=d.id.str.upper()), "not in the test set"),
    "ids with spaces": (lambda d: d.assign(id=" " + d.id), "not in the test set"),
    "too few rows": (lambda d: d.iloc[:-1], "has 19 rows, expected 20"),
    "too many rows": (lambda d: pd.concat([d, d.iloc[:1]]), "has 21 rows, expected 20"),
    "no rows": (lambda d: d.iloc[:0], "has 0 rows, expected 20"),
    "nan": (lambda d: d.assign(needs_water=[np.nan] + [0.5] * 19), "NaN"),
    "inf": (lambda d: d.assign(needs_water=[np.inf] + [0.5] * 19), "infinite"),
    "text target": (lambda d: d.assign(needs_water=["high"] + [0.5] * 19), "is not numeric"),
    "probability above 1": (lambda d: d.assign(needs_water=[1.5] + [0.5] * 19), "[0, 1]"),
    "negative probability": (lambda d: d.assign(needs_water=[-0.1] + [0.5] * 19), "[0, 1]"),
}


@pytest.mark.parametrize("case", list(BAD_FRAMES))
def test_bad_submission_tables(plant: Competition, tmp_path: Path, case: str) -> None:
    edit, reason = BAD_FRAMES[case]
    report = grade_csv(_frame_csv(tmp_path, _sub_lines(plant, edit)), plant)
    _assert_invalid(report, reason)


BAD_FILES: dict[str, tuple[str | bytes, str]] = {
    "empty file": (b"", "empty"),
    "binary garbage": (bytes(range(256)) * 40, "binary data"),
    "not utf-8": (b"id,needs_water\npot_040,0.5\n" + b"\xff\xfe\xfa,0.1\n", "not UTF-8"),
    "semicolon delimiter": ("id;needs_water\npot_040;0.5\n", "does not seem to be comma-separated"),
    "tab delimiter": ("id\tneeds_water\npot_040\t0.5\n", "does not seem to be comma-separated"),
    "header only": ("id,needs_water\n", "has 0 rows"),
    "ragged rows": ("id,needs_water\npot_040,0.5\npot_041,0.5,1,2\n", "could not parse CSV"),
    "unterminated quote": ('id,needs_water\n"pot_040,0.5\n', "could not parse CSV"),
    "json document": ('{"id": "pot_040", "needs_water": 0.5}\n', "missing column"),
    "html page": ("<html><body>500 error</body></html>\n", "missing column"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_submission_files(plant: Competition, tmp_path: Path, case: str) -> None:
    content, reason = BAD_FILES[case]
    _assert_invalid(grade_csv(_write(tmp_path, content), plant), reason)


def test_missing_file(plant: Competition, tmp_path: Path) -> None:
    _assert_invalid(grade_csv(tmp_path / "nope.csv", plant), "no submission file", exists=False)


def test_directory_path(plant: Competition, tmp_path: Path) -> None:
    folder = tmp_path / "submission.csv"
    folder.mkdir()
    _assert_invalid(grade_csv(folder, plant), "is a directory", exists=False)


def test_wrong_suffix(plant: Competition, tmp_path: Path) -> None:
    path = _write(tmp_path, plant.sample_submission_path.read_text(), "submission.txt")
    _assert_invalid(grade_csv(path, plant), "does not have a .csv suffix", exists=False)


def test_one_gigabyte_file(plant: Competition, tmp_path: Path) -> None:
    path = tmp_path / "submission.csv"
    with path.open("wb") as fh:  # sparse: 1 GiB on paper, nothing on disk
        fh.truncate(2**30)
    _assert_invalid(grade_csv(path, plant), "over the 512.0 MiB submission limit")


def test_fifo_is_not_a_regular_file(plant: Competition, tmp_path: Path) -> None:
    path = tmp_path / "submission.csv"
    os.mkfifo(path)
    _assert_invalid(grade_csv(path, plant), "not a regular file", exists=False)


def test_utf8_bom_and_booleans_are_accepted(plant: Competition, tmp_path: Path) -> None:
    answers = _answers(plant)
    lines = ["id,needs_water"] + [
        f"{i},{bool(v)}" for i, v in zip(answers.id, answers.needs_water, strict=True)
    ]
    path = _write(tmp_path, ("\ufeff" + "\n".join(lines) + "\n").encode("utf-8"))
    report = grade_csv(path, plant)
    assert report.valid_submission and report.score == 1.0


def test_grader_bug_is_flagged_not_blamed_on_agent(plant_dir: Path, tmp_path: Path) -> None:
    @grader("test-crashing")
    def _crash(submission: pd.DataFrame, answers: pd.DataFrame, config: object) -> float:
        raise KeyError("oops")

    text = (
        (plant_dir / "competition.yaml")
        .read_text()
        .replace("name: standard", "name: test-crashing")
    )
    (plant_dir / "competition.yaml").write_text(text)
    comp = load_competition(plant_dir)
    report = grade_csv(comp.sample_submission_path, comp)
    _assert_invalid(report, "grader error (a bug in the grader, not the submission): KeyError")


def test_leaderboard_thresholds_and_human_rank(bike_dir: Path, tmp_path: Path) -> None:
    comp = load_competition(bike_dir)
    board = thresholds_from_leaderboard(read_leaderboard(bike_dir / "leaderboard.csv"))
    report = grade_csv(comp.sample_submission_path, comp)
    assert report.valid_submission and report.is_lower_better
    assert (report.gold_threshold, report.median_threshold) == (board.gold, board.median)
    rank = report_human_rank(report, comp)
    assert rank is not None and 0.0 <= rank <= 1.0
    perfect = grade_csv(_frame_csv(tmp_path, pd.read_csv(comp.answers_path)), comp)
    assert perfect.score == 0.0 and perfect.gold_medal
    assert report_human_rank(perfect, comp) == 1.0


def test_nan_metric_is_valid_without_flags(plant: Competition) -> None:
    """A metric that returns NaN gives a valid submission with every flag False (MLE-bench)."""

    @grader("test-nan")
    def _nan(submission: pd.DataFrame, answers: pd.DataFrame, config: object) -> float:
        return float("nan")

    plant.config.grader.name = "test-nan"
    report = grade_csv(plant.sample_submission_path, plant)
    assert report.valid_submission and math.isnan(report.score or 0.0) is True
    assert not any(getattr(report, f) for f in FLAGS)


def test_rounding_follows_return_type(plant: Competition) -> None:
    @grader("test-numpy")
    def _np(submission: pd.DataFrame, answers: pd.DataFrame, config: object) -> float:
        return np.float64(0.123455)

    @grader("test-python")
    def _py(submission: pd.DataFrame, answers: pd.DataFrame, config: object) -> float:
        return 0.123455

    plant.config.grader.name = "test-numpy"
    assert grade_csv(plant.sample_submission_path, plant).score == 0.12346
    plant.config.grader.name = "test-python"
    assert grade_csv(plant.sample_submission_path, plant).score == 0.12345


def test_medal_tiers_at_thresholds(plant: Competition) -> None:
    for score, tier in [(0.95, "gold_medal"), (0.9, "silver_medal"), (0.85, "bronze_medal")]:

        @grader(f"test-fixed-{tier}")
        def _fixed(
            submission: pd.DataFrame, answers: pd.DataFrame, config: object, s=score
        ) -> float:
            return s

        plant.config.grader.name = f"test-fixed-{tier}"
        report = grade_csv(plant.sample_submission_path, plant)
        assert getattr(report, tier) and report.any_medal and report.above_median
        assert sum(getattr(report, t) for t in ("gold_medal", "silver_medal", "bronze_medal")) == 1
