"""Per-modality data writers (``build``), generic features (``features``) and the rule-shaped
features of the structure-aware learner (``structure_features``)."""

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


def _module(modality: str) -> ModuleType:
    from sandmle.benchmarks.synthetic.modalities import image, tabular, text, timeseries

    return {"tabular": tabular, "text": text, "image": image, "time-series": timeseries}[modality]


def builder(modality: str) -> BuildFn:
    return _module(modality).build


def featurizer(modality: str) -> FeaturesFn:
    return _module(modality).features


def structurer(modality: str) -> StructureFn:
    """Features built from the rule's form (the structure-aware learner's input)."""
    return _module(modality).structure_features
