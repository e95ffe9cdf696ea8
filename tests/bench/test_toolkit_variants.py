"""bench/toolkit_variants.py's choice summary: the best fixed option against the per-task
oracle, and the design rule of issue #52 (oracle at least 15 points above the best fixed
option, every fixed option at least 10 below it)."""

from __future__ import annotations

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
