"""The ranking cell codec: taken items to cells, scores to the k best, cells back to 0/1."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.blueprint import Blueprint, TaskRequest
from sandmle.benchmarks.synthetic.modalities import ranking
from sandmle.benchmarks.synthetic.ranked_cells import encode_cells, taken_cells, top_k_cells
from sandmle.benchmarks.synthetic.seeds import SEEDS

RANKING = "h-and-m-personalized-fashion-recommendations"


def catalogue(items: list[str], metric: str) -> Blueprint:
    """A ranking blueprint whose catalogue is ``items``, scored by ``metric``."""
    dna = SEEDS[RANKING].model_copy(update={"n_outputs": len(items), "metric": metric})
    bp = ranking.plan(TaskRequest(index=0, dna=dna, entropy=[1, 2, 3]), "procedural")
    return bp.model_copy(update={"domain": bp.domain.model_copy(update={"class_names": items})})


def test_top_k_cells_and_encode_round_trip():
    bp = catalogue(["a", "b", "c", "d"], "map_at_3")
    cells = top_k_cells(bp, np.array([[0.1, 0.9, 0.5, 0.9], [0, 0, 0, 0]]))
    assert cells == ["b d c", "a b c"]  # ties keep catalogue order
    assert encode_cells(bp, pd.Series(["d a", "zz", np.nan])).tolist() == [
        [1, 0, 0, 1],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
    ]
    assert taken_cells(bp, np.array([[0, 1, 1, 0]])) == ["b c"]
    assert encode_cells(bp, pd.Series(taken_cells(bp, np.eye(4)))).tolist() == np.eye(4).tolist()


def test_a_metric_without_k_lists_twelve_items():
    bp = catalogue([f"i{n}" for n in range(20)], "accuracy")
    (cell,) = top_k_cells(bp, np.arange(20.0)[None, :])
    assert cell.split() == [f"i{n}" for n in range(19, 7, -1)]
