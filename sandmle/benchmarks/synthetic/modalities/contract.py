"""The contract a modality meets: what the roles ask of it.

Each modality module (``tabular``, ``text``, ``image``, ``timeseries``, ``audio``) and each
task type with its own structure (``seq2seq``, ``denoise`` for image-to-image, ``ranking``)
ends with ``MODALITY = Modality(...)``; :mod:`.registry` maps a seed's DNA to one of them.

Required, for every task:

* ``build``: the MLE Developer's data writer, blueprint and its stream -> hidden rule + data;
* ``features``: the generic learner's input, a (train, test) pair of float matrices;
* ``structure_features``: the structure-aware learner's input, built from the rule's form
  (``rule.params["structure"]``), never its weights.

Optional (None: the generic role does it):

* ``plan``: the task's own blueprints (sizes, names, form), instead of the generic draws;
* ``ladder``: its own learners, when predictions are not a float matrix (seq2seq texts) or
  its models differ (denoising: folds of whole pages);
* ``describe``: the :class:`Specifics` the Technical Writer states exactly about its files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.artifacts import (
    DevelopedTask,
    HiddenRule,
    PublicData,
    Specifics,
)
from sandmle.benchmarks.synthetic.blueprint import Blueprint, TaskRequest

Matrices = tuple[np.ndarray, np.ndarray]
"""Train and test rows of one feature matrix."""
BuildFn = Callable[[Blueprint, np.random.Generator], DevelopedTask]
FeaturesFn = Callable[[Blueprint, PublicData], Matrices]
StructureFn = Callable[[Blueprint, HiddenRule, PublicData], Matrices]
PlanFn = Callable[[TaskRequest, str], Blueprint]
"""(request, backend name) -> blueprint."""
LadderFn = Callable[[Blueprint, HiddenRule, PublicData], dict[str, np.ndarray]]
"""Canonical test predictions by learner (constant, generic, structure)."""
DescribeFn = Callable[[Blueprint, DevelopedTask, pd.DataFrame], Specifics]
"""(blueprint, task, sample submission) -> what the description states exactly."""


@dataclass(frozen=True)
class Modality:
    """One modality's (or task type's) part in every role; see the module docstring."""

    name: str
    """Modality or task type it serves, e.g. 'tabular', 'seq2seq'."""
    build: BuildFn
    features: FeaturesFn
    structure_features: StructureFn
    plan: PlanFn | None = None
    ladder: LadderFn | None = None
    describe: DescribeFn | None = None
