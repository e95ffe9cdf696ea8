"""bench/toolkit_variants.py's choice summary: the best fixed option against the per-task
oracle, and the design rule of issue #52 (oracle at least 15 points above the best fixed
option, every fixed option at least 10 below it)."""

from __future__ import annotations

import pytest

from sandmle.env.rewards import TIER_FLAGS
from sandmle.specs.training import RewardSettings
from tests.bench import bench_script

toolkit_variants = bench_script("toolkit_variants")


def rows(table: dict[str, dict[str, bool]]) -> list[dict]:
    return [
        {"task": task, "option": option, "above_median": above}
        for task, options in table.items()
        for option, above in options.items()
    ]


def test_one_option_that_wins_everywhere_leaves_nothing_to_choose():
    table = {f"t{i}": {"table": False, "text": True, "images": i % 2 == 0} for i in range(10)}
    choice = toolkit_variants.choice_value(rows(table))
    assert choice["best_fixed"] == {"option": "text", "above_median_pct": 100.0}
    assert choice["oracle_above_median_pct"] == 100.0
    assert choice["oracle_minus_best_fixed"] == 0.0 and not choice["design_holds"]


def test_options_that_win_on_different_tasks_make_the_choice_worth_learning():
    # each task has one option above the median: the oracle gets all, any fixed option a third
    names = ("table", "text", "images")
    table = {f"t{i}": {o: o == names[i % 3] for o in names} for i in range(9)}
    choice = toolkit_variants.choice_value(rows(table))
    assert choice["fixed_above_median_pct"] == {"table": 33.3, "text": 33.3, "images": 33.3}
    assert choice["oracle_above_median_pct"] == 100.0 and choice["design_holds"]


def test_a_fixed_option_near_the_oracle_fails_the_design():
    # the oracle beats the best by 20 points, but a second option sits 5 points below it
    table = {f"t{i}": {"a": i < 16, "b": i < 19, "c": i >= 16} for i in range(20)}
    choice = toolkit_variants.choice_value(rows(table))
    assert choice["oracle_above_median_pct"] == 100.0
    assert choice["best_fixed"] == {"option": "b", "above_median_pct": 95.0}
    assert not choice["design_holds"]


def flags(valid: bool, tier: str | None = None) -> dict[str, bool]:
    return {"valid_submission": valid, **{f: f == tier for f in TIER_FLAGS}}


def test_the_dense_reward_of_a_call_is_the_training_rewards():
    settings = RewardSettings()
    gold = toolkit_variants.dense_reward(flags(True, "gold_medal"))
    assert gold == pytest.approx(settings.valid_weight + settings.tiers["gold_medal"])
    assert toolkit_variants.dense_reward(flags(True)) == pytest.approx(settings.valid_weight)
    # a file the grader refuses earns nothing, whatever the flags say
    assert toolkit_variants.dense_reward(flags(False, "gold_medal")) == 0.0


def test_an_option_valid_everywhere_is_the_safe_bet_the_oracle_beats():
    # table: valid on all four tasks, above the median on the three tabular ones; text: gold on
    # the text task and refused on the others
    valid, above = RewardSettings().valid_weight, RewardSettings().tiers["above_median"]
    gold = RewardSettings().tiers["gold_medal"]
    table = {"tab1": "above_median", "tab2": "above_median", "tab3": "above_median", "txt1": None}
    rows = [
        {"task": task, "option": "table", "reward": toolkit_variants.dense_reward(flags(True, t))}
        for task, t in table.items()
    ] + [
        {"task": task, "option": "text",
         "reward": toolkit_variants.dense_reward(flags(task.startswith("txt"), "gold_medal"))}
        for task in table
    ]  # fmt: skip
    value = toolkit_variants.reward_value(rows)
    assert value["best_fixed"]["option"] == "table"
    assert value["best_fixed"]["mean_reward"] == round(valid + 3 * above / 4, 3)
    assert value["fixed_mean_reward"]["text"] == round((valid + gold) / 4, 3)
    assert value["oracle_mean_reward"] == round(valid + (3 * above + gold) / 4, 3)
