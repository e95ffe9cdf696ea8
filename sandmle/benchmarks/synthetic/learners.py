"""The baseline ladder: three learners that see only the public files (and the rule's shape).

* ``constant``: the best constant prediction for the metric (class frequencies, the
  majority class, the mean, median or geometric mean);
* ``generic``: knows nothing of the rule; picks a model for the modality's standard
  features by 3-fold cross-validation (regularised linear model or gradient boosting);
* ``structure``: is told the rule's *form* (``rule.params["structure"]``: which columns,
  terms, keywords, periods) but not its weights, applies it to the noisy public features,
  and fits the weights on ``train.csv``. It never reads the answers.

The same code runs inside the generator (to place the milestones) and in
``bench/synth_difficulty.py`` (from the files on disk), so both see identical inputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import HiddenRule

LEARNERS = ("constant", "generic", "structure")
PROB_FLOOR = 1e-3  # keeps log loss finite for models that predict hard zeros
CV_FOLDS = 3


@dataclass
class PublicData:
    """What an agent sees: train.csv, test.csv and extra public files (images)."""

    train: pd.DataFrame
    test: pd.DataFrame
    files: Mapping[str, bytes] = field(default_factory=dict)

    @classmethod
    def from_folder(cls, public: Path) -> PublicData:
        files = {
            p.relative_to(public).as_posix(): p.read_bytes()
            for p in sorted(public.rglob("*"))
            if p.is_file() and p.suffix not in (".csv", ".md")
        }
        return cls(pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv"), files)


def ladder(bp: Blueprint, rule: HiddenRule, data: PublicData) -> dict[str, np.ndarray]:
    """Canonical test predictions of the learners (``structure`` only when the rule has a form)."""
    from sandmle.benchmarks.synthetic.modalities import featurizer, hook, structurer

    own = hook(bp.dna.modality, bp.dna.task_type, "ladder")
    if own is not None:  # predictions that are not a float matrix (seq2seq texts)
        return own(bp, rule, data)
    y = tg.encode_train_targets(bp, data.train)
    x_train, x_test = featurizer(bp.dna.modality, bp.dna.task_type)(bp, data)
    out = {
        "constant": constant(bp, y, len(data.test)),
        "generic": fit_predict(bp, y, x_train, x_test, tuned=True),
    }
    if "structure" in rule.params:  # a rule written by a model may not say its form
        s_train, s_test = structurer(bp.dna.modality, bp.dna.task_type)(bp, rule, data)
        out["structure"] = fit_predict(bp, y, s_train, s_test, tuned=False)
    return out


def constant(bp: Blueprint, y: np.ndarray, n_test: int) -> np.ndarray:
    """The best constant for the metric."""
    k, metric = bp.dna.n_outputs, bp.dna.metric
    if tg.is_classification(bp):
        prior = np.bincount(y, minlength=k) / len(y)
        if bp.dna.target_kind == "label":
            prior = np.eye(k)[int(prior.argmax())]
        return np.tile(_floor(prior[None, :])[0], (n_test, 1))
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
        models = _classifiers(trees, sparse) if tuned else [_logistic(1.0)]
        return _floor(_full_proba(_best(models, x, y, "class", k), x, y, x_test, k))
    if bp.dna.task_type in ("multilabel", "ranking"):  # ranking: one model per item
        columns = []
        for j in range(y.shape[1]):
            yj = y[:, j].astype(np.int64)
            if yj.min() == yj.max():
                columns.append(np.full(len(x_test), float(yj.mean())))
                continue
            models = _classifiers(trees, sparse) if tuned else [_logistic(1.0)]
            model = _best(models, x, yj, "class", 2)
            columns.append(model.fit(x, yj).predict_proba(x_test)[:, 1])
        return np.column_stack(columns)
    log = bp.dna.positive and bp.dna.modality != "time-series"  # multiplicative noise
    target = np.log1p(np.clip(y, 0, None)) if log else y
    out = []
    for j in range(target.shape[1]):
        models = _regressors(trees) if tuned else [_ridge(1.0)]
        model = _best(models, x, target[:, j], "value", 0)
        out.append(model.fit(x, target[:, j]).predict(x_test))
    pred = np.column_stack(out)
    if bp.dna.positive:  # RMSLE-family metrics reject negative values
        return np.clip(np.expm1(pred) if log else pred, 0, None)
    return pred


def _classifiers(trees: bool, sparse: bool = False) -> list:
    if sparse:  # TF-IDF rows are already normalised: scaling would blow up rare words
        return [LogisticRegression(C=c, max_iter=1000) for c in (0.3, 3.0, 30.0)]
    models = [_logistic(0.03), _logistic(0.3), _logistic(3.0)]
    if trees:
        models.append(HistGradientBoostingClassifier(max_iter=60, random_state=0))
    return models


def _regressors(trees: bool) -> list:
    models = [_ridge(0.3), _ridge(10.0), _ridge(300.0)]
    if trees:
        models.append(HistGradientBoostingRegressor(max_iter=60, random_state=0))
    return models


def _logistic(c: float):
    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=1000))


def _ridge(alpha: float):
    return make_pipeline(StandardScaler(), Ridge(alpha=alpha))


def _best(
    models: list, x: np.ndarray, y: np.ndarray, kind: str, k: int, groups: np.ndarray | None = None
):
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


def _full_proba(model, x: np.ndarray, y: np.ndarray, x_test: np.ndarray, k: int) -> np.ndarray:
    """predict_proba over all k classes, even those missing from the training rows."""
    model.fit(x, y)
    out = np.zeros((len(x_test), k))
    out[:, model.classes_] = model.predict_proba(x_test)
    return out


def _floor(proba: np.ndarray) -> np.ndarray:
    proba = np.clip(proba, PROB_FLOOR, None)
    return proba / proba.sum(axis=1, keepdims=True)
