"""Metrics: agreement with scikit-learn, pinned spec values, return types, invalid input."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from sklearn import metrics as sk  # type: ignore[import-untyped]

from sandmle.errors import InvalidSubmission
from sandmle.harness.grading.metrics import EPS, get_metric, metric_names

HIGHER = {"roc_auc", "mean_columnwise_roc_auc", "quadratic_weighted_kappa", "accuracy"}
HIGHER |= {"macro_f1", "r2"}
LOWER = {"binary_log_loss", "multiclass_log_loss", "rmse", "mae", "rmsle"}
LOWER |= {"mean_columnwise_rmse", "mean_columnwise_rmsle"}
MULTI = {"mean_columnwise_roc_auc", "multiclass_log_loss", "mean_columnwise_rmse"}
MULTI |= {"mean_columnwise_rmsle"}


def score(name: str, y_true: object, y_pred: object) -> float:
    return get_metric(name).fn(np.asarray(y_true), np.asarray(y_pred))


# ---- registry ----


def test_registry_lists_every_metric_with_its_direction_and_shape() -> None:
    # benchmarks may register metrics of their own; the core set must be there as specified
    assert HIGHER | LOWER <= set(metric_names())
    for name in HIGHER | LOWER:
        spec = get_metric(name)
        assert spec.lower_is_better is (name in LOWER)
        assert spec.multi_column is (name in MULTI)


def test_unknown_metric_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="roc_auc"):
        get_metric("auc")


# ---- agreement with the installed scikit-learn on random inputs ----


def _binary(rng: np.random.Generator, n: int) -> np.ndarray:
    t = rng.integers(0, 2, n)
    t[:2] = [0, 1]  # both classes, always
    return t


def _probs(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    p = rng.random((n, k))
    p[rng.random((n, k)) < 0.05] = 0.0  # exact zeros exercise the clipping
    p[p.sum(axis=1) == 0, 0] = 1.0
    return p / p.sum(axis=1, keepdims=True)


def _case(name: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """(y_true, y_pred, scikit-learn's score) for one random draw."""
    n = int(rng.integers(2, 200))
    if name == "roc_auc":
        t, p = _binary(rng, n), rng.integers(0, 6, n) / 5  # coarse scores: many ties
        return t, p, sk.roc_auc_score(t, p)
    if name == "mean_columnwise_roc_auc":
        t = np.column_stack([_binary(rng, n) for _ in range(6)])
        p = rng.random((n, 6))
        return t, p, np.mean([sk.roc_auc_score(t[:, j], p[:, j]) for j in range(6)])
    if name == "binary_log_loss":
        t, p = _binary(rng, n), _probs(rng, n, 2)[:, 1]
        return t, p, sk.log_loss(t, p)
    if name == "multiclass_log_loss":
        k = int(rng.integers(2, 12))
        t, p = np.eye(k, dtype=int)[rng.integers(0, k, n)], _probs(rng, n, k)
        return t, p, sk.log_loss(t, p)
    if name in ("quadratic_weighted_kappa", "accuracy", "macro_f1"):
        t, p = rng.choice([0, 1, 2, 4, 7], n), rng.choice([0, 1, 2, 3, 4], n)
        ref = {
            "quadratic_weighted_kappa": lambda: sk.cohen_kappa_score(t, p, weights="quadratic"),
            "accuracy": lambda: sk.accuracy_score(t, p),
            "macro_f1": lambda: sk.f1_score(t, p, average="macro"),
        }[name]
        return t, p, ref()
    t = rng.random(n) * 10
    p = np.abs(t + rng.normal(size=n))
    if name.startswith("mean_columnwise"):
        t, p = t.reshape(-1, 1) * [1, 3, 0.1], p.reshape(-1, 1) * [1, 2, 0.5]
        one = (
            sk.root_mean_squared_log_error if name.endswith("rmsle") else sk.root_mean_squared_error
        )
        return t, p, np.mean([one(t[:, j], p[:, j]) for j in range(3)])
    ref_fn: Callable[..., float] = {
        "rmse": sk.root_mean_squared_error,
        "mae": sk.mean_absolute_error,
        "rmsle": sk.root_mean_squared_log_error,
        "r2": sk.r2_score,
    }[name]
    return t, p, ref_fn(t, p)


@pytest.mark.parametrize("name", sorted(HIGHER | LOWER))
def test_agrees_with_scikit_learn_on_random_inputs(name: str) -> None:
    rng = np.random.default_rng(sum(map(ord, name)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's deprecation/undefined-metric notes
        for _ in range(60):
            t, p, expected = _case(name, rng)
            assert score(name, t, p) == pytest.approx(expected, rel=0, abs=1e-9)


def test_multiclass_log_loss_uses_the_c_library_log_bit_for_bit() -> None:
    # scikit-learn 1.5 takes logs through scipy's xlogy (C library); numpy's log differs at
    # the last bit for a few inputs, which can flip a 5-decimal rounding tie.
    # Where numpy's log is the C library's (some CPUs and builds), no input tells them apart.
    draws = np.random.default_rng(1).random(10_000)
    differing = [x for x in draws if np.log(x) != math.log(x)]
    if not differing:
        pytest.skip("numpy's log equals the C library's on every draw on this machine")
    for p in differing[:20]:
        assert score("multiclass_log_loss", [[1, 0]], [[p, 1 - p]]) == -math.log(p)


# ---- values pinned by the grading spec ----


def test_kappa_weights_label_positions_not_label_values() -> None:
    # aptos fixture with grade 3 absent: labels {0,1,2,4} sit at positions 0..3, so a 2-vs-4
    # miss weighs 1, not 4. Value-based QWK on this case would be 0.76623.
    answers, predicted = [0, 0, 1, 2, 4, 4], [0, 1, 2, 2, 2, 4]
    kappa = score("quadratic_weighted_kappa", answers, predicted)
    assert kappa == pytest.approx(0.8, abs=1e-12)
    assert score("quadratic_weighted_kappa", predicted, answers) == kappa  # symmetric


def test_kappa_with_zero_denominator_is_nan_not_an_error() -> None:
    kappa = score("quadratic_weighted_kappa", [3, 3, 3], [3, 3, 3])
    assert isinstance(kappa, np.float64) and np.isnan(kappa)


def test_hard_wrong_binary_label_costs_minus_log_eps_per_row() -> None:
    assert EPS == 2.220446049250313e-16  # float64 epsilon, not 1e-15
    assert score("binary_log_loss", [0, 1], [1.0, 0.0]) == -math.log(EPS)
    # One hard miss in four rows; the three hits cost -ln(1 - eps) ~ 2.2e-16 each.
    assert round(score("binary_log_loss", [0, 1, 0, 1], [1.0, 1.0, 0.0, 1.0]), 5) == 9.01091


def test_uniform_99_class_submission_scores_ln_99() -> None:
    answers = np.eye(99, dtype=int)
    loss = score("multiclass_log_loss", answers, np.full((99, 99), 1 / 99))
    assert round(loss, 5) == 4.59512
    assert loss == pytest.approx(math.log(99), abs=1e-12)


def test_log_loss_rows_are_not_renormalised() -> None:
    # p = (0.5, 0.25) would cost ln 1.5 after renormalising; unnormalised it costs ln 2.
    assert score("multiclass_log_loss", [[1, 0]], [[0.5, 0.25]]) == pytest.approx(math.log(2))


def test_tied_scores_count_one_half() -> None:
    assert score("roc_auc", [0, 1, 0, 1], [0.3, 0.3, 0.3, 0.3]) == 0.5
    # pairs (pos, neg): 0.5>0.1, 0.5=0.5 (1/2), 0.9>0.1, 0.9>0.5 -> 3.5 / 4
    assert score("roc_auc", [0, 0, 1, 1], [0.1, 0.5, 0.5, 0.9]) == 0.875


def test_roc_auc_accepts_booleans_and_any_real_scores() -> None:
    assert score("roc_auc", [0, 1, 1], [False, True, True]) == 1.0
    assert score("roc_auc", [1, 0, 0], [-7.0, 3.0, 250.0]) == 0.0


def test_accuracy_uses_python_equality() -> None:
    assert score("accuracy", [1, 2, 3, 4], [1.0, 2.0, 0.0, 4.0]) == 0.75
    assert score("accuracy", ["a", "b", "c"], ["a", "B", "c"]) == pytest.approx(2 / 3)
    # Many-class integer answers vs text predictions: compared, never equal (2 != "2").
    assert score("accuracy", [1, 2, 3], np.array(["1", "2", "3"], dtype=object)) == 0.0


def test_rmsle_and_mean_columnwise_rmsle() -> None:
    assert score("rmsle", [0.0, math.e - 1], [0.0, 0.0]) == pytest.approx(math.sqrt(0.5))
    per_column = [[0.0, 3.0], [math.e - 1, 3.0]], [[0.0, 3.0], [0.0, 3.0]]
    assert score("mean_columnwise_rmsle", *per_column) == pytest.approx(math.sqrt(0.5) / 2)


def test_macro_f1_and_r2_hand_values() -> None:
    # label 0: tp 1, 1 answer, 2 predictions -> 2/3; label 1: tp 1, 2 answers, 1 pred -> 2/3
    assert score("macro_f1", [0, 1, 1], [0, 0, 1]) == pytest.approx(2 / 3)
    assert score("r2", [1.0, 2.0, 3.0], [1.0, 2.0, 4.0]) == pytest.approx(0.5)
    assert score("r2", [2.0, 2.0], [2.0, 2.0]) == 1.0  # constant answers, exact fit


# ---- return types pick the rounding rule ----

NUMPY_FLOAT = {
    "roc_auc": ([0, 1], [0.2, 0.7]),
    "mean_columnwise_roc_auc": ([[0, 1], [1, 0]], [[0.2, 0.9], [0.7, 0.1]]),
    "quadratic_weighted_kappa": ([0, 1, 2], [0, 2, 2]),
    "rmse": ([1.0, 2.0], [1.5, 2.0]),
    "mae": ([1.0, 2.0], [1.5, 2.0]),
    "rmsle": ([1.0, 2.0], [1.5, 2.0]),
    "mean_columnwise_rmse": ([[1.0, 2.0]], [[1.5, 2.0]]),
    "mean_columnwise_rmsle": ([[1.0, 2.0]], [[1.5, 2.0]]),
    "macro_f1": ([0, 1, 1], [0, 0, 1]),
}
PYTHON_FLOAT = {
    "binary_log_loss": ([0, 1], [0.2, 0.7]),
    "multiclass_log_loss": ([[1, 0], [0, 1]], [[0.8, 0.2], [0.3, 0.7]]),
    "accuracy": ([0, 1, 2], [0, 2, 2]),
    "r2": ([1.0, 2.0, 3.0], [1.0, 2.0, 4.0]),
}


def test_every_metric_has_a_pinned_return_type() -> None:
    assert set(NUMPY_FLOAT) | set(PYTHON_FLOAT) == HIGHER | LOWER  # every core metric
    assert HIGHER | LOWER <= set(metric_names())


@pytest.mark.parametrize("name", sorted(NUMPY_FLOAT))
def test_numpy_float_metrics(name: str) -> None:
    assert type(score(name, *NUMPY_FLOAT[name])) is np.float64


@pytest.mark.parametrize("name", sorted(PYTHON_FLOAT))
def test_python_float_metrics(name: str) -> None:
    assert type(score(name, *PYTHON_FLOAT[name])) is float


def test_return_type_decides_rounding_at_a_decimal_tie() -> None:
    assert round(np.float64(0.123455), 5) == 0.12346  # numpy: scale, round half to even
    assert round(0.123455, 5) == 0.12345  # Python: exact binary value 0.12345499...
    # 24691 / 200000 = 0.123455 through both an accuracy and a numpy mean.
    hits = np.zeros(200_000, dtype=int)
    hits[:24_691] = 1
    assert round(score("accuracy", hits, np.ones_like(hits)), 5) == 0.12345
    assert round(score("mae", hits.astype(float), np.zeros(200_000)), 5) == 0.12346


# ---- invalid input raises InvalidSubmission, with a reason ----

TEXT = np.array(["a", "b", "c"], dtype=object)
INVALID = [
    ("roc_auc", [0, 1, 1], [0.1, np.nan, 0.3], "NaN"),
    ("roc_auc", [1, 1, 1], [0.1, 0.2, 0.3], "only one class"),
    ("roc_auc", [0, 1, 2], [0.1, 0.2, 0.3], "3 classes"),
    ("roc_auc", [0, 1, 1], [0.1, 0.2], "row"),
    ("roc_auc", [0, 1, 1], TEXT, "not numeric"),
    ("roc_auc", [0, 1, 1], [np.inf, 0.0, 1.0], "infinite"),
    ("roc_auc", [], [], "no rows"),
    ("mean_columnwise_roc_auc", [[0, 1], [1, 1]], [[0.1, 0.2], [0.3, 0.4]], "only one class"),
    ("mean_columnwise_roc_auc", [[0, 1], [1, 0]], [[0.1], [0.3]], "column"),
    ("mean_columnwise_roc_auc", [0, 1], [0.1, 0.2], "2-D"),
    ("binary_log_loss", [1, 1], [0.2, 0.3], "only one class"),
    ("binary_log_loss", [0, 1], [0.2, np.nan], "NaN"),
    ("binary_log_loss", [0, 1], ["x", "0.3"], "not numeric"),
    ("multiclass_log_loss", [[1, 0], [0, 2]], [[0.5, 0.5], [0.2, 0.8]], "0/1"),
    ("multiclass_log_loss", [[1], [1]], [[1.0], [1.0]], "one class"),
    ("multiclass_log_loss", [[1, 0], [0, 1]], [[0.5, 0.5], [0.2, np.nan]], "NaN"),
    ("quadratic_weighted_kappa", [0, 1, 2], [0, 1, 2.5], "non-integral"),
    ("quadratic_weighted_kappa", [0, 1, 2], [0, 1, np.nan], "NaN"),
    ("quadratic_weighted_kappa", [0, 1, 2], TEXT, "mix text"),
    ("accuracy", [1, 2, 3], [1.0, 2.0, 3.5], "non-integral"),
    ("accuracy", [1, 2, 3], [1.0, np.nan, 3.0], "NaN"),
    ("accuracy", [1.5, 2.5], [1.5, 2.5], "non-integral"),
    ("accuracy", [1, 2, 2], np.array(["1", "2", "2"], dtype=object), "mix text"),
    ("accuracy", np.array(["a", np.nan], dtype=object), ["a", "b"], "mixes text"),
    ("accuracy", [], [], "no rows"),
    ("macro_f1", [1, 2, 3], TEXT, "mix text"),
    ("rmse", [1.0, 2.0], [np.nan, 2.0], "NaN"),
    ("rmse", [1.0, 2.0], ["x", "2"], "not numeric"),
    ("mae", [1.0, 2.0], [1.0], "row"),
    # scikit-learn 1.5 refuses any negative value; 1.6+ would score -0.5.
    ("rmsle", [1.0, 2.0], [-0.5, 2.0], "negative"),
    ("rmsle", [-0.1, 2.0], [1.0, 2.0], "negative"),
    ("mean_columnwise_rmsle", [[1.0, 2.0]], [[1.0, -2.0]], "negative"),
    ("mean_columnwise_rmse", [[1.0, 2.0]], [[1.0, np.nan]], "NaN"),
    ("r2", [1.0, 2.0], [np.inf, 2.0], "infinite"),
]


@pytest.mark.parametrize(("name", "y_true", "y_pred", "reason"), INVALID)
def test_invalid_input_raises_invalid_submission(
    name: str, y_true: object, y_pred: object, reason: str
) -> None:
    with pytest.raises(InvalidSubmission, match=reason):
        score(name, y_true, y_pred)


ODD_INPUTS: list[object] = [
    np.array([None, None], dtype=object),
    np.array([{}, []], dtype=object),
    np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]"),
    np.array([1 + 2j, 3j]),
    np.float64(0.5),
    np.zeros((2, 2, 2)),
    [[0.1, 0.2], [0.3]],
]


@pytest.mark.parametrize("name", sorted(HIGHER | LOWER))
@pytest.mark.parametrize("odd", range(len(ODD_INPUTS)))
def test_only_invalid_submission_escapes_on_odd_input(name: str, odd: int) -> None:
    good = np.array([[0, 1], [1, 0]]) if get_metric(name).multi_column else np.array([0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidSubmission):
            get_metric(name).fn(good, ODD_INPUTS[odd])  # type: ignore[arg-type]
