"""Targets in one canonical form, and their answer and submission tables.

Canonical predictions are a float matrix per test row: class probabilities (binary and
multiclass, K columns), label probabilities (multi-label) or values (regression). Every
baseline and the oracle speak this form; :func:`submission_frame` turns it into the
competition's submission columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.ranked_cells import encode_cells, taken_cells, top_k_cells

CLASS_COLUMN = "category"


def is_classification(bp: Blueprint) -> bool:
    return bp.dna.task_type in ("binary", "multiclass")


def train_label_columns(bp: Blueprint) -> list[str]:
    """Label columns of train.csv (multiclass probability tasks keep one label column)."""
    if bp.dna.task_type == "multiclass" and bp.dna.target_kind == "prob":
        return [CLASS_COLUMN]
    return list(bp.domain.target_columns)


def sample_classes(proba: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """Draw one class per row from ``proba``, then replace a ``noise`` share at random."""
    cumulative = proba.cumsum(axis=1)
    y = (rng.random((len(proba), 1)) > cumulative).sum(axis=1).clip(0, proba.shape[1] - 1)
    flip = rng.random(len(y)) < noise
    y[flip] = rng.integers(0, proba.shape[1], int(flip.sum()))
    return y.astype(np.int64)


def oracle_classes(proba: np.ndarray, noise: float) -> np.ndarray:
    """The true probability of the observed label, label noise included."""
    return (1 - noise) * proba + noise / proba.shape[1]


def sample_labels(proba: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    y = (rng.random(proba.shape) < proba).astype(np.int64)
    flip = rng.random(proba.shape) < noise
    return np.where(flip, 1 - y, y)


def oracle_labels(proba: np.ndarray, noise: float) -> np.ndarray:
    return proba * (1 - noise) + (1 - proba) * noise


def train_label_frame(bp: Blueprint, y: np.ndarray) -> pd.DataFrame:
    """Label columns as they appear in train.csv."""
    columns = train_label_columns(bp)
    if bp.dna.task_type == "multiclass":
        return pd.DataFrame({columns[0]: _class_values(bp, y)})
    if bp.dna.task_type == "ranking":  # 0/1 per catalogue item -> space-separated item ids
        return pd.DataFrame({columns[0]: taken_cells(bp, y)})
    return pd.DataFrame(np.asarray(y).reshape(len(y), -1), columns=columns)


def answers_frame(bp: Blueprint, ids: pd.Series, y: np.ndarray) -> pd.DataFrame:
    """The private answers: id plus the graded columns."""
    targets = bp.domain.target_columns
    if bp.dna.task_type == "multiclass" and bp.dna.target_kind == "prob":
        values = pd.DataFrame(np.eye(len(targets), dtype=np.int64)[y], columns=targets)
    else:
        values = train_label_frame(bp, y)
        values.columns = targets
    return pd.concat([ids.rename(bp.domain.id_column).reset_index(drop=True), values], axis=1)


def submission_frame(bp: Blueprint, ids: pd.Series, canon: np.ndarray) -> pd.DataFrame:
    """Canonical predictions → the competition's submission table."""
    targets = bp.domain.target_columns
    kind, task = bp.dna.target_kind, bp.dna.task_type
    if task == "seq2seq":  # canonical predictions are the texts themselves, one column
        values = pd.DataFrame({targets[0]: [str(v) for v in np.asarray(canon)[:, 0]]})
    elif task == "ranking":  # canonical predictions are scores per catalogue item
        values = pd.DataFrame({targets[0]: top_k_cells(bp, canon)})
    elif kind == "label":
        values = pd.DataFrame({targets[0]: _class_values(bp, canon.argmax(axis=1))})
    elif task == "binary":
        values = pd.DataFrame({targets[0]: canon[:, 1]})
    else:
        values = pd.DataFrame(canon, columns=targets)
    return pd.concat([ids.rename(bp.domain.id_column).reset_index(drop=True), values], axis=1)


def _class_values(bp: Blueprint, y: np.ndarray) -> list[int] | list[str]:
    if bp.dna.task_type == "binary" or bp.dna.ordinal:
        return [int(v) for v in y]
    return [bp.domain.class_names[int(v)] for v in y]


def constant_canon(bp: Blueprint, n_rows: int) -> np.ndarray:
    """The sample submission's uninformed guess: uniform probabilities, or zeros."""
    k = bp.dna.n_outputs
    if is_classification(bp):
        return np.full((n_rows, k), 1.0 / k)
    if bp.dna.task_type == "multilabel":
        return np.full((n_rows, k), 0.5)
    return np.zeros((n_rows, k))


def encode_train_targets(bp: Blueprint, frame: pd.DataFrame) -> np.ndarray:
    """train.csv label columns → class indices, label matrix or value matrix."""
    columns = train_label_columns(bp)
    if bp.dna.task_type == "multiclass":
        values = frame[columns[0]]
        if bp.dna.ordinal:
            return values.to_numpy(dtype=np.int64)
        index = {name: i for i, name in enumerate(bp.domain.class_names)}
        return values.map(index).to_numpy(dtype=np.int64)
    if bp.dna.task_type == "binary":
        return frame[columns[0]].to_numpy(dtype=np.int64)
    if bp.dna.task_type == "ranking":
        return encode_cells(bp, frame[columns[0]])
    return frame[columns].to_numpy(dtype=np.float64)


def observe_labels(
    bp: Blueprint, truth: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Observed labels under the blueprint's label noise (multi-label: each label flips;
    otherwise a class is redrawn) and the oracle's probabilities, which know the noise rate."""
    eps, k = bp.noise.label_noise, bp.dna.n_outputs
    if bp.dna.task_type == "multilabel":
        flip = rng.random(truth.shape) < eps
        return np.where(flip, 1 - truth, truth), oracle_labels(truth.astype(float), eps)
    y = truth.copy()
    flip = rng.random(len(y)) < eps
    y[flip] = rng.integers(0, k, int(flip.sum()))
    return y, oracle_classes(np.eye(k)[truth], eps)
