"""The AutoML program's validation and output: target cells, the metric, folds, the level,
and the submission file.

A part of the one program ``policies/automl.py`` joins (see ``automl/__init__.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .models import fit_predict
from .settings import LEVEL, LEVEL_NAMES, LOWER_IS_BETTER, PROB_EPS, SEED, SUBMISSION_DIR, Spec

# ---------------------------------------------------------------- validation and output


def labels_of(spec: Spec, train: pd.DataFrame) -> np.ndarray:
    if spec.kind in ("binary", "multiclass"):
        values = train[spec.label_cols[0]].to_numpy()
        spec.classes = sorted(pd.unique(values).tolist(), key=lambda v: (str(type(v)), v))
        return values
    return train[spec.label_cols].astype(float).to_numpy()


def cells(spec: Spec, canon: np.ndarray) -> np.ndarray:
    """Canonical predictions → the submission's target cells."""
    if spec.output == "label":
        return np.array(spec.classes, dtype=object)[canon.argmax(axis=1)].reshape(-1, 1)
    if spec.output == "onehot":
        names = [str(c) for c in spec.classes]
        out = np.column_stack(
            [canon[:, names.index(t)] if t in names else np.zeros(len(canon)) for t in spec.targets]
        )
        out = (1 - PROB_EPS) * out + PROB_EPS / out.shape[1]
        return out / out.sum(axis=1, keepdims=True)
    if spec.kind == "binary":
        return ((1 - PROB_EPS) * canon[:, -1:] + PROB_EPS / 2).reshape(-1, 1)
    if spec.kind == "multilabel":
        return (1 - PROB_EPS) * canon + PROB_EPS / 2
    return canon


def truth_cells(spec: Spec, y: np.ndarray) -> np.ndarray:
    if spec.output == "onehot":
        return np.column_stack([(y.astype(str) == t).astype(float) for t in spec.targets])
    if spec.output == "prob" and spec.kind == "binary":
        return (y == spec.classes[-1]).astype(float).reshape(-1, 1)
    return y.reshape(len(y), -1)


def score(metric: str, truth: np.ndarray, pred: np.ndarray) -> float:
    """``metric`` of 2-D target cells against the truth's (as sandmle's graders score it)."""
    from sklearn import metrics as m

    def per_column(fn: Callable[[np.ndarray, np.ndarray], float]) -> float:
        scores = [
            fn(truth[:, j], pred[:, j])
            for j in range(truth.shape[1])
            if len(np.unique(truth[:, j])) > 1 or fn is not m.roc_auc_score
        ]
        return float(np.mean(scores)) if scores else float("nan")

    def rmsle(t: np.ndarray, p: np.ndarray) -> float:
        return float(
            np.sqrt(np.mean((np.log1p(np.clip(p, 0, None)) - np.log1p(np.clip(t, 0, None))) ** 2))
        )

    if metric in ("roc_auc", "mean_columnwise_roc_auc"):
        return per_column(m.roc_auc_score)
    if metric == "binary_log_loss":
        return float(m.log_loss(truth[:, 0], pred[:, 0], labels=[0, 1]))
    if metric == "multiclass_log_loss":
        return float(m.log_loss(truth.argmax(axis=1), pred, labels=list(range(truth.shape[1]))))
    if metric == "quadratic_weighted_kappa":
        t, p = ordered_labels(truth[:, 0]), ordered_labels(pred[:, 0])
        return float(m.cohen_kappa_score(t, p, weights="quadratic"))
    if metric == "accuracy":
        return float(np.mean(truth[:, 0].astype(str) == pred[:, 0].astype(str)))
    if metric == "macro_f1":
        return float(m.f1_score(truth[:, 0].astype(str), pred[:, 0].astype(str), average="macro"))
    if metric in ("rmsle", "mean_columnwise_rmsle"):
        return per_column(rmsle)
    if metric == "mae":
        return per_column(m.mean_absolute_error)
    if metric == "r2":
        return per_column(m.r2_score)
    return per_column(lambda t, p: float(np.sqrt(m.mean_squared_error(t, p))))


def ordered_labels(values: np.ndarray) -> np.ndarray:
    """Labels scikit-learn can compare, in the graders' order: numbers as numbers (2 before
    10, which as text sort the other way), else text."""
    numbers = pd.to_numeric(pd.Series(values), errors="coerce")
    return numbers.to_numpy(float) if numbers.notna().all() else values.astype(str)


def splits(
    spec: Spec, train: pd.DataFrame, y: np.ndarray, info: dict[str, Any]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """A time hold-out (last steps of every series) for forecasting, else 5-fold CV."""
    from sklearn.model_selection import KFold, StratifiedKFold

    if info["time"]:
        t = train[info["time"]].to_numpy(float)
        cut = np.quantile(t, 0.8)
        return [(np.where(t <= cut)[0], np.where(t > cut)[0])]
    k = min(5, len(train) // 10) if len(train) >= 20 else 2
    if spec.kind in ("binary", "multiclass") and pd.Series(y).value_counts().min() >= k:
        return list(StratifiedKFold(k, shuffle=True, random_state=SEED).split(train, y))
    return list(KFold(k, shuffle=True, random_state=SEED).split(train))


def validate(
    level: int,
    spec: Spec,
    x: np.ndarray,
    y: np.ndarray,
    folds: list[tuple[np.ndarray, np.ndarray]],
    info: dict[str, Any],
) -> float:
    """The metric of out-of-fold predictions at ``level``."""
    rows: list[np.ndarray] = []
    preds: list[np.ndarray] = []
    for fit_idx, val_idx in folds:
        preds.append(
            cells(spec, fit_predict(level, spec, x[fit_idx], y[fit_idx], x[val_idx], info))
        )
        rows.append(val_idx)
    order = np.concatenate(rows)
    oof = np.concatenate(preds)
    return score(spec.metric, truth_cells(spec, y[order]), oof)


def choose_level(
    spec: Spec,
    x: np.ndarray,
    y: np.ndarray,
    folds: list[tuple[np.ndarray, np.ndarray]],
    info: dict[str, Any],
) -> tuple[int, float]:
    """LEVEL, or at LEVEL 4 the candidate with the best cross-validated metric."""
    if LEVEL < 4:
        return LEVEL, validate(LEVEL, spec, x, y, folds, info)
    lower = spec.metric in LOWER_IS_BETTER
    results = [(level, validate(level, spec, x, y, folds, info)) for level in (1, 2, 3)]
    results = [r for r in results if np.isfinite(r[1])] or results
    for level, value in results:
        print(f"  candidate {LEVEL_NAMES[level]}: {value:.5f}")
    return (min if lower else max)(results, key=lambda r: r[1])


def write_submission(
    sample: pd.DataFrame, test_ids: pd.DataFrame, spec: Spec, values: np.ndarray
) -> Path:
    """The sample's ids and columns, in its row order, filled with our predictions."""
    out = sample.copy()
    keys = (
        test_ids[spec.ids].astype(str).agg("\x1f".join, axis=1) if spec.ids[0] in test_ids else None
    )
    wanted = sample[spec.ids].astype(str).agg("\x1f".join, axis=1)
    if keys is not None and wanted.isin(set(keys)).all():
        position = pd.Series(np.arange(len(keys)), index=keys.to_numpy())
        values = values[position.loc[wanted.to_numpy()].to_numpy()]
    elif len(values) != len(sample):
        raise ValueError(f"test has {len(values)} rows but the sample submission has {len(sample)}")
    for j, col in enumerate(spec.targets):
        out[col] = values[:, j]
    SUBMISSION_DIR.mkdir(parents=True, exist_ok=True)
    path = SUBMISSION_DIR / "submission.csv"
    out.to_csv(path, index=False)
    return path
