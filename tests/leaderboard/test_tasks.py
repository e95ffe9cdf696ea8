"""Task separation, saturation and the normalised score; cost beside quality."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sandmle.harness.scorer import FLAGS
from sandmle.leaderboard.tasks import NA, cost_table, normalised_score, task_table


def _sample(model: str, competition: str, medal: int, **extra: object) -> dict[str, object]:
    return {"model": model, "scaffold": "s", "benchmark": "b", "run": "r",
            "competition_id": competition, **dict.fromkeys(FLAGS, float(medal)),
            "valid_submission": 1.0, "score": 0.5, "median_threshold": 0.0,
            "gold_threshold": 1.0, "tokens": 0, "input_tokens": 0, "output_tokens": 0,
            "working_time": 1.0, "total_time": 2.0, **extra}  # fmt: skip


def test_tasks_sort_by_separation_and_flag_saturation() -> None:
    frame = pd.DataFrame([
        _sample("a", "split", 1), _sample("b", "split", 0),
        _sample("a", "easy", 1), _sample("b", "easy", 1),
        _sample("a", "hard", 0), _sample("b", "hard", 0),
    ])  # fmt: skip
    table = task_table(frame).set_index("competition")
    assert list(table.index) == ["split", "easy", "hard"]
    assert table.loc["split", "separation"] == 0.25  # half medal, half not: the most
    assert table.loc["easy", "saturated"] == "all medal"
    assert table.loc["hard", "saturated"] == "none medal"
    assert table.loc["split", "saturated"] == ""


def test_normalised_score_runs_from_median_to_gold_in_either_direction() -> None:
    frame = pd.DataFrame([
        _sample("a", "c", 0, score=0.5),  # halfway up a higher-is-better scale
        _sample("a", "c", 0, score=2.0, median_threshold=4.0, gold_threshold=0.0),  # lower
        _sample("a", "c", 0, valid_submission=0.0),
    ])  # fmt: skip
    values = normalised_score(frame)
    assert values.iloc[0] == pytest.approx(0.5) and values.iloc[1] == pytest.approx(0.5)
    assert math.isnan(values.iloc[2])


def test_cost_reads_na_for_a_policy_without_tokens() -> None:
    frame = pd.DataFrame([
        _sample("offline", "c", 1), _sample("offline", "d", 0),
        _sample("llm", "c", 1, tokens=300, input_tokens=200, output_tokens=100),
        _sample("llm", "d", 1, tokens=100, input_tokens=80, output_tokens=20),
    ])  # fmt: skip
    cost = cost_table(frame).set_index("entrant")
    assert cost.loc["offline · s", "tokens in / sample"] == NA
    assert cost.loc["llm · s", "tokens in / sample"] == "140"
    assert cost.loc["llm · s", "tokens out / sample"] == "60"
    assert cost.loc["llm · s", "Any medal %"] == 100.0
    assert cost.loc["offline · s", "wall s / sample"] == 2.0
