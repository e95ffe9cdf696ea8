"""Pooling and the derived tables, on the session's real logs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandmle.leaderboard import stats, tables
from sandmle.leaderboard.logs import load_logs, pool_runs, run_label

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


def test_two_runs_are_two_entrants_with_their_run_ids(log_dir: Path) -> None:
    loaded = load_logs([log_dir])
    table = tables.leaderboard_table(loaded.samples)
    key = {"model": MODELS[0], "scaffold": "copy_sample_submission", "benchmark": "synthetic"}
    twice = table[(table[list(key)] == pd.Series(key)).all(axis=1)]
    assert sorted(twice["n"]) == [2, 4] and set(twice["logs"]) == {1}  # one epoch, and two
    run_ids = set(loaded.runs["run_id"])
    assert len(set(twice["run"])) == 2
    assert all(any(r.startswith(run) for r in run_ids) for run in twice["run"])
    names = set(tables.entrant_names(twice))
    assert names == {f"{MODELS[0]} · copy_sample_submission · run {r}" for r in twice["run"]}
    once = _row(table, model=MODELS[0], scaffold="copy_answers", benchmark="synthetic")
    assert once["entrant"] == f"{MODELS[0]} · copy_answers"  # one run: no run in its name
    assert len(table) == 8  # 8 logs of 8 runs: none pooled
    assert "run" in tables.compact_table(table).columns


def test_runs_are_pooled_across_logs_and_epochs_only_when_asked(samples: pd.DataFrame) -> None:
    table = tables.leaderboard_table(pool_runs(samples))
    floor = _row(table, model=MODELS[0], scaffold="copy_sample_submission", benchmark="synthetic")
    assert (floor["n"], floor["logs"], floor["competitions"], floor["epochs"]) == (6, 2, 2, 3)
    assert floor["valid_submission"] == 100.0 and floor["any_medal"] == 0.0
    # 0 of 6 sample-epochs, but only 2 competitions: the interval is that of 0/2
    assert floor["any_medal_high"] == pytest.approx(100 * stats.wilson(0, 2)[1])
    assert floor["any_medal_text"] == "0% [0–66] 0/6"
    assert floor["entrant"] == f"{MODELS[0]} · copy_sample_submission"
    perfect = _row(table, model=MODELS[0], scaffold="copy_answers", benchmark="synthetic")
    assert perfect["gold_medal"] == 100.0 and perfect["any_medal_low"] < 100.0
    assert len(table) == 7  # 8 logs, two of them pooled
    assert "run" not in tables.compact_table(table).columns


def test_a_run_tag_names_the_run() -> None:
    assert run_label(["x", "run:seed-1"], "AbCdEfGhIjKl", "e1") == "seed-1"
    assert run_label([], "AbCdEfGhIjKl", "e1") == "AbCdEfGh"
    assert run_label(None, None, "EvalId123456") == "EvalId12"


def test_table_groups_ties_in_rank(samples: pd.DataFrame) -> None:
    table = tables.leaderboard_table(samples)
    assert list(table["benchmark"]) == sorted(table["benchmark"])
    # two competitions cannot tell 100% from 0% apart (McNemar p = 0.5): one shared rank
    assert set(table["rank"]) == {"1="}
    for _, part in table.groupby("benchmark"):
        assert part["any_medal"].is_monotonic_decreasing


def test_human_rank_without_data_is_a_dash(samples: pd.DataFrame) -> None:
    shown = tables.display_table(tables.leaderboard_table(samples))
    mini = shown[shown["benchmark"] == "mini"]
    assert set(mini["HumanRank"]) == {"—"}  # plant-watering has no human leaderboard
    assert not shown.apply(lambda col: col.astype(str).str.contains("None")).any().any()


def test_interval_is_clustered_by_competition() -> None:
    frame = pd.DataFrame(
        {
            "model": "m", "scaffold": "s", "benchmark": "b", "run": "r",
            "log": ["l1", "l1", "l2", "l2"],
            "competition_id": ["c1", "c2", "c1", "c2"], "checkpoint_step": math.nan,
            "created": pd.Timestamp("2026-01-01", tz="UTC"),
            **{flag: [1.0, 0.0, 1.0, 1.0] for flag in tables.RATES},
            "human_rank": [0.5, math.nan, 0.7, math.nan],
        }
    )  # fmt: skip
    row = tables.leaderboard_table(frame).iloc[0]
    assert row["any_medal"] == 75.0 and row["n"] == 4 and row["epochs"] == 2
    n_eff = stats.effective_n(np.array([1.0, 0.0, 1.0, 1.0]), np.array(["c1", "c2", "c1", "c2"]))
    assert 2.0 <= n_eff <= 4.0
    assert row["any_medal_low"] == pytest.approx(100 * stats.wilson(0.75 * n_eff, n_eff)[0])
    assert row["human_rank"] == pytest.approx(0.6)


def test_generalization_names_no_best_scaffold_among_ties(samples: pd.DataFrame) -> None:
    table = tables.leaderboard_table(samples)
    synthetic = table[table["benchmark"] == "synthetic"]
    gen = tables.generalization_table(synthetic, "any_medal", samples).set_index("model")
    # 100% against 0% on two competitions cannot be significant: no winner, and it says why
    best = gen.loc[MODELS[0], "best scaffold"]
    assert best == "too few (2 < 6): copy_answers, copy_sample_submission"
    assert gen.loc[MODELS[0], "spread"] == 100.0
    assert gen.loc[MODELS[0], "drop: copy_sample_submission"] == 100.0
    assert gen.loc[MODELS[0], "drop: copy_answers"] == 0.0
    assert gen.loc[MODELS[1], "best scaffold"] == "toy_tree_search"  # its only scaffold
    assert gen.loc[MODELS[1], "spread"] == 0.0


def test_pairwise_table_says_two_competitions_cannot_decide(samples: pd.DataFrame) -> None:
    pairs = tables.pairwise_table(samples)
    names = {f"{MODELS[0]} · copy_answers", f"{MODELS[1]} · toy_tree_search"}
    same = pairs[pairs["A"].isin(names) & pairs["B"].isin(names)].iloc[0]
    assert (same["A − B"], same["p"], same["detectable"]) == ("+0 pts", "1.000", "—")
    assert same["verdict"] == stats.too_few() == "too few shared competitions to decide (needs ≥ 6)"
    assert set(pairs["benchmark"]) == {"mini", "synthetic"}


def test_pairwise_table_follows_the_given_order(samples: pd.DataFrame) -> None:
    synthetic = samples[samples["benchmark"] == "synthetic"]
    names = sorted(set(tables.entrant_names(synthetic)), reverse=True)
    pairs = tables.pairwise_table(synthetic, adjacent=True, order=names)
    assert list(pairs["A"]) == names[:-1] and list(pairs["B"]) == names[1:]


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


def test_display_and_compact_tables(samples: pd.DataFrame) -> None:
    table = tables.leaderboard_table(samples)
    shown = tables.display_table(table)
    assert "Any medal %" in shown.columns and "HumanRank" in shown.columns
    assert shown["Any medal %"].iloc[0] == "100% [21–100] 1/1"
    assert set(shown["step"]) == {"", "100", "200"}
    compact = tables.compact_table(table)
    assert list(compact.columns) == [
        "rank", "model", "scaffold", "benchmark", "run", "Any medal %", "Valid %",
        "Above median %",
    ]  # fmt: skip
