"""Tabular tasks: a hidden rule composed from a library of terms over named columns.

The strategist picks the term kinds (``blueprint.form``), the developer picks the columns,
cuts, periods and weights (:mod:`.tabular_terms`). ``rule.params["structure"]`` records the
form (never the weights): the structure-aware learner applies it to the noisy public columns
and fits the weights itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule, PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.modalities.contract import Matrices, Modality
from sandmle.benchmarks.synthetic.modalities.tabular_terms import (
    N_LEVELS,
    basis_matrix,
    describe_term,
    informative_frame,
    rule_terms,
    signal_missingness,
    term_weights,
    visible_frame,
)
from sandmle.benchmarks.synthetic.rows import make_ids, split_rows


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n, d, c = bp.n_train + bp.n_test, bp.dna.n_numeric, bp.dna.n_categorical
    x = rng.standard_normal((n, d))
    x[bp.n_train :, 0] += bp.noise.shift  # covariate shift: test rows drift on one feature
    cats = rng.integers(0, N_LEVELS, (n, c))
    names = bp.domain.feature_columns
    clean = informative_frame(bp, x, cats)
    structure = rule_terms(bp, names[:d], names[len(names) - c :], clean, rng)
    missing = signal_missingness(structure, n, rng)
    flags = {f"_miss_{col}": flag for col, flag in missing.items()}
    basis = basis_matrix(clean.assign(**flags), structure)
    k = bp.dna.n_outputs
    weights = term_weights(structure, basis.shape[1], k, rng)
    z = basis @ weights
    z = (z - z.mean(axis=0)) / (z.std(axis=0) + 1e-9)
    y, oracle = _targets(bp, z, rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix=bp.domain.slug.split("-")[0][:3])
    visible = visible_frame(bp, x, clean, missing, rng)
    frame = pd.concat([ids.rename(bp.domain.id_column), visible], axis=1)
    train, test = split_rows(bp, frame)
    train = pd.concat([train, tg.train_label_frame(bp, y[: bp.n_train])], axis=1)
    rule = HiddenRule(
        kind="tabular-" + "+".join(t["kind"] for t in structure),
        summary="targets combine " + ", ".join(describe_term(t) for t in structure),
        params={"structure": structure, "weights": np.round(weights, 3).tolist()},
    )
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], y[bp.n_train :]),
        oracle=oracle[bp.n_train :],
    )


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
    """Values in domain units; positive targets are log-normal around the rule. A redrawn
    design may scale the noise down (``params["noise_scale"]``, see :mod:`..redesign`)."""
    scale = rng.uniform(5, 50, z.shape[1])
    spread = (0.25 + bp.noise.label_noise) * float(bp.params.get("noise_scale", 1.0))
    noise = rng.standard_normal(z.shape) * spread
    if bp.dna.positive:
        mean = scale * np.exp(0.6 * z)
        return np.round(mean * np.exp(0.6 * noise), 3), mean
    mean = scale * (2 + z)
    return np.round(mean + scale * noise, 3), mean


def features(bp: Blueprint, data: PublicData) -> Matrices:
    """Median-imputed numbers plus one-hot categories: what a first notebook does."""
    columns = bp.domain.feature_columns
    both = pd.concat([data.train[columns], data.test[columns]], ignore_index=True)
    dummies = pd.get_dummies(both, dummy_na=True, dtype=float)
    encoded = dummies.fillna(dummies.median()).fillna(0.0).to_numpy(dtype=np.float64)
    return encoded[: len(data.train)], encoded[len(data.train) :]


def structure_features(bp: Blueprint, rule: HiddenRule, data: PublicData) -> Matrices:
    """The rule's basis applied to the noisy public columns (train and test together)."""
    structure = rule.params["structure"]
    both = pd.concat([data.train, data.test], ignore_index=True)
    basis = basis_matrix(both, structure)
    return basis[: len(data.train)], basis[len(data.train) :]


MODALITY = Modality(
    name="tabular", build=build, features=features, structure_features=structure_features
)
