"""Checkpoints of one training run: which curves can be tested, and the paired test itself."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from sandmle.leaderboard import curves, stats
from sandmle.leaderboard.logs import load_logs

from .conftest import CHECKPOINTS

COMPETITIONS = [f"c{i}" for i in range(6)]


def _checkpoints(medals: dict[int, list[float]], scaffold: str = "react") -> pd.DataFrame:
    """One run's checkpoints (step -> any-medal per competition), one sample each."""
    rows = [
        {"checkpoint_run": "runs/grpo", "scaffold": scaffold, "benchmark": "synthetic",
         "checkpoint_step": float(step), "competition_id": comp, "any_medal": medal}
        for step, flags in medals.items()
        for comp, medal in zip(COMPETITIONS, flags, strict=True)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_a_step_that_wins_every_competition_is_better() -> None:
    samples = _checkpoints({100: [0.0] * 6, 200: [0.0, 1, 0, 1, 0, 0], 300: [1.0] * 6})
    curve = ("runs/grpo", "react", "synthetic")
    assert curves.curves_with_steps(samples) == {curve: [100, 200, 300]}
    row = curves.compare_steps(samples, curve, 300, 100).iloc[0]
    assert row["verdict"] == "step 300 better" and row["A − B"] == "+100 pts"
    assert row["p"] == "0.031" and row["competitions"] == 6  # 6 of 6 one way: 2 / 2**6
    row = curves.compare_steps(samples, curve, 200, 100).iloc[0]
    assert row["verdict"] == "≈ tie" and row["p"] == "0.500"  # 2 of 2 discordant: not enough


def test_first_against_last_for_each_curve_with_two_steps() -> None:
    samples = pd.concat(
        [
            _checkpoints({100: [0.0] * 6, 300: [1.0] * 6}),
            _checkpoints({100: [1.0] * 6, 300: [1.0] * 6}, scaffold="aide"),
            _checkpoints({100: [1.0] * 6}, scaffold="aira_greedy"),  # one step: no test
        ]
    )
    table = curves.first_against_last(samples)
    assert list(table["scaffold"]) == ["aide", "react"]
    assert list(table["verdict"]) == ["≈ tie", "step 300 better"]
    assert curves.first_against_last(samples.iloc[:0]).empty


def test_the_session_checkpoints_share_too_few_competitions(log_dir: Path) -> None:
    samples = load_logs([log_dir]).samples
    ((curve, steps),) = curves.curves_with_steps(samples).items()
    assert curve == (CHECKPOINTS[0].rsplit("/", 1)[0], "trained_policy", "mini")
    assert steps == [100, 200]
    row = curves.compare_steps(samples, curve, 200, 100).iloc[0]
    assert row["verdict"] == stats.too_few() and row["competitions"] == 1


def test_another_metric_is_compared_on_its_own_flags() -> None:
    samples = _checkpoints({100: [0.0] * 6, 300: [1.0] * 6}).assign(valid_submission=1.0)
    curve = ("runs/grpo", "react", "synthetic")
    row = curves.compare_steps(samples, curve, 300, 100, "valid_submission").iloc[0]
    assert row["verdict"] == "≈ tie" and row["A − B"] == "+0 pts"
