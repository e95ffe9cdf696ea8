"""The AutoML program's metric table agrees with the graders' (``harness.grading.metrics``).

The program cannot import sandmle, so it keeps its own table (which metrics are lower-better,
which score values, which labels) and its own ``score()`` for cross-validation. Every metric
the graders know must be one the program handles the same way (direction and kind), and
``score()`` must give the graders' value on the same (seeded, random) cells.

A metric's kind on the graders' side is read from what it accepts: text predictions make a
label metric, continuous answers a value metric, ``map_at_<k>`` a ranking one; the rest
score probabilities.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from sandmle.errors import InvalidSubmission
from sandmle.harness.grading import metrics
from sandmle.harness.grading.metrics import (
    MetricSpec,
    average_precision_at_k,
    get_metric,
    metric_names,
    ranking_k,
)
from sandmle.sandbox_scripts.automl import output, settings, structured, task

GRADER_METRICS = [n for n in metric_names() if get_metric(n).fn.__module__ == metrics.__name__]
"""The metrics the grading core computes. Benchmarks register placeholder names too (``mle_bench``:
"the upstream package decides"), which no script can compute; which of those are registered
depends on what was imported before, so they stay out (the tests' count must not depend on it)."""
SCRIPT_METRICS = [name for name, _ in settings.METRIC_PATTERNS]
"""The metrics the program can read from a description and score in cross-validation."""
ROWS = 240
SEEDS = (0, 1, 2)


def script_kind(name: str) -> str:
    """The program's kind of a metric: what its cells hold."""
    if re.search(settings.RANKING_METRIC, name):
        return "ranking"
    if name in settings.REGRESSION_METRICS:
        return "value"
    if name in settings.LABEL_METRICS:
        return "label"
    return "probability" if name in SCRIPT_METRICS else "unknown"


def _accepts(spec: MetricSpec, truth: np.ndarray, pred: np.ndarray) -> bool:
    shape = (len(truth), 2) if spec.multi_column else (len(truth),)
    try:
        spec.fn(np.resize(truth, shape), np.resize(pred, shape))
    except InvalidSubmission:
        return False
    return True


def harness_kind(spec: MetricSpec) -> str:
    """The graders' kind of a metric, from the input it accepts."""
    if ranking_k(spec.name) is not None:
        return "ranking"
    text = np.array(["ant", "bee", "ant", "bee"])
    if _accepts(spec, text, text):
        return "label"
    continuous = np.array([0.5, 1.7, 2.2, 3.9])
    return "value" if _accepts(spec, continuous, continuous[::-1]) else "probability"


@pytest.mark.parametrize("name", GRADER_METRICS)
def test_every_grader_metric_is_handled_the_same_way(name: str) -> None:
    spec = get_metric(name)
    assert script_kind(name) == harness_kind(spec)
    assert (name in settings.LOWER_IS_BETTER) == spec.lower_is_better
    if ranking_k(name) is None:
        assert task.find_metric(f"Submissions are scored with `{name}`.") == name
    else:
        found = re.search(settings.RANKING_METRIC, name)
        assert found is not None and int(found.group(1)) == ranking_k(name)


def test_the_program_knows_no_metric_the_graders_do_not() -> None:
    tables = settings.LOWER_IS_BETTER | settings.REGRESSION_METRICS | settings.LABEL_METRICS
    assert set(SCRIPT_METRICS) | tables <= set(GRADER_METRICS)


def _binary(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    values = rng.integers(0, 2, shape).astype(float)
    values[0], values[1] = 0.0, 1.0  # both classes in every column
    return values


def cells(name: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(truth, prediction) 2-D cells as the program builds them (`truth_cells`, `cells`)."""
    rng = np.random.default_rng(seed)
    spec = get_metric(name)
    columns = 3 if spec.multi_column else 1
    kind = harness_kind(spec)
    if name == "multiclass_log_loss":
        truth = np.eye(4)[rng.integers(0, 4, ROWS)]
        return truth, rng.dirichlet(np.ones(4), ROWS)  # rows sum to 1, as `cells` makes them
    if kind == "probability":
        return _binary(rng, (ROWS, columns)), rng.uniform(0.02, 0.98, (ROWS, columns))
    if kind == "label":
        classes = 12 if seed == 2 else 5  # ratings past 9 sort differently as text
        truth = rng.integers(0, classes, ROWS)
        pred = np.clip(truth + rng.integers(-2, 3, ROWS), 0, classes - 1)
        if seed == 1:  # text labels, as a class column of names gives them
            names = np.array([f"class-{c}" for c in range(classes)], dtype=object)
            return names[truth].reshape(-1, 1), names[pred].reshape(-1, 1)
        return truth.astype(object).reshape(-1, 1), pred.astype(object).reshape(-1, 1)
    truth = rng.gamma(2.0, 10.0, (ROWS, columns))
    return truth, truth * rng.lognormal(0.0, 0.3, (ROWS, columns))


def graders_input(name: str, values: np.ndarray) -> np.ndarray:
    return values if get_metric(name).multi_column else values[:, 0]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", SCRIPT_METRICS)
def test_score_agrees_with_the_grader(name: str, seed: int) -> None:
    truth, pred = cells(name, seed)
    expected = get_metric(name).fn(graders_input(name, truth), graders_input(name, pred))
    assert output.score(name, truth, pred) == pytest.approx(float(expected), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_average_precision_agrees_with_the_grader(seed: int) -> None:
    rng = np.random.default_rng(seed)
    items = [f"i{j}" for j in range(30)]
    for k in (3, 5, 12):
        for _ in range(50):
            actual = set(rng.choice(items, rng.integers(1, 8), replace=False))
            predicted = list(rng.choice(items, k + 2))  # repeats count once, as Kaggle's
            assert structured.average_precision(actual, predicted, k) == pytest.approx(
                average_precision_at_k(actual, predicted, k), rel=1e-12
            )
