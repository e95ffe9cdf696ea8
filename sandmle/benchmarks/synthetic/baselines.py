"""The baselines whose scores place the milestones: the learner ladder plus the oracle.

Three learners see only the public files (and, for one, the rule's shape):

* ``constant``: the best constant prediction for the metric;
* ``generic``: knows nothing of the rule; picks a model for the modality's standard
  features by 3-fold cross-validation (regularised linear model or gradient boosting);
* ``structure``: is told the rule's *form* (``rule.params["structure"]``: which columns,
  terms, keywords, periods) but not its weights, applies it to the noisy public features,
  and fits the weights on ``train.csv``. It never reads the answers.

A modality with its own ``ladder`` (seq2seq texts, denoising) runs its own learners. The
``oracle`` is the hidden rule's own prediction from the clean latent values: it is kept in
``generation/`` as a ceiling for reference and never sets a milestone. The same code runs
inside the generator (to place the milestones) and in ``bench/synth_difficulty.py`` (from
the files on disk), so both see identical inputs.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule, PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.learners import constant, fit_predict
from sandmle.benchmarks.synthetic.modalities.registry import modality_of

LEARNERS = ("constant", "generic", "structure")
BASELINES = (*LEARNERS, "oracle")


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


def ladder(bp: Blueprint, rule: HiddenRule, data: PublicData) -> dict[str, np.ndarray]:
    """Canonical test predictions of the learners (``structure`` only when the rule has a form)."""
    modality = modality_of(bp.dna)
    if modality.ladder is not None:  # predictions that are not a float matrix (seq2seq texts)
        return modality.ladder(bp, rule, data)
    y = tg.encode_train_targets(bp, data.train)
    x_train, x_test = modality.features(bp, data)
    out = {
        "constant": constant(bp, y, len(data.test)),
        "generic": fit_predict(bp, y, x_train, x_test, tuned=True),
    }
    if "structure" in rule.params:  # a rule written by a model may not say its form
        s_train, s_test = modality.structure_features(bp, rule, data)
        out["structure"] = fit_predict(bp, y, s_train, s_test, tuned=False)
    return out


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
