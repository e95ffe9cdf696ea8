"""Per-modality data writers (``build``), generic features (``features``) and the rule-shaped
features of the structure-aware learner (``structure_features``).

A task type with its own structure (``seq2seq``, ``image-to-image``, ``ranking``) has its own
module, chosen before the modality's; such a module may also define ``plan`` (its own
blueprint), ``ladder`` (its own learners, when predictions are not a float matrix) and
``description_specifics`` (what the Technical Writer states exactly about its files), each
found with :func:`hook`. A modality listed in
``HOOK_MODALITIES`` (``audio``) plans its own blueprints the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask, HiddenRule

BuildFn = Callable[[Blueprint, np.random.Generator], DevelopedTask]
FeaturesFn = Callable[[Blueprint, Any], tuple[np.ndarray, np.ndarray]]
StructureFn = Callable[[Blueprint, HiddenRule, Any], tuple[np.ndarray, np.ndarray]]
TASK_TYPE_MODULES = {"seq2seq": "seq2seq", "image-to-image": "denoise", "ranking": "ranking"}
HOOK_MODALITIES = ("audio",)


def _module(modality: str, task_type: str = "") -> ModuleType:
    from sandmle.benchmarks.synthetic.modalities import (
        audio,
        denoise,
        image,
        ranking,
        seq2seq,
        tabular,
        text,
        timeseries,
    )

    by_task = {"seq2seq": seq2seq, "image-to-image": denoise, "ranking": ranking}
    if task_type in by_task:
        return by_task[task_type]
    by_modality = {"tabular": tabular, "text": text, "image": image, "time-series": timeseries}
    return {**by_modality, "audio": audio}[modality]


def builder(modality: str, task_type: str = "") -> BuildFn:
    return _module(modality, task_type).build


def featurizer(modality: str, task_type: str = "") -> FeaturesFn:
    return _module(modality, task_type).features


def structurer(modality: str, task_type: str = "") -> StructureFn:
    """Features built from the rule's form (the structure-aware learner's input)."""
    return _module(modality, task_type).structure_features


def hook(modality: str, task_type: str, name: str) -> Callable[..., Any] | None:
    """An optional function of the task's module (``plan``, ``ladder``,
    ``description_specifics``)."""
    if task_type not in TASK_TYPE_MODULES and modality not in HOOK_MODALITIES:
        return None  # the other modality modules define none: no import needed
    return getattr(_module(modality, task_type), name, None)
