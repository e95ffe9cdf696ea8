"""MLE Developer (procedural): blueprint → hidden rule + data, one writer per modality.

The developer returns the data in memory (:class:`DevelopedTask`); the pipeline writes it.
Its saved artifact is the :class:`HiddenRule`, which says how the labels were made.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint, IdScheme
from sandmle.benchmarks.synthetic.strategist import role_rng

DATA_FLOAT_FORMAT = "%.6g"


class HiddenRule(BaseModel):
    """The ground-truth function behind the labels (never shown to the agent)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    """Rule family, e.g. 'tabular-interaction', 'keyword-poisson', 'shape-class'."""
    summary: str
    """One sentence a person can read."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The rule's parameters (weights, keywords, shapes)."""


class DevelopedTask(BaseModel):
    """The MLE Developer's output: tables, extra public files and the oracle's predictions."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rule: HiddenRule
    """How the labels were made."""
    train: pd.DataFrame
    """train.csv: id, features, labels."""
    test: pd.DataFrame
    """test.csv: id and features only."""
    answers: pd.DataFrame
    """Private answers: id and graded columns."""
    files: dict[str, bytes] = Field(default_factory=dict)
    """Extra public files by path relative to prepared/public (images)."""
    oracle: np.ndarray
    """Canonical predictions of the rule for the test rows."""
    sample: pd.DataFrame | None = None
    """sample_submission.csv when the task has its own (e.g. seq2seq copies ``before``)."""


def develop(bp: Blueprint) -> DevelopedTask:
    """Dispatch to the blueprint's modality writer, with the developer's own random stream."""
    from sandmle.benchmarks.synthetic.modalities import builder

    return builder(bp.dna.modality, bp.dna.task_type)(bp, role_rng(bp.entropy, 1))


def make_ids(scheme: IdScheme, n: int, rng: np.random.Generator, prefix: str = "r") -> pd.Series:
    """Unique ids in the seed's scheme; train and test take disjoint slices of them."""
    if scheme == "int":
        values: list[Any] = [int(v) for v in rng.choice(np.arange(1, 20 * n), n, replace=False)]
    elif scheme == "prefixed":
        values = [f"{prefix}_{v:05d}" for v in rng.choice(np.arange(100, 99999), n, replace=False)]
    else:
        values = []
        seen: set[str] = set()
        while len(values) < n:
            value = "".join("0123456789abcdef"[d] for d in rng.integers(0, 16, 12))
            if value not in seen:
                seen.add(value)
                values.append(value)
    return pd.Series(values, dtype=object if scheme != "int" else np.int64)


def file_rows_task(
    bp: Blueprint,
    rule: HiddenRule,
    ids: pd.Series,
    y: np.ndarray,
    oracle: np.ndarray,
    files: dict[str, bytes],
) -> DevelopedTask:
    """A task whose rows are files (an image or a clip per id): the csv holds only the ids,
    train rows get their labels, test rows' labels become the answers."""
    train, test = split_rows(bp, pd.DataFrame({bp.domain.id_column: ids}))
    train = pd.concat([train, tg.train_label_frame(bp, y[: bp.n_train])], axis=1)
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], y[bp.n_train :]),
        files=files,
        oracle=oracle[bp.n_train :],
    )


def split_rows(bp: Blueprint, frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """First n_train rows are train, the rest test (rows are generated in random order)."""
    train = frame.iloc[: bp.n_train].reset_index(drop=True)
    test = frame.iloc[bp.n_train :].reset_index(drop=True)
    return train, test
