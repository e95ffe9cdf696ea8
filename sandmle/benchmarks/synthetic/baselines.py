"""Baseline models (scikit-learn) whose scores place the milestones.

dummy: class frequencies or the mean; linear: logistic or ridge regression on standardised
features; strong: a random forest; oracle: the hidden rule itself. All return canonical
predictions (see ``targets``); random forests use a fixed random_state, so scores repeat.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask
from sandmle.benchmarks.synthetic.modalities import featurizer

BASELINES = ("dummy", "linear", "strong", "oracle")
PROB_FLOOR = 1e-3  # keeps log loss finite for tree models that predict hard zeros
N_TREES = 120


class BaselineScores(BaseModel):
    """Scores of the four baselines on the test set, as graded (5 decimals)."""

    model_config = ConfigDict(extra="forbid")

    dummy: float | None
    """Class frequencies / training mean."""
    linear: float | None
    """Logistic / ridge regression on standardised features."""
    strong: float | None
    """Random forest on the same features."""
    oracle: float | None
    """The hidden rule's own predictions."""
    is_lower_better: bool
    """Direction of the metric."""

    def as_dict(self) -> dict[str, float | None]:
        return {name: getattr(self, name) for name in BASELINES}


def predict_baselines(bp: Blueprint, task: DevelopedTask) -> dict[str, np.ndarray]:
    """Canonical test predictions of every baseline."""
    x_train, x_test = featurizer(bp.dna.modality)(bp, task)
    y = tg.encode_train_targets(bp, task.train)
    if tg.is_classification(bp):
        predictions = _classifiers(x_train, y, x_test, bp.dna.n_outputs)
    elif bp.dna.task_type == "multilabel":
        predictions = _multilabel(x_train, y.astype(np.int64), x_test)
    else:
        predictions = _regressors(x_train, y, x_test, bp.dna.positive)
    predictions["oracle"] = task.oracle
    return predictions


def _classifiers(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, k: int) -> dict[str, np.ndarray]:
    prior = np.bincount(y, minlength=k) / len(y)
    linear = make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=500))
    strong = RandomForestClassifier(N_TREES, min_samples_leaf=2, random_state=0, n_jobs=1)
    return {
        "dummy": _floor(np.tile(prior, (len(x_test), 1))),
        "linear": _floor(_full_proba(linear.fit(x, y), x_test, k)),
        "strong": _floor(_full_proba(strong.fit(x, y), x_test, k)),
    }


def _full_proba(model, x_test: np.ndarray, k: int) -> np.ndarray:
    """predict_proba over all k classes, even those missing from the training rows."""
    out = np.zeros((len(x_test), k))
    out[:, model.classes_] = model.predict_proba(x_test)
    return out


def _floor(proba: np.ndarray) -> np.ndarray:
    proba = np.clip(proba, PROB_FLOOR, None)
    return proba / proba.sum(axis=1, keepdims=True)


def _multilabel(x: np.ndarray, y: np.ndarray, x_test: np.ndarray) -> dict[str, np.ndarray]:
    prior = y.mean(axis=0)
    linear = np.column_stack([_logistic_column(x, y[:, j], x_test) for j in range(y.shape[1])])
    forest = RandomForestClassifier(N_TREES, min_samples_leaf=2, random_state=0, n_jobs=1).fit(x, y)
    probas = forest.predict_proba(x_test)  # one (n, classes) array per label
    strong = np.column_stack(
        [_positive(p, list(c)) for p, c in zip(probas, forest.classes_, strict=True)]
    )
    return {"dummy": np.tile(prior, (len(x_test), 1)), "linear": linear, "strong": strong}


def _positive(proba: np.ndarray, classes: list) -> np.ndarray:
    return proba[:, classes.index(1)] if 1 in classes else np.zeros(len(proba))


def _logistic_column(x: np.ndarray, y: np.ndarray, x_test: np.ndarray) -> np.ndarray:
    if y.min() == y.max():  # one class in training: predict its frequency
        return np.full(len(x_test), float(y.mean()))
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.5, max_iter=500)).fit(x, y)
    return model.predict_proba(x_test)[:, 1]


def _regressors(
    x: np.ndarray, y: np.ndarray, x_test: np.ndarray, positive: bool
) -> dict[str, np.ndarray]:
    linear = make_pipeline(StandardScaler(), Ridge(alpha=1.0)).fit(x, y)
    strong = RandomForestRegressor(N_TREES, min_samples_leaf=2, random_state=0, n_jobs=1)
    strong.fit(x, y.ravel() if y.shape[1] == 1 else y)
    predictions = {
        "dummy": np.tile(y.mean(axis=0), (len(x_test), 1)),
        "linear": linear.predict(x_test).reshape(len(x_test), -1),
        "strong": strong.predict(x_test).reshape(len(x_test), -1),
    }
    if positive:  # RMSLE-family metrics reject negative predictions
        predictions = {name: np.clip(p, 0, None) for name, p in predictions.items()}
    return predictions
