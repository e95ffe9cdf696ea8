"""MLE-Dojo's prepared layout read as sandmle competitions."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import sandmle.benchmarks.mle_dojo.upstream  # noqa: F401  (registers mle-dojo/native)
from sandmle.benchmarks.mle_dojo import competitions as dojo
from sandmle.errors import CompetitionError
from sandmle.harness.grading.medals import read_leaderboard, thresholds_from_leaderboard
from sandmle.harness.grading.report import competition_thresholds, grade_csv, report_human_rank

from .conftest import DOJO_IDS, SPOOKY


def test_replica_layout_is_dojos(dojo_dir: Path) -> None:
    built = sorted([*DOJO_IDS, SPOOKY])
    assert sorted(p.name for p in dojo_dir.iterdir()) == built  # siim: not in Dojo
    assert dojo.prepared_ids(dojo_dir) == built
    private = dojo_dir / "spooky-author-identification" / "data" / "private"
    board = pd.read_csv(private / "private_leaderboard.csv")
    assert list(board.columns) == ["rank", "score"]
    assert (
        dojo_dir / "text-normalization-challenge-english-language/data/public/sample_submission.csv"
    ).is_file()


def test_config_thresholds_and_human_boards(dojo_dir: Path) -> None:
    folder = dojo_dir / "spooky-author-identification"
    competition = dojo.load_dojo_competition(folder, grader="mle-bench")
    config = competition.config
    assert config.grader.name == "mle-bench-lite/spooky-author-identification"
    assert config.human_leaderboards is not None and config.human_leaderboards.public
    assert competition.public_dir.resolve() == (folder / "data/public").resolve()
    expected = thresholds_from_leaderboard(
        read_leaderboard(folder / "data/private/private_leaderboard.csv")
    )
    assert competition_thresholds(competition) == expected  # MLE-bench's rule on the private board
    assert expected.is_lower_better  # log loss: the board ascends
    report = grade_csv(competition.sample_submission_path, competition)
    assert report.valid_submission and report_human_rank(report, competition) == 0.0


def test_human_rank_of_the_answers_is_one(dojo_dir: Path, tmp_path: Path) -> None:
    competition = dojo.load_dojo_competition(dojo_dir / "aerial-cactus-identification")
    answers = pd.read_csv(competition.answers_path)
    answers.to_csv(tmp_path / "s.csv", index=False)
    report = grade_csv(tmp_path / "s.csv", competition)
    assert report.score == 1.0 and report.gold_medal
    assert report_human_rank(report, competition) == 1.0


def test_unprepared_and_unsupported_are_named(
    dojo_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(CompetitionError, match="MLE-Dojo data for nope is not prepared"):
        dojo.load_dojo_competition(tmp_path / "nope")
    other = tmp_path / "titanic"
    for rel in (
        "data/public/description.txt",
        "data/public/sample_submission.csv",
        "data/private/test_answer.csv",
    ):
        (other / rel).parent.mkdir(parents=True, exist_ok=True)
        (other / rel).write_text("PassengerId,Survived\n1,0\n")
    monkeypatch.setattr(dojo, "mledojo_metric_class", lambda cid: None)
    with pytest.raises(CompetitionError, match="titanic: unsupported"):
        dojo.load_dojo_competition(other)


class FakeMetrics:
    """Stands in for an MLE-Dojo metric class: accuracy of column 'Survived'."""

    higher_is_better = True

    def validate_submission(self, submission: pd.DataFrame, ground_truth: pd.DataFrame) -> str:
        if list(submission.columns) != list(ground_truth.columns):
            raise ValueError("columns differ")
        return "Submission is valid."

    def evaluate(self, y_true: pd.DataFrame, y_pred: pd.DataFrame) -> float:
        return float((y_true["Survived"] == y_pred["Survived"]).mean())


def test_native_grader_uses_dojos_metric_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "data" / "titanic"
    files = {
        "data/public/description.txt": "Titanic.\n",
        "data/public/sample_submission.csv": "PassengerId,Survived\n1,0\n2,0\n",
        "data/private/test_answer.csv": "PassengerId,Survived\n1,1\n2,0\n",
        "data/private/public_leaderboard.csv": "rank,score\n1,0.9\n2,0.7\n3,0.5\n",
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    monkeypatch.setattr(dojo, "mledojo_metric_class", lambda cid: FakeMetrics)
    competition = dojo.load_dojo_competition(folder)
    assert competition.config.grader.name == "mle-dojo/native"
    assert competition.config.human_leaderboards is not None  # only the public board exists
    assert competition.config.human_leaderboards.public is None
    report = grade_csv(competition.sample_submission_path, competition)
    assert report.score == 0.5 and report_human_rank(report, competition) == pytest.approx(1 / 3)
    (tmp_path / "bad.csv").write_text("PassengerId,Wrong\n1,0\n2,0\n")
    bad = grade_csv(tmp_path / "bad.csv", competition)
    assert not bad.valid_submission and "MLE-Dojo validation" in (bad.invalid_reason or "")
    assert math.isnan(competition_thresholds(competition).gold) is False
