"""Metrics, computed with numpy exactly as MLE-bench's reference environment computes them.

Each metric is a pure function ``(y_true, y_pred) -> float`` registered with ``@metric``.
It raises ``InvalidSubmission`` for input the reference implementation rejects.
Return types matter: they pick the rounding rule (numpy float64 rounds half-to-even on the
scaled value, a Python float rounds its exact binary value), so each metric returns the type
scikit-learn 1.5 returns, whatever scikit-learn is installed:

* numpy float64: ``roc_auc``, ``mean_columnwise_roc_auc``, ``quadratic_weighted_kappa``,
  ``rmse``, ``mae``, ``rmsle``, ``mean_columnwise_rmse``, ``mean_columnwise_rmsle``,
  ``macro_f1`` (scikit-learn 1.5's ``f1_score`` averages with numpy);
* Python float: ``binary_log_loss``, ``multiclass_log_loss``, ``accuracy``, ``r2``;
* numpy float64 too: ``map_at_<k>`` (ranking: mean average precision at k, as MLE-bench's
  ``mean_average_precision_at_k`` averages it with ``np.mean``).

Each metric follows scikit-learn 1.5's operation order (log1p, trapezoids over the pruned ROC
curve, numpy's pairwise means) so scores match it bit for bit, not just to 1e-9: rounding to
5 decimals turns a last-bit difference into a different score at exact decimal ties.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sandmle.errors import InvalidSubmission

MetricFn = Callable[[np.ndarray, np.ndarray], float]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    fn: MetricFn
    lower_is_better: bool
    multi_column: bool
    """True when y_true/y_pred are 2-D (n_rows, n_columns); else 1-D."""


_METRICS: dict[str, MetricSpec] = {}


def metric(
    name: str, *, lower_is_better: bool, multi_column: bool = False
) -> Callable[[MetricFn], MetricFn]:
    """Register a metric under ``name``."""

    def register(fn: MetricFn) -> MetricFn:
        _METRICS[name] = MetricSpec(name, fn, lower_is_better, multi_column)
        return fn

    return register


def get_metric(name: str) -> MetricSpec:
    try:
        return _METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(sorted(_METRICS))}") from None


def metric_names() -> list[str]:
    return sorted(_METRICS)


# float64 machine epsilon: scikit-learn 1.5 clips log-loss probabilities with it (not 1e-15).
EPS = float(np.finfo(np.float64).eps)
TRUE, PRED = "answer key", "prediction"


# ---- input checks: every bad input becomes InvalidSubmission, never a numpy error ----


def _array(values: np.ndarray, who: str) -> np.ndarray:
    try:
        return np.asarray(values)
    except ValueError:  # ragged nested sequences
        raise InvalidSubmission(f"{who} is not a rectangular table") from None


def _shaped(y_true: np.ndarray, y_pred: np.ndarray, ndim: int) -> tuple[np.ndarray, np.ndarray]:
    """Both arrays as ``ndim``-D arrays of equal, non-empty shape."""
    t, p = _array(y_true, TRUE), _array(y_pred, PRED)
    for arr, who in ((t, TRUE), (p, PRED)):
        if arr.ndim != ndim:
            raise InvalidSubmission(f"{who} must be {ndim}-D, got {arr.ndim}-D")
    if len(t) != len(p):
        raise InvalidSubmission(f"{PRED} has {len(p)} row(s) but the {TRUE} has {len(t)}")
    if t.shape != p.shape:
        raise InvalidSubmission(
            f"{PRED} has {p.shape[1]} column(s) but the {TRUE} has {t.shape[1]}"
        )
    if t.size == 0:
        raise InvalidSubmission("nothing to score: no rows")
    return t, p


def _numbers(arr: np.ndarray, who: str) -> np.ndarray:
    """float64 copy of ``arr``; text, NaN and infinities are invalid (scikit-learn's check_array)."""
    # Object arrays (pandas text columns) convert only when every cell parses as a number.
    if arr.dtype.kind not in "biufO":
        raise InvalidSubmission(f"{who} is not numeric")
    try:
        out = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise InvalidSubmission(f"{who} is not numeric") from None
    if np.isnan(out).any():
        raise InvalidSubmission(f"{who} contains NaN")
    if np.isinf(out).any():
        raise InvalidSubmission(f"{who} contains infinite values")
    return out


def _labels(arr: np.ndarray, who: str) -> np.ndarray:
    """Class labels: all text, or whole numbers (an integral float such as 2.0 counts as 2)."""
    if arr.dtype.kind in "US":
        return arr
    if arr.dtype.kind == "O" and all(isinstance(v, str) for v in arr.flat):
        return arr.astype(str)
    if arr.dtype.kind == "O" and any(isinstance(v, str) for v in arr.flat):
        raise InvalidSubmission(f"{who} mixes text and numeric labels")
    out = arr if arr.dtype.kind in "biu" else _numbers(arr, who)
    # scikit-learn calls such a target "continuous" and refuses it as class labels.
    if out.dtype.kind == "f" and np.any(out != np.trunc(out)):
        raise InvalidSubmission(f"{who} contains non-integral numbers, which are not class labels")
    return out


def _is_text(labels: np.ndarray) -> bool:
    return labels.dtype.kind in "US"


def _label_union(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Sorted union of the labels seen on either side; text and numbers cannot be mixed."""
    if _is_text(t) != _is_text(p):
        raise InvalidSubmission(f"the {TRUE} and the {PRED} mix text and numeric labels")
    return np.union1d(t, p)


def _two_classes(t: np.ndarray, metric_name: str) -> np.ndarray:
    """Boolean "is the positive class" per row; the positive class is the larger label."""
    classes = np.unique(t)
    if len(classes) < 2:
        raise InvalidSubmission(f"only one class present in the {TRUE}; {metric_name} is undefined")
    if len(classes) > 2:
        raise InvalidSubmission(f"the {TRUE} has {len(classes)} classes; {metric_name} needs two")
    return t == classes[1]


# ---- ROC-AUC ----


def _binary_auc(t: np.ndarray, p: np.ndarray) -> np.float64:
    positive = _two_classes(_labels(t, TRUE), "ROC-AUC")
    score = _numbers(p, PRED)
    order = np.argsort(score, kind="stable")[::-1]
    score, positive = score[order], positive[order]
    # One ROC point per distinct score (ties move both rates at once, so they count 1/2).
    ends = np.r_[np.flatnonzero(np.diff(score)), score.size - 1]
    tps = np.cumsum(positive, dtype=np.float64)[ends]
    fps = (ends + 1) - tps
    if fps.size > 2:
        # Drop points collinear with their neighbours, as roc_curve(drop_intermediate=True)
        # does: the area is unchanged, but its floating-point sum must match bit for bit.
        corner = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
        keep = np.r_[True, corner, True]
        fps, tps = fps[keep], tps[keep]
    fpr = np.r_[0.0, fps] / fps[-1]
    tpr = np.r_[0.0, tps] / tps[-1]
    return np.float64(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2.0))


@metric("roc_auc", lower_is_better=False)
def roc_auc(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Binary ROC-AUC (trapezoids; tied scores count 1/2). numpy float64."""
    return _binary_auc(*_shaped(y_true, y_pred, 1))


@metric("mean_columnwise_roc_auc", lower_is_better=False, multi_column=True)
def mean_columnwise_roc_auc(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Unweighted mean of the per-column binary ROC-AUCs. numpy float64."""
    t, p = _shaped(y_true, y_pred, 2)
    return np.float64(np.mean([_binary_auc(t[:, j], p[:, j]) for j in range(t.shape[1])]))


# ---- log loss ----


def _libm_log(values: np.ndarray) -> np.ndarray:
    """Natural log through the C library, as scipy's ``xlogy`` in scikit-learn's log loss takes it.

    numpy's vectorised ``np.log`` differs from it in the last bit for ~0.3% of inputs.
    """
    return np.fromiter((math.log(v) for v in values), dtype=np.float64, count=values.size)


def _mean_neg_log(t: np.ndarray, p: np.ndarray) -> float:
    """Mean over rows of -sum(y * ln p): y a 0/1 matrix, p already clipped."""
    terms = np.zeros_like(p)
    hot = t != 0  # y = 0 contributes exactly 0, so only these cells need a log
    terms[hot] = t[hot] * _libm_log(p[hot])
    return float(np.mean(-terms.sum(axis=1)))


@metric("binary_log_loss", lower_is_better=True)
def binary_log_loss(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Log loss of two-class labels against P(larger label), clipped to [eps, 1-eps]. Python float."""
    t, p = _shaped(y_true, y_pred, 1)
    positive = _two_classes(_labels(t, TRUE), "log loss")
    prob = _numbers(p, PRED)
    # Expand to [1 - p, p], then clip both columns, in scikit-learn 1.5's order.
    both = np.clip(np.column_stack([1 - prob, prob]), EPS, 1 - EPS)
    onehot = np.column_stack([~positive, positive]).astype(np.float64)
    return _mean_neg_log(onehot, both)


@metric("multiclass_log_loss", lower_is_better=True, multi_column=True)
def multiclass_log_loss(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Log loss of a 0/1 indicator matrix; probabilities clipped, rows not renormalised. Python float."""
    t, p = _shaped(y_true, y_pred, 2)
    onehot = _numbers(t, TRUE)
    if not np.isin(onehot, (0.0, 1.0)).all():
        raise InvalidSubmission(f"the {TRUE} is not a 0/1 indicator matrix")
    if onehot.shape[1] < 2:
        raise InvalidSubmission("only one class column; log loss is undefined")
    return _mean_neg_log(onehot, np.clip(_numbers(p, PRED), EPS, 1 - EPS))


# ---- classification labels ----


def _label_pair(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t, p = _shaped(y_true, y_pred, 1)
    return _labels(t, TRUE), _labels(p, PRED)


def _confusion(t: np.ndarray, p: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Counts, rows = answer label position, columns = predicted label position."""
    k = labels.size
    cells = np.searchsorted(labels, t) * k + np.searchsorted(labels, p)
    return np.bincount(cells, minlength=k * k).reshape(k, k)


@metric("quadratic_weighted_kappa", lower_is_better=False)
def quadratic_weighted_kappa(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Cohen's kappa with quadratic weights on label *positions*; NaN if undefined. numpy float64."""
    t, p = _label_pair(y_true, y_pred)
    labels = _label_union(t, p)
    observed = _confusion(t, p, labels)
    # Expected counts under independence; built predicted-by-answer as scikit-learn 1.5 does,
    # since the orientation changes the floating-point sum below.
    expected = np.outer(observed.sum(axis=0), observed.sum(axis=1)) / observed.sum()
    pos = np.arange(labels.size)
    weights = (pos[:, None] - pos[None, :]) ** 2
    denominator = np.sum(weights * expected)
    if denominator == 0:  # one label on both sides: kappa is undefined, a valid NaN score
        return np.float64(np.nan)
    return np.float64(1 - np.sum(weights * observed) / denominator)


@metric("accuracy", lower_is_better=False)
def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Fraction of rows whose labels are equal (2 == 2.0, 2 != "2"). Python float."""
    t, p = _label_pair(y_true, y_pred)
    if _is_text(t) != _is_text(p):
        # scikit-learn 1.5 rejects mixed label types only when both sides look binary;
        # otherwise it compares them, and text never equals a number.
        if np.unique(t).size <= 2 and np.unique(p).size <= 2:
            raise InvalidSubmission(f"the {TRUE} and the {PRED} mix text and numeric labels")
        return 0.0
    return float(np.count_nonzero(t == p) / t.size)


@metric("macro_f1", lower_is_better=False)
def macro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Unweighted mean of per-label F1 over the union of labels. numpy float64, as 1.5 returns."""
    t, p = _label_pair(y_true, y_pred)
    observed = _confusion(t, p, _label_union(t, p))
    # F1 = 2·TP / (#answers with the label + #predictions with it); never 0/0 on the union.
    f1 = 2 * np.diag(observed) / (observed.sum(axis=1) + observed.sum(axis=0))
    return np.mean(f1)


# ---- regression ----


def _value_pair(
    y_true: np.ndarray, y_pred: np.ndarray, ndim: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    t, p = _shaped(y_true, y_pred, ndim)
    return _numbers(t, TRUE), _numbers(p, PRED)


def _rmse(t: np.ndarray, p: np.ndarray) -> np.float64:
    return np.sqrt(np.mean((t - p) ** 2))


def _rmsle(t: np.ndarray, p: np.ndarray) -> np.float64:
    # scikit-learn 1.5 refuses any negative value (1.6+ only values <= -1).
    if (t < 0).any() or (p < 0).any():
        raise InvalidSubmission("RMSLE is undefined for negative values")
    return _rmse(np.log1p(t), np.log1p(p))


@metric("rmse", lower_is_better=True)
def rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared error. numpy float64."""
    return _rmse(*_value_pair(y_true, y_pred))


@metric("mae", lower_is_better=True)
def mae(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean absolute error. numpy float64."""
    t, p = _value_pair(y_true, y_pred)
    return np.mean(np.abs(p - t))


@metric("rmsle", lower_is_better=True)
def rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Root mean squared error of ln(1 + y); negative values are invalid. numpy float64."""
    return _rmsle(*_value_pair(y_true, y_pred))


@metric("mean_columnwise_rmse", lower_is_better=True, multi_column=True)
def mean_columnwise_rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean of per-column RMSEs. numpy float64."""
    t, p = _value_pair(y_true, y_pred, 2)
    return np.float64(np.mean([_rmse(t[:, j], p[:, j]) for j in range(t.shape[1])]))


@metric("mean_columnwise_rmsle", lower_is_better=True, multi_column=True)
def mean_columnwise_rmsle(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean of per-column RMSLEs (nomad2018). numpy float64."""
    t, p = _value_pair(y_true, y_pred, 2)
    return np.float64(np.mean([_rmsle(t[:, j], p[:, j]) for j in range(t.shape[1])]))


@metric("r2", lower_is_better=False)
def r2(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Coefficient of determination; constant answers give 1.0 (exact fit) or 0.0. Python float."""
    t, p = _value_pair(y_true, y_pred)
    if t.size < 2:  # scikit-learn warns and returns NaN
        return float("nan")
    residual = np.sum((t - p) ** 2)
    total = np.sum((t - np.mean(t)) ** 2)
    if total == 0:
        return 1.0 if residual == 0 else 0.0
    return float(1 - residual / total)


# ---- ranking ----

MAP_PREFIX = "map_at_"
MAP_KS = (3, 5, 7, 10, 12)
"""Cut-offs registered as ``map_at_<k>`` (Kaggle's MAP@k competitions use these)."""


def ranking_k(name: str) -> int | None:
    """k of a ``map_at_<k>`` metric, else None."""
    suffix = name.removeprefix(MAP_PREFIX)
    return int(suffix) if name.startswith(MAP_PREFIX) and suffix.isdigit() else None


def _ranked_ids(cell: object, who: str) -> list[str]:
    """One cell's space-separated ids, in order; a blank cell is an empty list.

    Split on single spaces as MLE-bench does (``str.split(" ")``), so a doubled space takes a
    rank position with an empty id that matches nothing. A lone numeric id (pandas reads a
    column of single integers as numbers) is that id's text.
    """
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return []
    if isinstance(cell, str):
        return cell.split(" ") if cell else []
    if isinstance(cell, (int, np.integer)) and not isinstance(cell, bool):
        return [str(int(cell))]
    if isinstance(cell, (float, np.floating)) and float(cell).is_integer():
        return [str(int(cell))]
    raise InvalidSubmission(f"{who} cell {cell!r} is not a space-separated list of ids")


def average_precision_at_k(actual: set[str], predicted: list[str], k: int) -> float:
    """Kaggle's AP@k: precision at each rank <= k holding a new relevant id, over min(|actual|, k).

    A repeated id counts once (at its first rank); an empty answer scores 0.
    """
    hits, total = 0, 0.0
    for rank, item in enumerate(predicted[:k]):
        if item in actual and item not in predicted[:rank]:
            hits += 1
            total += hits / (rank + 1.0)
    return total / min(len(actual), k) if actual else 0.0


def _map_at_k(k: int) -> MetricFn:
    def map_at_k(y_true: np.ndarray, y_pred: np.ndarray) -> float:
        t, p = _shaped(y_true, y_pred, 1)
        scores = [
            average_precision_at_k(set(_ranked_ids(a, TRUE)) - {""}, _ranked_ids(b, PRED), k)
            for a, b in zip(t.tolist(), p.tolist(), strict=True)
        ]
        return np.float64(np.mean(scores))

    map_at_k.__doc__ = f"Mean over rows of AP@{k}: each cell a space-separated list of ids, best first. numpy float64."
    return map_at_k


for _k in MAP_KS:
    metric(f"{MAP_PREFIX}{_k}", lower_is_better=False)(_map_at_k(_k))
