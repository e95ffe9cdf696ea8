"""MLOps Engineer: the grader options and the milestones, placed from the baseline scores.

The rule (scores in "goodness" g: the score, negated when lower is better):

* median = the better of dummy and linear: a submission must beat the simple baselines
  to be above median;
* gold = halfway from max(strong, median) to the oracle: the strong off-the-shelf model
  rarely reaches it, the rule itself always does;
* bronze = median + 40% of (gold - median), silver = median + 70%.

Gold is rounded down (in g) to the 5-decimal grid, so the oracle still reaches it, and all
four are rounded to 5 decimals, the precision scores are graded at.
A task whose oracle is not clearly better than its simple baselines gets thresholds that are
not strictly monotonic, and the sanity gate rejects it.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from sandmle.benchmarks.synthetic.baselines import BaselineScores
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.harness.competition import Thresholds

DECIMALS = 5
BRONZE_SHARE, SILVER_SHARE, GOLD_SHARE = 0.4, 0.7, 0.5
RULE = "median=max(dummy,linear); gold=a+0.5*(oracle-a), a=max(strong,median); bronze/silver at 40%/70%"


class Milestones(BaseModel):
    """The MLOps Engineer's output: grader options and thresholds, with how they were placed."""

    model_config = ConfigDict(extra="forbid")

    thresholds: Thresholds
    """Gold/silver/bronze/median in the metric's units."""
    is_lower_better: bool
    """Direction of the metric."""
    grader_options: dict[str, Any]
    """Options of the ``standard`` grader."""
    rule: str = RULE
    """The placement rule, in one line."""


def place_milestones(bp: Blueprint, scores: BaselineScores) -> Milestones:
    """Thresholds from baseline scores by the documented rule."""
    sign = -1.0 if scores.is_lower_better else 1.0
    g = {name: sign * value for name, value in scores.as_dict().items() if value is not None}
    median = max(g.get("dummy", -math.inf), g.get("linear", -math.inf))
    anchor = max(g.get("strong", -math.inf), median)
    gold = anchor + GOLD_SHARE * (g["oracle"] - anchor)
    gold = math.floor(gold * 10**DECIMALS) / 10**DECIMALS  # never above the oracle
    values = {
        "gold": gold,
        "silver": median + SILVER_SHARE * (gold - median),
        "bronze": median + BRONZE_SHARE * (gold - median),
        "median": median,
    }
    thresholds = Thresholds(**{k: round(sign * v, DECIMALS) + 0.0 for k, v in values.items()})
    return Milestones(
        thresholds=thresholds,
        is_lower_better=scores.is_lower_better,
        grader_options=grader_options(bp),
    )


def grader_options(bp: Blueprint) -> dict[str, Any]:
    """Probability columns must lie in [0, 1]; class probabilities must also sum to 1."""
    options: dict[str, Any] = {"extra_columns": "ignore"}
    if bp.dna.target_kind == "prob":
        options["probabilities"] = True
        options["row_sum"] = bp.dna.task_type == "multiclass"
    return options
