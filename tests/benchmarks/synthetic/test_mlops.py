"""The thresholds rule: strictly monotonic in the metric's direction, oracle at gold."""

from __future__ import annotations

import pytest

from sandmle.benchmarks.synthetic.baselines import BaselineScores
from sandmle.benchmarks.synthetic.mlops import place_milestones
from sandmle.benchmarks.synthetic.seeds import get_seed
from sandmle.benchmarks.synthetic.strategist import TaskRequest, plan


def _blueprint(seed: str):
    return plan(TaskRequest(index=0, dna=get_seed(seed), entropy=[0, 0, 0]))


@pytest.mark.parametrize(
    ("seed", "scores", "lower"),
    [
        ("tabular-playground-series-may-2022", (0.5, 0.7, 0.8, 0.9), False),
        ("new-york-city-taxi-fare-prediction", (30.0, 20.0, 15.0, 10.0), True),
        ("leaf-classification", (1.6, 2.5, 1.2, 0.9), True),  # linear worse than dummy
    ],
)
def test_thresholds_follow_the_rule(seed, scores, lower):
    dummy, linear, strong, oracle = scores
    s = BaselineScores(
        dummy=dummy, linear=linear, strong=strong, oracle=oracle, is_lower_better=lower
    )
    t = place_milestones(_blueprint(seed), s).thresholds
    sign = -1 if lower else 1
    g = [sign * v for v in (t.gold, t.silver, t.bronze, t.median)]
    assert g[0] > g[1] > g[2] > g[3]
    assert t.median == (min(dummy, linear) if lower else max(dummy, linear))
    assert sign * oracle >= g[0] > sign * strong


def test_probability_tasks_get_range_and_row_sum_checks():
    options = place_milestones(
        _blueprint("leaf-classification"),
        BaselineScores(dummy=1.6, linear=1.4, strong=1.2, oracle=0.9, is_lower_better=True),
    ).grader_options
    assert options["probabilities"] is True and options["row_sum"] is True
