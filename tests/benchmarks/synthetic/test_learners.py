"""The model zoo's chooser and constants: folds of whole groups, floored probabilities, the
best constant for the metric."""

from __future__ import annotations

import numpy as np
from sklearn.tree import DecisionTreeRegressor

from sandmle.benchmarks.synthetic.blueprint import TaskRequest
from sandmle.benchmarks.synthetic.learners import (
    PROB_FLOOR,
    best_model,
    constant,
    floor_proba,
    ridge,
)
from sandmle.benchmarks.synthetic.seeds import SEEDS
from sandmle.benchmarks.synthetic.strategist import plan


def test_model_choice_uses_page_folds():
    """A model that memorises pages by a page-level feature loses under page folds."""
    rng = np.random.default_rng(1)
    pages = np.repeat(np.arange(9), 50)
    level = rng.uniform(0, 1, 9)[pages]  # one random level per page, unrelated to x
    x = rng.normal(size=(len(pages), 1))
    y = 0.5 * x[:, 0] + level
    features = np.column_stack([x, pages.astype(float)])  # the page's id leaks its level
    tree = DecisionTreeRegressor(min_samples_leaf=5, random_state=0)
    chosen = best_model([ridge(1.0), tree], features, y, "value", 0, groups=pages)
    assert chosen is not tree


def test_floored_probabilities_stay_above_the_floor_and_sum_to_one():
    proba = floor_proba(np.array([[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]]))
    assert np.allclose(proba.sum(axis=1), 1) and (proba >= PROB_FLOOR / (1 + 2 * PROB_FLOOR)).all()
    assert np.allclose(proba[1], [0.2, 0.3, 0.5])


def test_the_best_constant_follows_the_metric():
    def blueprint(seed: str):
        return plan(TaskRequest(index=0, dna=SEEDS[seed], entropy=[1, 2, 3]))

    y = np.array([[1.0], [2.0], [10.0]])
    mae = blueprint("allstate-claims-severity")  # mae: the median
    assert constant(mae, y, 2).tolist() == [[2.0], [2.0]]
    rmse = blueprint("new-york-city-taxi-fare-prediction")  # rmse: the mean
    assert constant(rmse, y, 1).tolist() == [[13.0 / 3]]
    labels = blueprint("tabular-playground-series-dec-2021")  # accuracy: the majority class
    assert constant(labels, np.array([0, 2, 2, 1]), 1)[0].argmax() == 2
