"""The AutoML program's models: scikit-learn models by strength, and canonical predictions.

A part of the one program ``policies/automl.py`` joins (see ``automl/__init__.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .settings import SEED, Spec

# ---------------------------------------------------------------- models


def make_model(level: int, classify: bool, info: dict[str, Any]) -> Any:
    """A scikit-learn model of strength ``level`` (a trend plus trees for forecasting)."""
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if level <= 0:
        return DummyClassifier(strategy="prior") if classify else DummyRegressor()
    linear = make_pipeline(
        StandardScaler(), LogisticRegression(C=0.5, max_iter=3000) if classify else Ridge(alpha=3.0)
    )
    if level == 1:
        return linear
    if level == 2:
        forest = (RandomForestClassifier if classify else RandomForestRegressor)(
            n_estimators=300, min_samples_leaf=2, random_state=SEED, n_jobs=1
        )
        return forest if classify or not info["time"] else TrendPlus(linear, forest)
    boost = (GradientBoostingClassifier if classify else GradientBoostingRegressor)(
        n_estimators=150, learning_rate=0.05, max_depth=3, subsample=0.8, random_state=SEED
    )
    return boost if classify or not info["time"] else TrendPlus(linear, boost)


class TrendPlus:
    """A linear trend, then a tree model on its residuals (trees cannot extrapolate in time)."""

    def __init__(self, trend: Any, residual: Any) -> None:
        self.trend, self.residual = trend, residual

    def fit(self, x: np.ndarray, y: np.ndarray) -> TrendPlus:
        self.trend.fit(x, y)
        self.residual.fit(x, y - self.trend.predict(x))
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.trend.predict(x) + 0.5 * self.residual.predict(x)


def fit_predict(
    level: int,
    spec: Spec,
    x_train: np.ndarray,
    y: np.ndarray,
    x_test: np.ndarray,
    info: dict[str, Any],
) -> np.ndarray:
    """Canonical predictions: class probabilities, label probabilities, or values."""
    if spec.kind in ("binary", "multiclass"):
        model = make_model(level, True, info).fit(x_train, y)
        proba = model.predict_proba(x_test)
        out = np.zeros((len(x_test), len(spec.classes)))
        for j, label in enumerate(model.classes_):
            out[:, spec.classes.index(label)] = proba[:, j]
        return out
    columns = []
    for j in range(y.shape[1]):
        target = y[:, j]
        if spec.kind == "multilabel":
            if len(np.unique(target)) < 2:
                columns.append(np.full(len(x_test), float(target.mean())))
            else:
                columns.append(
                    make_model(level, True, info).fit(x_train, target).predict_proba(x_test)[:, 1]
                )
        else:
            fitted = make_model(level, False, info).fit(
                x_train, np.log1p(target) if spec.log_target else target
            )
            pred = fitted.predict(x_test)
            columns.append(np.expm1(pred).clip(0) if spec.log_target else pred)
    return np.column_stack(columns)
