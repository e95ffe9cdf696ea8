"""The model zoo and its chooser: the models behind the baseline ladder.

:func:`constant` is the best constant prediction for the metric (class frequencies, the
majority class, the mean, median or geometric mean). :func:`fit_predict` fits a model per
target shape on a feature matrix: ``tuned`` picks among regularised linear models (and
gradient boosting on dense, low-dimensional features) by 3-fold cross-validation
(:func:`best_model`), otherwise a single linear model. Which features each learner gets is
the ladder's business (:mod:`.baselines`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint

Model = Any
"""A scikit-learn estimator (scikit-learn ships no type information)."""
PROB_FLOOR = 1e-3  # keeps log loss finite for models that predict hard zeros
CV_FOLDS = 3


def constant(bp: Blueprint, y: np.ndarray, n_test: int) -> np.ndarray:
    """The best constant for the metric."""
    k, metric = bp.dna.n_outputs, bp.dna.metric
    if tg.is_classification(bp):
        prior = np.bincount(y, minlength=k) / len(y)
        if bp.dna.target_kind == "label":
            prior = np.eye(k)[int(prior.argmax())]
        return np.tile(floor_proba(prior[None, :])[0], (n_test, 1))
    if bp.dna.task_type in ("multilabel", "ranking"):  # label rates; item popularity
        return np.tile(y.mean(axis=0), (n_test, 1))
    if metric == "mae":
        value = np.median(y, axis=0)
    elif "rmsle" in metric:
        value = np.expm1(np.log1p(np.clip(y, 0, None)).mean(axis=0))
    else:
        value = y.mean(axis=0)
    return np.tile(value, (n_test, 1))


def fit_predict(
    bp: Blueprint, y: np.ndarray, x: np.ndarray, x_test: np.ndarray, tuned: bool
) -> np.ndarray:
    """A model per target shape; ``tuned`` chooses among candidates by cross-validation.

    Candidates are a linear model at three strengths, plus gradient boosting on dense,
    low-dimensional features (tabular and time series). One thread: the generator runs
    tasks in parallel processes already.
    """
    with threadpool_limits(1):
        return _fit_predict(bp, y, x, x_test, tuned)


def _fit_predict(
    bp: Blueprint, y: np.ndarray, x: np.ndarray, x_test: np.ndarray, tuned: bool
) -> np.ndarray:
    k = bp.dna.n_outputs
    trees = bp.dna.modality in ("tabular", "time-series")
    sparse = bp.dna.modality == "text"
    if tg.is_classification(bp):
        models = classifiers(trees, sparse) if tuned else [logistic(1.0)]
        return floor_proba(full_proba(best_model(models, x, y, "class", k), x, y, x_test, k))
    if bp.dna.task_type in ("multilabel", "ranking"):  # ranking: one model per item
        columns = []
        for j in range(y.shape[1]):
            yj = y[:, j].astype(np.int64)
            if yj.min() == yj.max():
                columns.append(np.full(len(x_test), float(yj.mean())))
                continue
            models = classifiers(trees, sparse) if tuned else [logistic(1.0)]
            model = best_model(models, x, yj, "class", 2)
            columns.append(model.fit(x, yj).predict_proba(x_test)[:, 1])
        return np.column_stack(columns)
    log = bp.dna.positive and bp.dna.modality != "time-series"  # multiplicative noise
    target = np.log1p(np.clip(y, 0, None)) if log else y
    out = []
    for j in range(target.shape[1]):
        models = regressors(trees) if tuned else [ridge(1.0)]
        model = best_model(models, x, target[:, j], "value", 0)
        out.append(model.fit(x, target[:, j]).predict(x_test))
    pred = np.column_stack(out)
    if bp.dna.positive:  # RMSLE-family metrics reject negative values
        return np.clip(np.expm1(pred) if log else pred, 0, None)
    return pred


def classifiers(trees: bool, sparse: bool = False) -> list[Model]:
    """Logistic models at three strengths (plus gradient boosting with ``trees``)."""
    if sparse:  # TF-IDF rows are already normalised: scaling would blow up rare words
        return [LogisticRegression(C=c, max_iter=1000) for c in (0.3, 3.0, 30.0)]
    models = [logistic(0.03), logistic(0.3), logistic(3.0)]
    if trees:
        models.append(HistGradientBoostingClassifier(max_iter=60, random_state=0))
    return models


def regressors(trees: bool) -> list[Model]:
    """Ridge models at three strengths (plus gradient boosting with ``trees``)."""
    models = [ridge(0.3), ridge(10.0), ridge(300.0)]
    if trees:
        models.append(HistGradientBoostingRegressor(max_iter=60, random_state=0))
    return models


def logistic(c: float) -> Model:
    """Standardised features into a logistic regression of inverse strength ``c``."""
    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=1000))


def ridge(alpha: float) -> Model:
    """Standardised features into a ridge regression of strength ``alpha``."""
    return make_pipeline(StandardScaler(), Ridge(alpha=alpha))


def best_model(
    models: list[Model],
    x: np.ndarray,
    y: np.ndarray,
    kind: str,
    k: int,
    groups: np.ndarray | None = None,
) -> Model:
    """The candidate with the best out-of-fold log loss (classes) or squared error (values).

    ``groups`` (values only) makes each fold whole groups: rows of one group (pixels of one
    page) share their errors, and row folds would let a model that memorises groups win."""
    if len(models) == 1:
        return models[0]
    if groups is not None:
        cv = GroupKFold(min(CV_FOLDS, len(np.unique(groups))))
    elif kind == "class":
        counts = np.bincount(y, minlength=max(k, 2))
        folds = min(CV_FOLDS, int(counts[counts > 0].min()))
        if folds < 2:
            return models[0]
        cv = StratifiedKFold(folds, shuffle=True, random_state=0)
    else:
        cv = KFold(CV_FOLDS, shuffle=True, random_state=0)
    losses = []
    for model in models:
        if kind == "class":
            proba = cross_val_predict(model, x, y, cv=cv, method="predict_proba")
            seen = np.unique(y)
            picked = proba[np.arange(len(y)), np.searchsorted(seen, y)]
            losses.append(-np.mean(np.log(np.clip(picked, 1e-6, 1))))
        else:
            out_of_fold = cross_val_predict(model, x, y, cv=cv, groups=groups)
            losses.append(np.mean((out_of_fold - y) ** 2))
    return models[int(np.argmin(losses))]


def full_proba(
    model: Model, x: np.ndarray, y: np.ndarray, x_test: np.ndarray, k: int
) -> np.ndarray:
    """predict_proba over all k classes, even those missing from the training rows."""
    model.fit(x, y)
    out = np.zeros((len(x_test), k))
    out[:, model.classes_] = model.predict_proba(x_test)
    return out


def floor_proba(proba: np.ndarray) -> np.ndarray:
    """Probabilities of at least PROB_FLOOR, renormalised per row."""
    proba = np.clip(proba, PROB_FLOOR, None)
    return proba / proba.sum(axis=1, keepdims=True)
