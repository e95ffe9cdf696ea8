"""The ranking cell codec: a cell of space-separated catalogue item ids (MAP@k tasks).

Ranking targets are one cell per user holding the ids of the items taken (train.csv and the
answers) or the k best guesses, best first (a submission). The catalogue's ids are
``domain.class_names``, in catalogue order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.harness.grading.metrics import ranking_k

DEFAULT_K = 12
"""Ids per submission cell when the metric does not name its k."""


def taken_cells(bp: Blueprint, taken: np.ndarray) -> list[str]:
    """0/1 rows -> space-separated item ids (catalogue order)."""
    items = np.array(bp.domain.class_names, dtype=object)
    return [" ".join(items[np.flatnonzero(row)]) for row in np.asarray(taken)]


def top_k_cells(bp: Blueprint, scores: np.ndarray) -> list[str]:
    """Scores per item -> the k best item ids, best first (ties keep catalogue order)."""
    k = ranking_k(bp.dna.metric) or DEFAULT_K
    items = np.array(bp.domain.class_names, dtype=object)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), axis=1, kind="stable")[:, :k]
    return [" ".join(items[row]) for row in order]


def encode_cells(bp: Blueprint, values: pd.Series) -> np.ndarray:
    """Space-separated item ids -> 0/1 matrix over the catalogue (unknown ids ignored)."""
    index = {name: j for j, name in enumerate(bp.domain.class_names)}
    out = np.zeros((len(values), len(index)), dtype=np.float64)
    for row, cell in enumerate(values):
        for item in str(cell).split() if isinstance(cell, str) else []:
            if item in index:
                out[row, index[item]] = 1.0
    return out
