"""Pooling and the derived tables, on the session's real logs."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from sandmle.leaderboard import tables
from sandmle.leaderboard.logs import load_logs

from .conftest import CHECKPOINTS, MODELS


@pytest.fixture(scope="module")
def samples(log_dir: Path) -> pd.DataFrame:
    return load_logs([log_dir]).samples


def _row(table: pd.DataFrame, **key: str) -> pd.Series:
    mask = pd.Series(True, index=table.index)
    for column, value in key.items():
        mask &= table[column] == value
    (index,) = table.index[mask]
    return table.loc[index]


def test_runs_are_pooled_across_logs_and_epochs(samples: pd.DataFrame) -> None:
    table = tables.leaderboard_table(samples)
    floor = _row(table, model=MODELS[0], scaffold="copy_sample_submission", benchmark="synthetic")
    assert (floor["n"], floor["logs"], floor["competitions"]) == (6, 2, 2)
    assert floor["valid_submission"] == 100.0 and floor["any_medal"] == 0.0
    perfect = _row(table, model=MODELS[0], scaffold="copy_answers", benchmark="synthetic")
    assert perfect["gold_medal"] == 100.0 and perfect["any_medal_stderr"] == 0.0
    assert len(table) == 7  # 8 logs, two of them pooled


def test_table_is_ranked_by_any_medal(samples: pd.DataFrame) -> None:
    table = tables.leaderboard_table(samples)
    assert table["any_medal"].is_monotonic_decreasing
    assert table.iloc[0]["any_medal"] == 100.0 and table.iloc[-1]["any_medal"] == 0.0


def test_stderr_is_pooled_over_observations() -> None:
    frame = pd.DataFrame(
        {
            "model": "m", "scaffold": "s", "benchmark": "b", "log": ["l1", "l1", "l2", "l2"],
            "competition_id": ["c1", "c2", "c1", "c2"], "checkpoint_step": math.nan,
            "created": pd.Timestamp("2026-01-01", tz="UTC"),
            **{flag: [1.0, 0.0, 1.0, 1.0] for flag in tables.RATES},
            "human_rank": [0.5, math.nan, 0.7, math.nan],
        }
    )  # fmt: skip
    row = tables.leaderboard_table(frame).iloc[0]
    assert row["any_medal"] == 75.0
    assert row["any_medal_stderr"] == pytest.approx(100 * 0.5 / 2)  # sd 0.5 over n=4
    assert row["human_rank"] == pytest.approx(0.6) and row["n"] == 4


def test_generalization_reports_spread_and_drop(samples: pd.DataFrame) -> None:
    table = tables.leaderboard_table(samples)
    synthetic = table[table["benchmark"] == "synthetic"]
    gen = tables.generalization_table(synthetic, "any_medal").set_index("model")
    assert gen.loc[MODELS[0], "best_scaffold"] == "copy_answers"
    assert gen.loc[MODELS[0], "spread"] == 100.0
    assert gen.loc[MODELS[0], "drop: copy_sample_submission"] == 100.0
    assert gen.loc[MODELS[0], "drop: copy_answers"] == 0.0
    assert gen.loc[MODELS[1], "spread"] == 0.0


def test_filters_and_competition_breakdown(samples: pd.DataFrame) -> None:
    kept = tables.filter_samples(samples, models=[MODELS[1]], benchmarks=["synthetic"])
    assert set(kept["model"]) == {MODELS[1]} and set(kept["benchmark"]) == {"synthetic"}
    future = pd.Timestamp("2100-01-01", tz="UTC")
    assert tables.filter_samples(samples, since=future).empty
    wide = tables.competition_table(samples, "gold_medal")
    assert set(wide.columns) == {"plant-watering", "bike-rentals"}
    assert wide.loc[f"{MODELS[1]} · toy_tree_search", "bike-rentals"] == 100.0


def test_training_curve_has_one_point_per_step(samples: pd.DataFrame) -> None:
    curve = tables.training_curve_table(samples)
    assert list(curve["checkpoint_step"]) == [100, 200]
    assert list(curve["any_medal"]) == [0.0, 100.0]
    assert set(curve["checkpoint_run"]) == {CHECKPOINTS[0].rsplit("/", 1)[0]}


def test_display_table_shows_value_and_stderr(samples: pd.DataFrame) -> None:
    shown = tables.display_table(tables.leaderboard_table(samples))
    assert "Any medal %" in shown.columns and "HumanRank" in shown.columns
    assert shown["Any medal %"].iloc[0] == "100.0 ± 0.0"
    assert set(shown["step"]) == {"", "100", "200"}
