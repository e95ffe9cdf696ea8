"""The baselines whose scores place the milestones: the learner ladder plus the oracle.

``constant``, ``generic`` and ``structure`` are the learners of
:mod:`sandmle.benchmarks.synthetic.learners`, run on the public files as written. The
``oracle`` is the hidden rule's own prediction from the clean latent values: it is kept in
``generation/`` as a ceiling for reference and never sets a milestone.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask
from sandmle.benchmarks.synthetic.learners import PublicData, ladder

BASELINES = ("constant", "generic", "structure", "oracle")


class BaselineScores(BaseModel):
    """Scores of the baselines on the full test set, as graded (5 decimals)."""

    model_config = ConfigDict(extra="forbid")

    constant: float | None
    """Best constant for the metric."""
    generic: float | None
    """CV-tuned model on generic features, no knowledge of the rule."""
    structure: float | None
    """The rule's form applied to the noisy public features, weights fit on train."""
    oracle: float | None
    """The hidden rule on the clean latent values (reference only)."""
    is_lower_better: bool
    """Direction of the metric."""

    def as_dict(self) -> dict[str, float | None]:
        return {name: getattr(self, name) for name in BASELINES}


def predict_baselines(
    bp: Blueprint, task: DevelopedTask, public: PublicData
) -> dict[str, np.ndarray]:
    """Canonical test predictions of every baseline."""
    predictions = ladder(bp, task.rule, public)
    # A model-written rule has no machine-readable form: its oracle.csv (the rule applied
    # to the noisy features) stands in, and the sanity gate checks it is not the answers.
    predictions.setdefault("structure", task.oracle)
    predictions["oracle"] = task.oracle
    return predictions
