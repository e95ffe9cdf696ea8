"""Graders: ``(submission, answers, config) -> score``, registered by name with ``@grader``.

A grader raises ``InvalidSubmission`` with a one-line reason for a submission that breaks
a rule; any other exception is a bug in the grader, never the agent's fault.
The ``standard`` grader reproduces MLE-bench's shared helpers (id alignment by independent
sorting, column checks, probability range and row-sum checks) for any registered metric.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from sandmle.errors import CompetitionError, InvalidSubmission, validation_message
from sandmle.harness.competition import CompetitionConfig
from sandmle.harness.confinement import mark_pack_code_grader
from sandmle.harness.grading.metrics import MetricFn, get_metric, ranking_k
from sandmle.harness.plugins import GRADER_PLUGINS, load_plugins

GradeFn = Callable[[pd.DataFrame, pd.DataFrame, CompetitionConfig], float]

_GRADERS: dict[str, GradeFn] = {}
_LABEL_METRICS = {"accuracy", "macro_f1"}


def grader(name: str, *, runs_pack_code: bool = False) -> Callable[[GradeFn], GradeFn]:
    """Register a grader under ``name`` (referenced by ``grader.name`` in competition.yaml).

    ``runs_pack_code``: the grader runs code the competition folder supplies, so a pack that
    names it is refused at load unless the user trusts the pack's code (``confinement``).
    """

    def register(fn: GradeFn) -> GradeFn:
        _GRADERS[name] = fn
        if runs_pack_code:
            mark_pack_code_grader(name)
        return fn

    return register


def get_grader(name: str) -> GradeFn:
    if name not in _GRADERS:
        load_plugins(GRADER_PLUGINS)
    if name not in _GRADERS:
        known = ", ".join(sorted(_GRADERS))
        raise CompetitionError(f"unknown grader {name!r} (known: {known})")
    return _GRADERS[name]


class StandardOptions(BaseModel):
    """Options of the ``standard`` grader (``grader.options`` in competition.yaml)."""

    model_config = ConfigDict(extra="forbid")

    alignment: Literal["sort", "row_order"] = "sort"
    """``sort``: sort both tables by the id columns and require equal id sequences;
    ``row_order``: compare row i with row i (no ids needed)."""
    extra_columns: Literal["ignore", "reject"] = "ignore"
    """Whether columns beyond ids and targets make a submission invalid."""
    probabilities: bool = False
    """Require every target value in [0, 1]."""
    row_sum: bool = False
    """Require the target columns of each row to sum to 1 (numpy isclose, atol 1e-6)."""
    numeric: bool | None = None
    """Require numeric targets; default: yes unless the metric compares labels."""


def standard_options(config: CompetitionConfig) -> StandardOptions:
    try:
        return StandardOptions.model_validate(config.grader.options)
    except ValidationError as exc:
        raise CompetitionError(f"grader.options.{validation_message(exc)}") from None


@grader("standard")
def standard_grader(
    submission: pd.DataFrame, answers: pd.DataFrame, config: CompetitionConfig
) -> float:
    """Align by ids, check the columns and values, then apply the competition's metric."""
    fn, y_true, y_pred = standard_arrays(submission, answers, config)
    return fn(y_true, y_pred)


def standard_arrays(
    submission: pd.DataFrame, answers: pd.DataFrame, config: CompetitionConfig
) -> tuple[MetricFn, np.ndarray, np.ndarray]:
    """What the ``standard`` grader hands its metric: the metric, the answers' and the
    submission's target values, aligned and checked (raises InvalidSubmission as it does)."""
    options = standard_options(config)
    ids = [] if options.alignment == "row_order" else config.id_columns
    targets = config.target_columns
    check_columns(submission, ids + targets, options.extra_columns == "reject")
    check_row_count(submission, answers)
    if ids:
        submission, answers = align_by_ids(submission, answers, ids)
    spec = get_metric(config.metric)
    numeric = (
        options.numeric if options.numeric is not None else config.metric not in _LABEL_METRICS
    )
    if ranking_k(config.metric) is not None:  # id lists: a blank cell is an empty ranking
        y_pred = submission[targets].to_numpy(dtype=object)
    else:
        y_pred = target_values(submission, targets, numeric)
    if options.probabilities:
        check_probabilities(y_pred, targets)
    if options.row_sum:
        check_row_sums(y_pred)
    y_true = answers[targets].to_numpy()
    if not spec.multi_column:
        if len(targets) != 1:
            raise CompetitionError(f"metric {spec.name} grades one column, got {targets}")
        y_true, y_pred = y_true[:, 0], y_pred[:, 0]
    return spec.fn, y_true, y_pred


def check_columns(frame: pd.DataFrame, required: list[str], reject_extra: bool) -> None:
    columns = [str(c) for c in frame.columns]
    missing = [c for c in required if c not in columns]
    if missing:
        hint = _delimiter_hint(columns)
        raise InvalidSubmission(
            f"missing column(s) {_names(missing)}; found {_names(columns[:8])}{hint}"
        )
    if reject_extra:
        extra = [c for c in columns if c not in required]
        if extra:
            raise InvalidSubmission(f"unexpected column(s) {_names(extra)}")


def _delimiter_hint(columns: list[str]) -> str:
    if len(columns) == 1 and any(sep in columns[0] for sep in (";", "\t", "|")):
        return " (the file does not seem to be comma-separated)"
    return ""


def _names(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names) if names else "none"


def check_row_count(submission: pd.DataFrame, answers: pd.DataFrame) -> None:
    if len(submission) != len(answers):
        raise InvalidSubmission(f"submission has {len(submission)} rows, expected {len(answers)}")


def align_by_ids(
    submission: pd.DataFrame, answers: pd.DataFrame, ids: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sort both tables by ``ids`` independently; their id sequences must then be equal."""
    sub = submission.sort_values(ids, kind="stable").reset_index(drop=True)
    ans = answers.sort_values(ids, kind="stable").reset_index(drop=True)
    # Element-wise ==, as MLE-bench compares: 7 == 7.0, "7" != 7, NaN never matches.
    equal = np.ones(len(sub), dtype=bool)
    for column in ids:
        equal &= np.asarray(sub[column].to_numpy() == ans[column].to_numpy(), dtype=bool)
    if not equal.all():
        raise InvalidSubmission(_id_mismatch_reason(submission, answers, ids))
    return sub, ans


def _id_mismatch_reason(submission: pd.DataFrame, answers: pd.DataFrame, ids: list[str]) -> str:
    sub_keys = Counter(tuple(row) for row in submission[ids].itertuples(index=False))
    ans_keys = {tuple(row) for row in answers[ids].itertuples(index=False)}
    duplicated = sorted((k for k, n in sub_keys.items() if n > 1), key=str)[:3]
    if duplicated:
        return f"duplicate id(s) in submission: {_keys(duplicated)}"
    unknown = sorted(set(sub_keys) - ans_keys, key=str)
    if unknown:
        return f"{len(unknown)} id(s) not in the test set, e.g. {_keys(unknown[:3])}"
    return "ids do not match the test set's ids"


def _keys(keys: list[tuple]) -> str:
    return ", ".join(repr(k[0]) if len(k) == 1 else repr(k) for k in keys)


def target_values(frame: pd.DataFrame, targets: list[str], numeric: bool) -> np.ndarray:
    if not numeric:
        values = frame[targets].to_numpy()
        if pd.isna(values).any():
            raise InvalidSubmission(f"missing values in {_names(targets)}")
        return values
    out = np.empty((len(frame), len(targets)), dtype=np.float64)
    for j, column in enumerate(targets):
        series = frame[column]
        if series.dtype == bool:
            series = series.astype(np.float64)
        try:
            out[:, j] = pd.to_numeric(series, errors="raise").astype(np.float64)
        except (ValueError, TypeError):
            raise InvalidSubmission(f"column {column!r} is not numeric") from None
    if np.isnan(out).any():
        raise InvalidSubmission(f"missing or NaN values in {_names(targets)}")
    if np.isinf(out).any():
        raise InvalidSubmission(f"infinite values in {_names(targets)}")
    return out


def check_probabilities(values: np.ndarray, targets: list[str]) -> None:
    if (values < 0).any() or (values > 1).any():
        raise InvalidSubmission(f"values in {_names(targets)} must lie in [0, 1]")


def check_row_sums(values: np.ndarray) -> None:
    sums = values.sum(axis=1)
    bad = ~np.isclose(sums, 1.0, atol=1e-6)
    if bad.any():
        row = int(np.argmax(bad))
        raise InvalidSubmission(f"row {row} sums to {sums[row]:.6g}, expected 1")
