"""MLE-Dojo's own validation and metrics, one grader per competition we claim (``mle-dojo/<id>``).

MLE-Dojo grades a submission in two steps (``mledojo/gym/interface.py``): the competition's
``validate_submission(submission, answers)``, then ``evaluate(answers, submission)`` on the same
two tables; an exception in either makes the submission fail. Its rules differ from MLE-bench's,
so these graders reproduce them rule for rule (read from each competition's
``mledojo/competitions/<id>/utils/metric.py``; cross-checked against that code by the tests):

* rows: the submission must have as many rows as ``test_answer.csv``;
* ids: both tables are sorted by their *first column* (by position, not by name), and those
  first columns must be equal; some competitions compare them as text, jigsaw compares them in
  the answers' row order unsorted, insults compares the third column unsorted;
* columns: the column set must equal the answers' (or a fixed set), so extra columns fail;
* the metric is then computed the way MLE-Dojo computes it: e.g. MSE (not RMSE) for NYC taxi,
  probabilities clipped at 1e-15, pandas means that skip NaN, an AUC of one class scored 0.5 or
  0.0 where MLE-Dojo catches the error. A metric that raises makes the submission invalid.

Competitions whose MLE-Dojo metric can never score a submission are listed in ``UNGRADABLE``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from sklearn import metrics as skm

from sandmle.errors import InvalidSubmission
from sandmle.harness.competition import CompetitionConfig
from sandmle.harness.grading.registry import grader

GRADER_PREFIX = "mle-dojo/"
EPSILON = 1e-15
JIGSAW_CLASSES = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]

Metric = Callable[[pd.DataFrame, pd.DataFrame], float]
"""``(answers, submission) -> score`` on the validated tables, as MLE-Dojo's ``evaluate``."""
IdCheck = Literal["sorted", "sorted_text", "ordered", "third_column"]


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(by=frame.columns[0]).reset_index(drop=True)


def _first_as_text(frame: pd.DataFrame) -> None:
    frame[frame.columns[0]] = frame[frame.columns[0]].astype(str)


def _auc(column: str, sort: bool = True) -> Metric:
    def score(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
        if sort:
            answers, submission = _sorted(answers), _sorted(submission)
        return float(skm.roc_auc_score(answers[column], submission[column]))

    return score


def _curve_auc(truth: pd.Series, predicted: pd.Series) -> float:
    fpr, tpr, _ = skm.roc_curve(truth, predicted, pos_label=1)
    return float(skm.auc(fpr, tpr))


def _whale(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    return _curve_auc(_sorted(answers)["probability"], _sorted(submission)["probability"])


def _mlsp(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    answers, submission = _sorted(answers), _sorted(submission)
    scores = [_curve_auc(answers[c], submission[c]) for c in answers.columns[1:]]
    return float(np.mean(scores))


def _mean_auc_catching(skip: str | None, on_error: float, sort: bool) -> Metric:
    """Mean per-column AUC; a column whose AUC raises ValueError counts as ``on_error``."""

    def score(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
        if sort:
            answers, submission = _sorted(answers), _sorted(submission)
        columns = [c for c in answers.columns if c != skip] if skip else answers.columns[1:]
        scores = []
        for column in columns:
            try:
                scores.append(skm.roc_auc_score(answers[column], submission[column]))
            except ValueError:
                scores.append(on_error)
        return float(np.mean(scores))

    return score


def _jigsaw(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    truth = answers.set_index("id").sort_index()
    predicted = submission.set_index("id").sort_index()
    keep = truth[JIGSAW_CLASSES].sum(axis=1) >= 0
    # Every remaining column, each table in its own column order (as MLE-Dojo does).
    return float(
        skm.roc_auc_score(truth[keep].to_numpy(), predicted[keep].to_numpy(), average="macro")
    )


def _qwk(column: str) -> Metric:
    def score(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
        answers, submission = _sorted(answers), _sorted(submission)
        return float(
            skm.cohen_kappa_score(answers[column], submission[column], weights="quadratic")
        )

    return score


def _accuracy(column: str) -> Metric:
    def score(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
        answers, submission = _sorted(answers), _sorted(submission)
        return float(skm.accuracy_score(answers[column], submission[column]))

    return score


def _rmse_skipping_nan(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    answers, submission = _sorted(answers), _sorted(submission)
    # pandas' mean skips NaN, so a NaN prediction drops out instead of failing.
    return float(np.sqrt(((submission["value"] - answers["value"]) ** 2).mean()))


def _mse(column: str) -> Metric:
    def score(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
        answers, submission = _sorted(answers), _sorted(submission)
        return float(skm.mean_squared_error(answers[column], submission[column]))

    return score


def _nomad(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
    answers, submission = _sorted(answers), _sorted(submission)
    errors = []
    for column in ("formation_energy_ev_natom", "bandgap_energy_ev"):
        squared = (np.log(answers[column] + 1) - np.log(submission[column] + 1)) ** 2
        errors.append(np.sqrt(squared.mean()))
    return float(np.mean(errors))


def _binary_log_loss(column: str) -> Metric:
    def score(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
        truth = _sorted(answers)[column].to_numpy()
        predicted = np.clip(_sorted(submission)[column].to_numpy(), EPSILON, 1 - EPSILON)
        return float(-np.mean(truth * np.log(predicted) + (1 - truth) * np.log(1 - predicted)))

    return score


def _one_hot_log_loss(renormalise: bool) -> Metric:
    """Multi-class log loss over every non-id column, paired by column name."""

    def score(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
        truth = _sorted(answers).iloc[:, 1:]
        predicted = _sorted(submission).iloc[:, 1:].clip(EPSILON, 1 - EPSILON)
        if renormalise:
            predicted = predicted.div(predicted.sum(axis=1), axis=0)
            return float(-np.mean(np.sum(truth * np.log(predicted), axis=1)))
        return float(-(truth * np.log(predicted)).sum(axis=1).mean())

    return score


def _exact_text(column: str) -> Metric:
    def score(answers: pd.DataFrame, submission: pd.DataFrame) -> float:
        answers, submission = _sorted(answers), _sorted(submission)
        truth = answers[column].astype(str).to_numpy()
        predicted = submission[column].astype(str).to_numpy()
        return float((truth == predicted).sum() / len(answers))

    return score


@dataclass(frozen=True)
class DojoRule:
    """How MLE-Dojo validates and scores one competition."""

    metric: Metric
    lower_is_better: bool
    ids: IdCheck = "sorted"
    columns: tuple[str, ...] | None = None
    """The exact column set required; None: the answers' columns."""


RULES: dict[str, DojoRule] = {
    "aerial-cactus-identification": DojoRule(_auc("has_cactus"), False),
    "aptos2019-blindness-detection": DojoRule(_qwk("diagnosis"), False, ids="sorted_text"),
    "denoising-dirty-documents": DojoRule(_rmse_skipping_nan, True),
    "detecting-insults-in-social-commentary": DojoRule(
        _auc("Insult", sort=False), False, ids="third_column"
    ),
    "dog-breed-identification": DojoRule(_one_hot_log_loss(renormalise=False), True),
    "dogs-vs-cats-redux-kernels-edition": DojoRule(_binary_log_loss("label"), True),
    "histopathologic-cancer-detection": DojoRule(_auc("label"), False),
    "jigsaw-toxic-comment-classification-challenge": DojoRule(_jigsaw, False, ids="ordered"),
    "leaf-classification": DojoRule(_one_hot_log_loss(renormalise=True), True),
    "mlsp-2013-birds": DojoRule(_mlsp, False),
    "new-york-city-taxi-fare-prediction": DojoRule(
        _mse("fare_amount"), True, columns=("key", "fare_amount")
    ),
    "nomad2018-predict-transparent-conductors": DojoRule(
        _nomad, True, columns=("id", "formation_energy_ev_natom", "bandgap_energy_ev")
    ),
    "plant-pathology-2020-fgvc7": DojoRule(
        _mean_auc_catching("image_id", on_error=0.5, sort=True), False
    ),
    "random-acts-of-pizza": DojoRule(_auc("requester_received_pizza"), False),
    "ranzcr-clip-catheter-line-classification": DojoRule(
        _mean_auc_catching(None, on_error=0.0, sort=False), False, ids="sorted_text"
    ),
    "tabular-playground-series-dec-2021": DojoRule(
        _accuracy("Cover_Type"), False, ids="sorted_text"
    ),
    "tabular-playground-series-may-2022": DojoRule(_auc("target"), False, ids="sorted_text"),
    "text-normalization-challenge-english-language": DojoRule(_exact_text("after"), False),
    "text-normalization-challenge-russian-language": DojoRule(_exact_text("after"), False),
    "the-icml-2013-whale-challenge-right-whale-redux": DojoRule(_whale, False),
}
"""Every lite competition MLE-Dojo carries and can score."""

UNGRADABLE: dict[str, str] = {
    "spooky-author-identification": (
        "MLE-Dojo's metric looks up a column named 'EAP,HPL,MWS', which no answers file has, "
        "so it fails every submission; grade it with -T grader=mle-bench"
    ),
}
"""Lite competitions in MLE-Dojo whose own metric cannot score any submission, and why."""


def _check_ids(rule: DojoRule, submission: pd.DataFrame, answers: pd.DataFrame) -> None:
    if rule.ids == "third_column":
        if submission.shape[1] < 3 or answers.shape[1] < 3:
            raise InvalidSubmission("MLE-Dojo compares the third column; the table has fewer")
        differs = submission[submission.columns[2]].values != answers[answers.columns[2]].values
        if np.any(differs):
            raise InvalidSubmission("third column differs from the answers' (in row order)")
        return
    if rule.ids == "sorted_text":
        _first_as_text(submission)
        _first_as_text(answers)
    if rule.ids != "ordered":
        submission = submission.sort_values(by=submission.columns[0])
        answers = answers.sort_values(by=answers.columns[0])
    differs = submission[submission.columns[0]].values != answers[answers.columns[0]].values
    if np.any(differs):
        raise InvalidSubmission("first column values do not match the answers' ids")


def _check_columns(rule: DojoRule, submission: pd.DataFrame, answers: pd.DataFrame) -> None:
    expected = set(rule.columns) if rule.columns is not None else set(answers.columns)
    missing = sorted(map(str, expected - set(submission.columns)))
    extra = sorted(map(str, set(submission.columns) - expected))
    if missing:
        raise InvalidSubmission(f"missing column(s): {', '.join(missing)}")
    if extra:
        raise InvalidSubmission(f"unexpected column(s): {', '.join(extra)}")


def dojo_validate(rule: DojoRule, submission: pd.DataFrame, answers: pd.DataFrame) -> None:
    """MLE-Dojo's ``validate_submission``; like it, may turn the id column into text in place."""
    if len(submission) != len(answers):
        raise InvalidSubmission(
            f"{len(submission)} rows in the submission, {len(answers)} in the answers"
        )
    try:
        _check_ids(rule, submission, answers)
    except InvalidSubmission:
        raise
    except Exception as exc:  # noqa: BLE001 - MLE-Dojo fails the submission on any error here
        raise InvalidSubmission(f"ids cannot be compared: {exc}") from None
    _check_columns(rule, submission, answers)


def dojo_grade(competition_id: str, submission: pd.DataFrame, answers: pd.DataFrame) -> float:
    """Validate, then score, as MLE-Dojo does; any failure is an ``InvalidSubmission``."""
    rule = RULES[competition_id]
    submission, answers = submission.copy(), answers.copy()
    dojo_validate(rule, submission, answers)
    try:
        return rule.metric(answers, submission)
    except Exception as exc:  # noqa: BLE001 - MLE-Dojo fails the submission on any metric error
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise InvalidSubmission(f"MLE-Dojo's metric failed: {reason}") from None


def _register(competition_id: str) -> None:
    @grader(GRADER_PREFIX + competition_id)
    def grade(submission: pd.DataFrame, answers: pd.DataFrame, config: CompetitionConfig) -> float:
        return dojo_grade(competition_id, submission, answers)


for _cid in RULES:
    _register(_cid)
