"""Row helpers the modality writers share: ids in the seed's scheme, the train/test split,
and a task whose rows are files (an image or a clip per id)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule
from sandmle.benchmarks.synthetic.blueprint import Blueprint, IdScheme


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


def split_rows(bp: Blueprint, frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """First n_train rows are train, the rest test (rows are generated in random order)."""
    train = frame.iloc[: bp.n_train].reset_index(drop=True)
    test = frame.iloc[bp.n_train :].reset_index(drop=True)
    return train, test


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
