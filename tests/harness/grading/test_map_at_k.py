"""MAP@k (ranking): Kaggle's average precision at k, hand-worked values and edge cases, and
grading through the one grading core (a bad submission is invalid, never a crash)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandmle.errors import InvalidSubmission
from sandmle.harness.competition import (
    CompetitionConfig,
    Thresholds,
    load_competition,
    write_config,
)
from sandmle.harness.grading.metrics import average_precision_at_k, get_metric, ranking_k
from sandmle.harness.grading.report import grade_csv


def map_at(k: int, actual: list[object], predicted: list[object]) -> float:
    return get_metric(f"map_at_{k}").fn(
        np.array(actual, dtype=object), np.array(predicted, dtype=object)
    )


def test_registered_cutoffs_are_higher_is_better_single_column() -> None:
    for k in (3, 5, 7, 10, 12):
        spec = get_metric(f"map_at_{k}")
        assert not spec.lower_is_better and not spec.multi_column
        assert ranking_k(spec.name) == k
    assert ranking_k("roc_auc") is None and ranking_k("map_at_x") is None


def test_hand_worked_example() -> None:
    # query 1: relevant {a, c}; predicted a x c -> (1/1 + 2/3) / 2 = 5/6
    # query 2: relevant {d};    predicted x y d -> (1/3) / 1 = 1/3
    # query 3: relevant {e, f, g, h}; predicted f e (k=3) -> (1/1 + 2/2) / min(4, 3) = 2/3
    score = map_at(3, ["a c", "d", "e f g h"], ["a x c", "x y d", "f e"])
    assert score == pytest.approx((5 / 6 + 1 / 3 + 2 / 3) / 3, abs=1e-12)
    assert type(score) is np.float64


def test_only_the_first_k_predictions_count() -> None:
    assert map_at(3, ["d"], ["a b c d"]) == 0.0
    assert map_at(5, ["d"], ["a b c d"]) == pytest.approx(0.25)


def test_fewer_than_k_predictions_divide_by_min_of_relevant_and_k() -> None:
    # one right guess out of two relevant ids: 1 / min(2, 12)
    assert map_at(12, ["a b"], ["a"]) == pytest.approx(0.5)
    # twelve relevant ids but only k=3 positions: a perfect top 3 scores 1
    relevant = " ".join(f"i{n}" for n in range(12))
    assert map_at(3, [relevant], ["i5 i0 i9"]) == pytest.approx(1.0)


def test_duplicates_count_once_and_keep_their_rank_position() -> None:
    # a a b: a hits at rank 1, the repeat is not a hit, b hits at rank 3 -> (1 + 2/3) / 2
    assert map_at(3, ["a b"], ["a a b"]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision_at_k({"a"}, ["a", "a", "a"], 3) == 1.0


def test_empty_rows_unknown_ids_and_empty_answers_score_zero() -> None:
    assert map_at(5, ["a", "b"], ["", np.nan]) == 0.0
    assert map_at(5, ["a"], ["zz yy xx"]) == 0.0  # ids not in the catalogue are just misses
    assert map_at(5, [""], ["a b"]) == 0.0  # nothing relevant: AP is 0, as Kaggle's apk
    # a doubled space is an empty id at its own rank (split on " ", as MLE-bench does)
    assert map_at(5, ["b"], ["a  b"]) == pytest.approx(1 / 3)


def test_lone_numeric_ids_read_as_numbers_still_match() -> None:
    assert map_at(5, [12, "7 9"], [12.0, "9"]) == pytest.approx((1.0 + 0.5) / 2)


@pytest.mark.parametrize(
    ("actual", "predicted", "reason"),
    [
        (["a", "b"], ["a"], "row"),
        ([], [], "no rows"),
        (["a"], [{"a": 1}], "not a space-separated list"),
        (["a"], [1.5], "not a space-separated list"),
    ],
)
def test_malformed_input_is_invalid(actual: list, predicted: list, reason: str) -> None:
    with pytest.raises(InvalidSubmission, match=reason):
        map_at(5, actual, predicted)


@pytest.fixture
def ranking_competition(tmp_path: Path):
    root = tmp_path / "recs"
    (root / "prepared/public").mkdir(parents=True)
    (root / "prepared/private").mkdir(parents=True)
    answers = pd.DataFrame({"customer_id": ["u1", "u2", "u3"], "prediction": ["a c", "d", "b"]})
    answers.to_csv(root / "prepared/private/answers.csv", index=False)
    sample = answers.assign(prediction="a b c")
    sample.to_csv(root / "prepared/public/sample_submission.csv", index=False)
    (root / "prepared/public/description.md").write_text("# recs\n")
    config = CompetitionConfig(
        id="recs",
        name="recs",
        metric="map_at_3",
        is_lower_better=False,
        id_columns=["customer_id"],
        target_columns=["prediction"],
        thresholds=Thresholds(gold=0.9, silver=0.8, bronze=0.7, median=0.5),
    )
    write_config(config, root)
    return load_competition(root)


def _grade(competition, tmp_path: Path, text: str):
    path = tmp_path / "submission.csv"
    path.write_text(text)
    return grade_csv(path, competition)


def test_grading_core_scores_a_ranking_submission(ranking_competition, tmp_path: Path) -> None:
    # rows out of order, one blank cell (an empty ranking, not an invalid file)
    report = _grade(ranking_competition, tmp_path, "customer_id,prediction\nu3,\nu1,a x c\nu2,d\n")
    assert report.valid_submission
    assert report.score == pytest.approx(round((5 / 6 + 1 + 0) / 3, 5))
    assert report.gold_medal is False and report.above_median


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("customer_id,items\nu1,a\nu2,d\nu3,b\n", "missing column"),
        ("customer_id,prediction\nu1,a\nu2,d\n", "rows"),
        ("customer_id,prediction\nu1,a\nu2,d\nu9,b\n", "not in the test set"),
        ("customer_id,prediction\nu1,a\nu1,d\nu3,b\n", "duplicate"),
    ],
)
def test_bad_ranking_submissions_are_invalid_not_crashes(
    ranking_competition, tmp_path: Path, text: str, reason: str
) -> None:
    report = _grade(ranking_competition, tmp_path, text)
    assert not report.valid_submission and report.score is None
    assert reason in report.invalid_reason
