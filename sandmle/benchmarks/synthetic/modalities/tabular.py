"""Tabular tasks: a hidden rule mixing linear terms, one interaction and one threshold.

Visible features are the informative ones in domain units, plus noisy copies, irrelevant
columns, corrupted readings (outliers) and blanks; the rule reads the clean values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask, HiddenRule, make_ids, split_rows
from sandmle.benchmarks.synthetic.domains import CATEGORY_LEVELS

N_LEVELS = 4


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n, d, c = bp.n_train + bp.n_test, bp.dna.n_numeric, bp.dna.n_categorical
    x = rng.standard_normal((n, d))
    x[bp.n_train :, 0] += bp.noise.shift  # covariate shift: test rows drift on one feature
    cats = rng.integers(0, N_LEVELS, (n, c))
    z, rule = _latent(bp, x, cats, rng)
    y, oracle = _targets(bp, z, rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix=bp.domain.slug.split("-")[0][:3])
    frame = pd.concat([ids.rename(bp.domain.id_column), _visible(bp, x, cats, rng)], axis=1)
    train, test = split_rows(bp, frame)
    train = pd.concat([train, tg.train_label_frame(bp, y[: bp.n_train])], axis=1)
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], y[bp.n_train :]),
        oracle=oracle[bp.n_train :],
    )


def _latent(
    bp: Blueprint, x: np.ndarray, cats: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, HiddenRule]:
    n, d = x.shape
    k = bp.dna.n_outputs
    w = rng.normal(0, 1, (d, k)) * (rng.random((d, 1)) < 0.8)
    p, q, r = rng.choice(d, 3, replace=d < 3)
    inter, thresh = rng.normal(0, 1.2, k), rng.normal(0, 1.5, k)
    cut = float(rng.normal(0, 0.5))
    effects = rng.normal(0, 0.8, (cats.shape[1], N_LEVELS, k))
    z = x @ w + np.outer(x[:, p] * x[:, q], inter) + np.outer(x[:, r] > cut, thresh)
    for j in range(cats.shape[1]):
        z += effects[j, cats[:, j]]
    z = (z - z.mean(axis=0)) / (z.std(axis=0) + 1e-9)
    names = bp.domain.feature_columns
    rule = HiddenRule(
        kind="tabular-interaction",
        summary=f"targets mix linear terms, {names[p]} x {names[q]} and {names[r]} > {cut:.2f}",
        params={"informative": names[:d], "weights": np.round(w, 3).tolist(), "cut": round(cut, 3)},
    )
    return z, rule


def _targets(
    bp: Blueprint, z: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    signal, task, eps = float(bp.params["signal"]), bp.dna.task_type, bp.noise.label_noise
    if task == "binary":
        logit = signal * z[:, 0]
        p1 = expit(logit - np.quantile(logit, 1 - bp.dna.balance))
        proba = np.stack([1 - p1, p1], axis=1)
        return tg.sample_classes(proba, eps, rng), tg.oracle_classes(proba, eps)
    if task == "multiclass":
        proba = softmax(signal * z, axis=1)
        return tg.sample_classes(proba, eps, rng), tg.oracle_classes(proba, eps)
    if task == "multilabel":
        logit = signal * z
        proba = expit(logit - np.quantile(logit, 1 - bp.dna.balance, axis=0))
        return tg.sample_labels(proba, eps, rng), tg.oracle_labels(proba, eps)
    return regression_values(bp, z, rng)


def regression_values(
    bp: Blueprint, z: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Values in domain units; positive targets are log-normal around the rule."""
    scale = rng.uniform(5, 50, z.shape[1])
    noise = rng.standard_normal(z.shape) * (0.3 + 2 * bp.noise.label_noise)
    if bp.dna.positive:
        mean = scale * np.exp(0.6 * z)
        return np.round(mean * np.exp(noise), 3), mean
    mean = scale * (2 + z)
    return np.round(mean + scale * noise, 3), mean


def _visible(
    bp: Blueprint, x: np.ndarray, cats: np.ndarray, rng: np.random.Generator
) -> pd.DataFrame:
    n, noise = len(x), bp.noise
    copies = x[:, rng.integers(0, x.shape[1], noise.n_correlated)]
    numeric = np.hstack(
        [
            x,
            copies + 0.5 * rng.standard_normal(copies.shape),
            rng.standard_normal((n, noise.n_irrelevant)),
        ]
    )
    numeric = rng.uniform(0, 100, numeric.shape[1]) + numeric * rng.uniform(
        0.5, 20, numeric.shape[1]
    )
    outliers = rng.random(n) < noise.outlier_rate
    numeric[outliers, rng.integers(0, numeric.shape[1], int(outliers.sum()))] *= 10
    names = bp.domain.feature_columns
    frame = pd.DataFrame(np.round(numeric, 3), columns=names[: numeric.shape[1]])
    levels = np.array(CATEGORY_LEVELS[:N_LEVELS], dtype=object)
    for j, name in enumerate(names[numeric.shape[1] :]):
        frame[name] = levels[cats[:, j]]
    frame = frame.mask(rng.random(frame.shape) < noise.missing_rate)
    return frame


def features(bp: Blueprint, task: DevelopedTask) -> tuple[np.ndarray, np.ndarray]:
    """Median-imputed numbers plus one-hot categories: what a first notebook does."""
    columns = bp.domain.feature_columns
    both = pd.concat([task.train[columns], task.test[columns]], ignore_index=True)
    encoded = pd.get_dummies(both, dummy_na=True, dtype=float)
    encoded = encoded.fillna(encoded.median()).fillna(0.0).to_numpy(dtype=np.float64)
    return encoded[: len(task.train)], encoded[len(task.train) :]
