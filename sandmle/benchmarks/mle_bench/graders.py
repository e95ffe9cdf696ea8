"""One grader per MLE-bench-lite competition, each the prose of its grading-spec section (§3.x).

Registered as ``mle-bench-lite/<id>``; importing this module registers them (entry point group
``sandmle.graders``). Each is ``(submission, answers, config) -> score``, with the tables parsed
as MLE-bench parses them. The return type picks the rounding rule (grading spec §1.1.4): numpy
float64 for ROC-AUC, kappa, RMSE, RMSLE and numpy means; a Python float for log loss and
accuracy, as scikit-learn 1.5 returns them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.mle_bench.checks import (
    accuracy_inputs,
    auc_inputs,
    one_hot_inputs,
    probabilities,
    require_class_labels,
    require_columns,
    require_equal_ids,
    require_exact_columns,
    require_row_count,
    require_same_id_set,
    require_unit_interval,
    sort_by,
    to_numeric,
)
from sandmle.benchmarks.mle_bench.competitions import get_competition, grader_name
from sandmle.benchmarks.mle_bench.upstream import NATIVE_GRADER  # noqa: F401  (registers it)
from sandmle.errors import InvalidSubmission
from sandmle.harness.competition import CompetitionConfig
from sandmle.harness.grading.metrics import (
    accuracy,
    binary_log_loss,
    mean_columnwise_rmsle,
    multiclass_log_loss,
    quadratic_weighted_kappa,
    rmse,
    roc_auc,
)
from sandmle.harness.grading.registry import grader

Frame = pd.DataFrame


def _targets(competition_id: str) -> list[str]:
    return list(get_competition(competition_id).target_columns)


# ---- single-column ROC-AUC (H-AUC) ----


@grader(grader_name("aerial-cactus-identification"))
def aerial_cactus(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.1: H-AUC on id / has_cactus."""
    return roc_auc(*auc_inputs(submission, answers, "id", "has_cactus"))


@grader(grader_name("detecting-insults-in-social-commentary"))
def detecting_insults(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.4: H-AUC on Comment (the comment text is the id) / Insult, over all rows."""
    return roc_auc(*auc_inputs(submission, answers, "Comment", "Insult"))


@grader(grader_name("histopathologic-cancer-detection"))
def histopathologic(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.7: H-AUC on id / label."""
    return roc_auc(*auc_inputs(submission, answers, "id", "label"))


@grader(grader_name("mlsp-2013-birds"))
def mlsp_birds(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.10: one ROC-AUC pooled over every (recording, species) Id."""
    return roc_auc(*auc_inputs(submission, answers, "Id", "Probability"))


@grader(grader_name("random-acts-of-pizza"))
def random_acts_of_pizza(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.14: H-AUC on request_id / requester_received_pizza."""
    return roc_auc(*auc_inputs(submission, answers, "request_id", "requester_received_pizza"))


@grader(grader_name("siim-isic-melanoma-classification"))
def siim_isic(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.16: H-AUC on image_name / target."""
    return roc_auc(*auc_inputs(submission, answers, "image_name", "target"))


@grader(grader_name("tabular-playground-series-may-2022"))
def tabular_may_2022(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.19: H-AUC on id / target."""
    return roc_auc(*auc_inputs(submission, answers, "id", "target"))


@grader(grader_name("the-icml-2013-whale-challenge-right-whale-redux"))
def right_whale_redux(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.22: H-AUC on clip / probability."""
    return roc_auc(*auc_inputs(submission, answers, "clip", "probability"))


# ---- several ROC-AUCs ----


@grader(grader_name("jigsaw-toxic-comment-classification-challenge"))
def jigsaw_toxic(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.8: drop the answers' -1 rows (and the submission's rows with those ids), then pair
    column k of the answers with column k of the submission *by position* (a reordered
    submission is scored misaligned, as in MLE-bench); mean of the six ROC-AUCs."""
    labels = _targets("jigsaw-toxic-comment-classification-challenge")
    require_columns(submission, ["id", *labels])
    require_row_count(submission, answers)
    sub = submission.set_index("id").sort_index()
    ans = answers.set_index("id").sort_index()
    unknown = ~sub.index.isin(ans.index)
    if unknown.any():
        raise InvalidSubmission(f"{int(unknown.sum())} id(s) not in the test set")
    scored = ans[labels].sum(axis=1) >= 0
    y_true = ans[scored.to_numpy()]
    y_score = sub[scored.loc[sub.index].to_numpy()]
    if y_score.shape != y_true.shape:
        raise InvalidSubmission(
            f"scored part of the submission is {y_score.shape[0]} rows x {y_score.shape[1]} "
            f"columns, expected {y_true.shape[0]} x {y_true.shape[1]} (extra columns?)"
        )
    y_true_values, y_score_values = y_true.to_numpy(), y_score.to_numpy()
    aucs = [roc_auc(y_true_values[:, k], y_score_values[:, k]) for k in range(y_true.shape[1])]
    return np.float64(np.mean(aucs))  # a float (float64); mypy reads np.mean as floating


@grader(grader_name("plant-pathology-2020-fgvc7"))
def plant_pathology(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.13: exactly image_id + the 4 classes; mean of the 4 ROC-AUCs (no range check)."""
    classes = _targets("plant-pathology-2020-fgvc7")
    require_row_count(submission, answers)
    require_exact_columns(submission, ["image_id", *classes])
    sub, ans = sort_by(submission, "image_id"), sort_by(answers, "image_id")
    require_equal_ids(sub, ans, "image_id")
    aucs = [roc_auc(ans[c].to_numpy(), sub[c].to_numpy()) for c in classes]
    return np.float64(np.mean(aucs))  # a float (float64); mypy reads np.mean as floating


@grader(grader_name("ranzcr-clip-catheter-line-classification"))
def ranzcr_clip(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.15: H-AUC for each of the 9 graded labels (the other 2 are ignored); their mean."""
    labels = _targets("ranzcr-clip-catheter-line-classification")
    require_columns(submission, labels)
    require_row_count(submission, answers)
    aucs = [roc_auc(*auc_inputs(submission, answers, "StudyInstanceUID", c)) for c in labels]
    return np.float64(np.mean(aucs))  # a float (float64); mypy reads np.mean as floating


# ---- log loss ----


def _one_hot_log_loss(submission: Frame, answers: Frame) -> float:
    y_true, y_pred = one_hot_inputs(submission, answers, "id")
    return multiclass_log_loss(y_true, y_pred.to_numpy(np.float64))


@grader(grader_name("dog-breed-identification"))
def dog_breed(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.5: the 120 breed columns (extra columns ignored), rows summing to 1; log loss."""
    breeds = _targets("dog-breed-identification")
    require_columns(submission, [*breeds, "id"])
    require_row_count(submission, answers)
    probabilities(submission[breeds])
    return _one_hot_log_loss(submission, answers)


@grader(grader_name("leaf-classification"))
def leaf_classification(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.9: exactly id + the 99 species (no extra columns), rows summing to 1; log loss."""
    species = _targets("leaf-classification")
    require_exact_columns(submission, ["id", *species])
    require_row_count(submission, answers)
    probabilities(submission[species])
    return _one_hot_log_loss(submission, answers)


@grader(grader_name("spooky-author-identification"))
def spooky_author(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.17: 4 columns; the 3 after the *first* (by position, so id must come first) are
    probabilities summing to 1 per row; log loss."""
    expected = (len(answers), 4)
    if submission.shape != expected:
        raise InvalidSubmission(f"submission is {submission.shape}, expected {expected}")
    probabilities(submission.iloc[:, 1:])
    return _one_hot_log_loss(submission, answers)


@grader(grader_name("dogs-vs-cats-redux-kernels-edition"))
def dogs_vs_cats(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.6: same id set, labels in [0, 1]; binary log loss of P(dog), eps-clipped."""
    require_columns(submission, ["id", "label"])
    require_same_id_set(submission, answers, "id")
    require_row_count(submission, answers)
    labels = to_numeric(submission["label"])
    if labels.isna().any():
        raise InvalidSubmission("column 'label' has missing values")
    require_unit_interval(labels)
    sub = sort_by(submission.assign(label=labels), "id")
    ans = sort_by(answers, "id")
    return binary_log_loss(ans["label"].to_numpy(), sub["label"].to_numpy())


# ---- labels and text ----


@grader(grader_name("aptos2019-blindness-detection"))
def aptos_blindness(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.2: same id_code set; quadratic kappa with weights on label *positions*."""
    require_columns(submission, ["diagnosis"])
    if submission.empty:
        raise InvalidSubmission("submission has no rows")
    require_columns(submission, ["id_code"])
    require_same_id_set(submission, answers, "id_code")
    require_row_count(submission, answers)
    require_class_labels(submission["diagnosis"])
    sub, ans = sort_by(submission, "id_code"), sort_by(answers, "id_code")
    # MLE-bench passes the submission first; the order changes the float sums.
    return quadratic_weighted_kappa(sub["diagnosis"].to_numpy(), ans["diagnosis"].to_numpy())


@grader(grader_name("tabular-playground-series-dec-2021"))
def tabular_dec_2021(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.18: H-ACC on Id / Cover_Type (a text column scores 0.0, as in the reference)."""
    return accuracy(*accuracy_inputs(submission, answers, "Id", "Cover_Type"))


def _as_text(values: np.ndarray) -> np.ndarray:
    # pandas 2.2's astype(str): NaN becomes "nan", numbers their shortest repr ("1.5", "1").
    return np.array([str(v) for v in values], dtype=object)


def _text_normalization(submission: Frame, answers: Frame) -> float:
    """§3.20: H-ACC checks, then exact equality of the `after` texts as pandas parsed them."""
    y_true, y_pred = accuracy_inputs(submission, answers, "id", "after")
    return accuracy(_as_text(y_true), _as_text(y_pred))


@grader(grader_name("text-normalization-challenge-english-language"))
def text_normalization_english(
    submission: Frame, answers: Frame, config: CompetitionConfig
) -> float:
    """§3.20: fraction of tokens whose `after` text is identical."""
    return _text_normalization(submission, answers)


@grader(grader_name("text-normalization-challenge-russian-language"))
def text_normalization_russian(
    submission: Frame, answers: Frame, config: CompetitionConfig
) -> float:
    """§3.21: as English."""
    return _text_normalization(submission, answers)


# ---- regression ----


@grader(grader_name("denoising-dirty-documents"))
def denoising_documents(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.3: RMSE over pixels aligned by sorted id; predictions are not clipped."""
    require_columns(submission, ["id", "value"])
    try:
        submission["value"].astype(np.float64)
    except (ValueError, TypeError):
        raise InvalidSubmission("column 'value' is not numeric") from None
    require_row_count(submission, answers)
    sub, ans = sort_by(submission, "id"), sort_by(answers, "id")
    require_equal_ids(sub, ans, "id")
    return rmse(ans["value"].to_numpy(), sub["value"].to_numpy())


@grader(grader_name("new-york-city-taxi-fare-prediction"))
def nyc_taxi_fare(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.11: both tables sorted by key, then RMSE by position; keys are never compared."""
    require_columns(submission, ["fare_amount", "key"])
    require_row_count(submission, answers)
    sub, ans = sort_by(submission, "key"), sort_by(answers, "key")
    return rmse(ans["fare_amount"].to_numpy(), sub["fare_amount"].to_numpy())


@grader(grader_name("nomad2018-predict-transparent-conductors"))
def nomad2018(submission: Frame, answers: Frame, config: CompetitionConfig) -> float:
    """§3.12: row i against row i (no ids); mean of the two columns' RMSLEs."""
    targets = _targets("nomad2018-predict-transparent-conductors")
    require_columns(submission, targets)
    require_row_count(submission, answers)
    return mean_columnwise_rmsle(answers[targets].to_numpy(), submission[targets].to_numpy())
