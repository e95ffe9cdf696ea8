"""Checks and alignments shared by the lite graders (grading spec §1.7: H-AUC, H-ACC, H-1HOT).

Every failed check raises ``InvalidSubmission`` with a one-line reason. Sorting is pandas'
default (non-stable) sort of each table on its own, as MLE-bench sorts: with unique ids only the
pairing matters; with duplicated ids (insults, jigsaw, NYC taxi) the same algorithm pairs the
rows inside a run of equal ids as MLE-bench pairs them.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from sandmle.errors import InvalidSubmission

ROW_SUM_ATOL = 1e-6
"""numpy ``isclose`` with this atol and its default rtol 1e-5: a row passes iff |sum - 1| <= 1.1e-5."""


def _names(names: Iterable[object]) -> str:
    listed = [repr(str(n)) for n in names]
    more = f" and {len(listed) - 5} more" if len(listed) > 5 else ""
    return ", ".join(listed[:5]) + more


def require_columns(frame: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidSubmission(f"missing column(s) {_names(missing)}")


def require_exact_columns(frame: pd.DataFrame, columns: Iterable[str]) -> None:
    """The set of column names must be exactly ``columns`` (any order)."""
    expected = set(columns)
    require_columns(frame, sorted(expected))
    extra = [c for c in frame.columns if c not in expected]
    if extra:
        raise InvalidSubmission(f"unexpected column(s) {_names(extra)}")


def require_row_count(submission: pd.DataFrame, answers: pd.DataFrame) -> None:
    if len(submission) != len(answers):
        raise InvalidSubmission(f"submission has {len(submission)} rows, expected {len(answers)}")


def sort_by(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """``frame`` sorted by ``column`` with pandas' default sort, index reset."""
    try:
        return frame.sort_values(by=column).reset_index(drop=True)
    except TypeError:  # e.g. text mixed with numbers in an in-memory table
        raise InvalidSubmission(f"column {column!r} mixes values that cannot be sorted") from None


def require_equal_ids(submission: pd.DataFrame, answers: pd.DataFrame, column: str) -> None:
    """Sorted id columns must be equal element by element (7 == 7.0; NaN and "7" != 7 never)."""
    differ = np.asarray(submission[column].to_numpy() != answers[column].to_numpy(), dtype=bool)
    if differ.any():
        first = int(np.argmax(differ))
        raise InvalidSubmission(
            f"{column!r} values do not match the test set's "
            f"(after sorting, row {first}: {submission[column].iloc[first]!r})"
        )


def require_same_id_set(submission: pd.DataFrame, answers: pd.DataFrame, column: str) -> None:
    """The *sets* of ids must be equal (Python set semantics: 1 == 1.0, NaN never matches)."""
    unknown = set(submission[column]) - set(answers[column])
    missing = set(answers[column]) - set(submission[column])
    if unknown or missing:
        raise InvalidSubmission(
            f"{column!r} values differ from the test set's: {len(unknown)} unknown, "
            f"{len(missing)} missing"
        )


def to_numeric(series: pd.Series) -> pd.Series:
    """``pd.to_numeric`` (booleans stay booleans); text that is not a number is invalid."""
    try:
        return pd.to_numeric(series)
    except (ValueError, TypeError):
        raise InvalidSubmission(f"column {series.name!r} is not numeric") from None


def require_unit_interval(values: pd.Series) -> None:
    """min >= 0 and max <= 1; NaN is skipped here (the metric rejects it later)."""
    low, high = values.min(), values.max()
    if low < 0 or high > 1:
        raise InvalidSubmission(f"column {values.name!r} must lie in [0, 1] (found {low}..{high})")


def probabilities(frame: pd.DataFrame) -> np.ndarray:
    """Probability columns as floats: each in [0, 1] (NaN fails), each row summing to 1."""
    values = np.column_stack([to_numeric(frame[c]).to_numpy(np.float64) for c in frame.columns])
    inside = (values >= 0) & (values <= 1)  # False for NaN
    if not inside.all():
        row, col = np.argwhere(~inside)[0]
        raise InvalidSubmission(
            f"probabilities must lie in [0, 1]: row {row}, {frame.columns[col]!r} = {values[row, col]}"
        )
    sums = np.nansum(values, axis=1)
    bad = ~np.isclose(sums, 1.0, atol=ROW_SUM_ATOL)
    if bad.any():
        row = int(np.argmax(bad))
        raise InvalidSubmission(f"probabilities of row {row} sum to {sums[row]!r}, not 1")
    return values


def require_class_labels(series: pd.Series) -> None:
    """Whole-number class labels: no text, no NaN, no fractions (2.0 counts as 2)."""
    if not pd.api.types.is_numeric_dtype(series.dtype):  # booleans count as numbers
        raise InvalidSubmission(f"column {series.name!r} holds text, not class labels")
    values = series.to_numpy(np.float64)
    if np.isnan(values).any():
        raise InvalidSubmission(f"column {series.name!r} has missing values")
    if (values != np.trunc(values)).any():
        raise InvalidSubmission(f"column {series.name!r} has non-integral class labels")


def auc_inputs(
    submission: pd.DataFrame, answers: pd.DataFrame, id_column: str, target: str
) -> tuple[np.ndarray, np.ndarray]:
    """H-AUC: checks, then (answers target, submission scores) aligned by sorted ids."""
    require_columns(submission, [id_column, target])
    require_row_count(submission, answers)
    scores = to_numeric(submission[target])
    require_unit_interval(scores)
    sub = sort_by(submission.assign(**{target: scores}), id_column)
    ans = sort_by(answers, id_column)
    require_equal_ids(sub, ans, id_column)
    return ans[target].to_numpy(), sub[target].to_numpy()


def accuracy_inputs(
    submission: pd.DataFrame, answers: pd.DataFrame, id_column: str, target: str
) -> tuple[np.ndarray, np.ndarray]:
    """H-ACC: checks, then (answers labels, submitted labels) aligned by sorted ids."""
    require_row_count(submission, answers)
    require_columns(submission, [target, id_column])
    sub, ans = sort_by(submission, id_column), sort_by(answers, id_column)
    require_equal_ids(sub, ans, id_column)
    return ans[target].to_numpy(), sub[target].to_numpy()


def one_hot_inputs(
    submission: pd.DataFrame, answers: pd.DataFrame, id_column: str = "id"
) -> tuple[np.ndarray, pd.DataFrame]:
    """H-1HOT: (answers one-hot matrix, submission class columns) in the answers' column order,
    rows aligned by sorted ids; extra submission columns are dropped."""
    require_columns(submission, answers.columns)
    sub = sort_by(submission[list(answers.columns)], id_column)
    ans = sort_by(answers, id_column)
    if sub[id_column].tolist() != ans[id_column].tolist():
        raise InvalidSubmission(f"{id_column!r} values do not match the test set's")
    classes = [c for c in answers.columns if c != id_column]
    return ans[classes].to_numpy(), sub[classes]
