"""bench/toolkit_variants.py's choice summary: the best fixed level against the per-task oracle,
and the design rule of issue #52 (oracle at least 15 points above the best fixed level, every
fixed level at least 10 below it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "toolkit_variants", ROOT / "bench" / "toolkit_variants.py"
)
assert spec and spec.loader
toolkit_variants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(toolkit_variants)


def rows(table: dict[str, dict[int, bool]]) -> list[dict]:
    return [
        {"task": task, "level": level, "above_median": above}
        for task, levels in table.items()
        for level, above in levels.items()
    ]


def test_one_level_that_wins_everywhere_leaves_nothing_to_choose():
    table = {f"t{i}": {0: False, 3: True, 4: i % 2 == 0} for i in range(10)}
    choice = toolkit_variants.choice_value(rows(table))
    assert choice["best_fixed"] == {"level": 3, "above_median_pct": 100.0}
    assert choice["oracle_above_median_pct"] == 100.0
    assert choice["oracle_minus_best_fixed"] == 0.0 and not choice["design_holds"]


def test_levels_that_win_on_different_tasks_make_the_choice_worth_learning():
    # each task has one level above the median: the oracle gets all, any fixed level a third
    table = {f"t{i}": {level: level == i % 3 for level in range(3)} for i in range(9)}
    choice = toolkit_variants.choice_value(rows(table))
    assert choice["fixed_above_median_pct"] == {"0": 33.3, "1": 33.3, "2": 33.3}
    assert choice["oracle_above_median_pct"] == 100.0 and choice["design_holds"]
