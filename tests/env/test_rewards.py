"""Rewards from real grades: every tier, both metric directions, invalid files, format rates."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from sandmle.env.rewards import (
    RewardSettings,
    format_reward,
    reasoning_well_formed,
    total_reward,
)
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.scorer import score_value

TIERS = ["gold", "silver", "bronze", "median", "below"]
DENSE_TIER = {"gold": 0.7, "silver": 0.6, "bronze": 0.5, "median": 0.1, "below": 0.0}


def place_thresholds(folder: Path, score: float, tier: str, lower_is_better: bool) -> None:
    """Rewrite the thresholds so that ``score`` lands exactly in ``tier``."""
    k, sign = TIERS.index(tier), (-1 if lower_is_better else 1)
    values = [score + sign * (k - i - 0.5) * 0.01 for i in range(4)]
    path = folder / "competition.yaml"
    config = yaml.safe_load(path.read_text())
    for key in ("leaderboard", "human_leaderboards"):
        config.pop(key, None)
    config["thresholds"] = dict(zip(["gold", "silver", "bronze", "median"], values, strict=True))
    path.write_text(yaml.safe_dump(config))


def plant_submission(folder: Path, out: Path) -> Path:
    answers = pd.read_csv(folder / "prepared/private/answers.csv")
    noisy = answers["needs_water"].to_numpy() * 0.6 + 0.2
    noisy[:3] = 1 - noisy[:3]  # a few mistakes: an AUC strictly between 0.5 and 1
    pd.DataFrame({"id": answers["id"], "needs_water": noisy}).to_csv(out, index=False)
    return out


def bike_submission(folder: Path, out: Path) -> Path:
    answers = pd.read_csv(folder / "prepared/private/answers.csv")
    answers.assign(rentals=answers["rentals"] + 3.0).to_csv(out, index=False)  # RMSE 3
    return out


def medal_for(folder: Path, submission: Path, tier: str) -> dict[str, float]:
    report = grade_csv(submission, load_competition(folder))
    place_thresholds(folder, report.score, tier, report.is_lower_better)
    return score_value(grade_csv(submission, load_competition(folder)), None)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("direction", ["higher", "lower"])
def test_dense_reward_for_every_tier_and_direction(
    tier: str, direction: str, plant_dir: Path, bike_dir: Path, tmp_path: Path
) -> None:
    folder, make = (
        (plant_dir, plant_submission) if direction == "higher" else (bike_dir, bike_submission)
    )
    medal = medal_for(folder, make(folder, tmp_path / "submission.csv"), tier)
    assert medal["valid_submission"] == 1.0
    turns = [["<think>plan</think>code", "no reasoning"]]  # format share 0.5
    dense = total_reward(RewardSettings(), ["…"], medal=[medal], assistant_turns=turns)
    assert dense == [pytest.approx(0.2 + DENSE_TIER[tier] + 0.05)]
    sparse = total_reward(
        RewardSettings(mode="sparse"), ["…"], medal=[medal], assistant_turns=turns
    )
    assert sparse == [pytest.approx(0.05 + (0.9 if tier == "gold" else 0.0))]


def test_invalid_submission_earns_only_format(plant_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "submission.csv"
    pd.DataFrame({"id": ["pot_040"], "wrong": [1]}).to_csv(bad, index=False)
    medal = score_value(grade_csv(bad, load_competition(plant_dir)), None)
    assert medal["valid_submission"] == 0.0 and math.isnan(medal["score"])
    missing = score_value(grade_csv(tmp_path / "absent.csv", load_competition(plant_dir)), None)
    turns = [["<think>a</think>"]] * 2
    rewards = total_reward(
        RewardSettings(), ["…"] * 2, medal=[medal, missing], assistant_turns=turns
    )
    assert rewards == [pytest.approx(0.1)] * 2


def test_custom_weights_and_tiers() -> None:
    settings = RewardSettings(valid_weight=0.0, format_weight=0.0, tiers={"gold_medal": 2.0})
    medal = {"valid_submission": 1.0, "gold_medal": 1.0, "above_median": 1.0}
    silver = {"valid_submission": 1.0, "silver_medal": 1.0, "above_median": 1.0}
    assert total_reward(settings, ["…"] * 2, medal=[medal, silver]) == [2.0, 0.0]


@pytest.mark.parametrize(
    ("turns", "rate"),
    [
        ([], 0.0),
        (["<think>x</think>a", "<think>y</think>b"], 1.0),
        (["<think>x</think>a", "b", "<think></think>c", "  <think>z</think>"], 0.5),
        (["text <think>late</think>", "<think>unclosed"], 0.0),
        (["<think>a<think>nested</think>"], 0.0),
    ],
)
def test_format_rates(turns: list[str], rate: float) -> None:
    assert format_reward(["…"], assistant_turns=[turns]) == [pytest.approx(rate)]


def test_reasoning_block_must_open_the_turn() -> None:
    assert reasoning_well_formed("\n<think>ok</think>")
    assert not reasoning_well_formed("answer first <think>x</think>")
