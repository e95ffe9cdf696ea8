"""MLOps Engineer: grader options and noise-aware milestones placed from the baseline ladder.

Scores are in "goodness" g (the score, negated when lower is better). Each learner's
submission is graded by the real grader on ``N_BOOTSTRAP`` resamples of the test rows, which
gives the test-set noise sigma of a score (the larger of the generic and structure-aware
learners' bootstrap standard deviations). Then:

* median = generic - 0.5 sigma: a rule-agnostic, CV-tuned model is above median, no more;
* gold = structure - 0.5 sigma: the rule's form applied to the noisy public features reaches
  gold (the answers file never sets a milestone);
* bronze and silver split median..gold in three equal bands.

The task is rejected (``NoisyMilestones``) unless every band between adjacent milestones is
at least ``MIN_BAND_SIGMA`` sigma wide and the best constant is at least ``MIN_CONSTANT_GAP``
sigma below the median: a medal must mean more than a lucky test draw.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.errors import InvalidSubmission
from sandmle.harness.competition import CompetitionConfig, Thresholds, metric_direction
from sandmle.harness.grading.metrics import MetricFn
from sandmle.harness.grading.registry import (
    GradeFn,
    get_grader,
    standard_arrays,
    standard_grader,
)

DECIMALS = 5
N_BOOTSTRAP = 60
MIN_BAND_SIGMA = 2.0
MIN_CONSTANT_GAP = 1.0
MARGIN_SIGMA = 0.5
RULE = (
    "sigma=max bootstrap sd(generic, structure); median=generic-0.5sigma; "
    "gold=structure-0.5sigma; bronze/silver split median..gold in thirds; "
    "reject unless each band >= 2 sigma and constant <= median-1 sigma"
)


class NoisyMilestones(ValueError):
    """The ladder does not leave room for milestones wider than the test-set noise."""


class LadderScore(BaseModel):
    """One learner's graded score and its bootstrap spread over the test rows."""

    model_config = ConfigDict(extra="forbid")

    score: float | None
    """Score on the full test set, as graded."""
    sd: float
    """Bootstrap standard deviation of the score."""
    q05: float | None
    """5% bootstrap quantile."""
    q95: float | None
    """95% bootstrap quantile."""


class Ladder(BaseModel):
    """Every baseline's score and spread (``generation/ladder.json``)."""

    model_config = ConfigDict(extra="forbid")

    scores: dict[str, LadderScore]
    """By learner: constant, generic, structure, oracle."""
    is_lower_better: bool
    """Direction of the metric."""
    sigma: float
    """Test-set noise used for the bands."""


class Milestones(BaseModel):
    """The MLOps Engineer's output: grader options and thresholds, with how they were placed."""

    model_config = ConfigDict(extra="forbid")

    thresholds: Thresholds
    """Gold/silver/bronze/median in the metric's units."""
    is_lower_better: bool
    """Direction of the metric."""
    grader_options: dict[str, Any]
    """Options of the ``standard`` grader."""
    sigma: float
    """Test-set noise (bootstrap sd) the bands are measured in."""
    bands_in_sigma: list[float]
    """Widths of median->bronze, bronze->silver, silver->gold, in sigma."""
    constant_gap_in_sigma: float
    """How far the best constant sits below the median, in sigma."""
    rule: str = RULE
    """The placement rule, in one line."""


def bootstrap_ladder(
    config: CompetitionConfig,
    answers: pd.DataFrame,
    submissions: dict[str, pd.DataFrame],
    rng: np.random.Generator,
    groups: np.ndarray | None = None,
) -> Ladder:
    """Grade each submission on the full test set and on bootstrap resamples of its rows;
    with ``groups`` (one key per answer row), whole groups are resampled, since rows of one
    group (a page's pixels, a sentence's tokens) share their errors."""
    grade = get_grader(config.grader.name)
    id_column = config.id_columns[0]
    draws = [_draw(rng, len(answers), groups) for _ in range(N_BOOTSTRAP)]
    order = answers[[id_column]].reset_index(drop=True)
    scores: dict[str, LadderScore] = {}
    for name, submission in submissions.items():
        aligned = order.merge(submission, on=id_column, how="left")
        full = _score(grade, aligned, answers, config)
        samples = _bootstrap_scores(grade, aligned, answers, config, draws)
        scores[name] = LadderScore(
            score=full,
            sd=float(np.std(samples)) if len(samples) > 1 else math.inf,
            q05=float(np.quantile(samples, 0.05)) if samples else None,
            q95=float(np.quantile(samples, 0.95)) if samples else None,
        )
    sigma = max(scores[name].sd for name in ("generic", "structure") if name in scores)
    return Ladder(scores=scores, is_lower_better=metric_direction(config), sigma=sigma)


def _bootstrap_scores(
    grade: GradeFn,
    aligned: pd.DataFrame,
    answers: pd.DataFrame,
    config: CompetitionConfig,
    draws: list[np.ndarray],
) -> list[float]:
    """The valid scores of the resamples. The standard grader checks and converts the whole
    table once, then its metric runs on each resample's rows: the values of grading every
    resampled table (bit for bit), without ~250 pandas alignments per submission."""
    arrays = _standard_arrays(grade, aligned, answers, config)
    id_column = config.id_columns[0]
    samples = []
    for idx in draws:
        if arrays is None:
            value = _score(
                grade,
                _resample(aligned, idx, id_column),
                _resample(answers, idx, id_column),
                config,
            )
        else:
            value = _metric(*arrays, idx)
        if value is not None:
            samples.append(value)
    return samples


def _standard_arrays(
    grade: GradeFn, aligned: pd.DataFrame, answers: pd.DataFrame, config: CompetitionConfig
) -> tuple[MetricFn, np.ndarray, np.ndarray] | None:
    """The metric and its inputs in ``answers``' row order, for the standard grader when the
    whole table is valid (a subset of valid rows is valid); else None (grade each resample)."""
    if grade is not standard_grader:
        return None
    everything = np.arange(len(answers))
    id_column = config.id_columns[0]
    try:
        return standard_arrays(
            _resample(aligned, everything, id_column),
            _resample(answers, everything, id_column),
            config,
        )
    except InvalidSubmission:
        return None


def _metric(fn: MetricFn, y_true: np.ndarray, y_pred: np.ndarray, idx: np.ndarray) -> float | None:
    try:
        return float(fn(y_true[idx], y_pred[idx]))
    except InvalidSubmission:  # e.g. a resample with one class only: AUC undefined
        return None


def _draw(rng: np.random.Generator, n: int, groups: np.ndarray | None) -> np.ndarray:
    """Row indices of one bootstrap resample: rows, or whole groups drawn with replacement."""
    if groups is None:
        return rng.integers(0, n, n)
    keys, codes = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(codes == k) for k in range(len(keys))]
    picked = rng.integers(0, len(keys), len(keys))
    return np.concatenate([members[k] for k in picked])


def _resample(frame: pd.DataFrame, idx: np.ndarray, id_column: str) -> pd.DataFrame:
    """Rows ``idx`` with fresh unique ids, so repeated rows stay distinct for the grader."""
    out = frame.iloc[idx].reset_index(drop=True)
    out[id_column] = np.arange(len(out))
    return out


def _score(
    grade: GradeFn, submission: pd.DataFrame, answers: pd.DataFrame, config: CompetitionConfig
) -> float | None:
    try:
        return float(grade(submission.copy(), answers.copy(), config))
    except InvalidSubmission:  # e.g. a resample with one class only: AUC undefined
        return None


def place_milestones(bp: Blueprint, ladder: Ladder) -> Milestones:
    """Thresholds from the ladder by the documented rule; raises NoisyMilestones."""
    sign = -1.0 if ladder.is_lower_better else 1.0
    g = {k: sign * v.score for k, v in ladder.scores.items() if v.score is not None}
    missing = {"constant", "generic", "structure"} - set(g)
    if missing:
        raise NoisyMilestones(f"no valid score for {', '.join(sorted(missing))}")
    sigma = ladder.sigma
    if not math.isfinite(sigma) or sigma <= 0:
        raise NoisyMilestones(f"test-set noise could not be estimated (sigma={sigma})")
    median = g["generic"] - MARGIN_SIGMA * sigma
    gold = g["structure"] - MARGIN_SIGMA * sigma
    band = (gold - median) / 3
    values = {"gold": gold, "silver": median + 2 * band, "bronze": median + band, "median": median}
    thresholds = {k: round(sign * v, DECIMALS) + 0.0 for k, v in values.items()}
    goodness = [sign * thresholds[k] for k in ("median", "bronze", "silver", "gold")]
    bands = [round((b - a) / sigma, 3) for a, b in zip(goodness, goodness[1:], strict=False)]
    gap = round((goodness[0] - g["constant"]) / sigma, 3)
    if min(bands) < MIN_BAND_SIGMA:
        raise NoisyMilestones(
            f"bands {bands} sigma (sigma={sigma:.4g}): structure-aware "
            f"{ladder.scores['structure'].score} is too close to generic {ladder.scores['generic'].score}"
        )
    if gap < MIN_CONSTANT_GAP:
        raise NoisyMilestones(
            f"best constant {ladder.scores['constant'].score} is only {gap} sigma below the median"
        )
    return Milestones(
        thresholds=Thresholds(**thresholds),
        is_lower_better=ladder.is_lower_better,
        grader_options=grader_options(bp),
        sigma=round(sigma, 6),
        bands_in_sigma=bands,
        constant_gap_in_sigma=gap,
    )


def grader_options(bp: Blueprint) -> dict[str, Any]:
    """Probability columns must lie in [0, 1]; class probabilities must also sum to 1."""
    options: dict[str, Any] = {"extra_columns": "ignore"}
    if bp.dna.target_kind == "prob":
        options["probabilities"] = True
        options["row_sum"] = bp.dna.task_type == "multiclass"
    return options
