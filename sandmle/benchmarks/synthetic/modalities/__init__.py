"""Per-modality data writers (``build``) and the baselines' feature extraction (``features``)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np

from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask

BuildFn = Callable[[Blueprint, np.random.Generator], DevelopedTask]
FeaturesFn = Callable[[Blueprint, DevelopedTask], tuple[np.ndarray, np.ndarray]]


def _module(modality: str) -> ModuleType:
    from sandmle.benchmarks.synthetic.modalities import image, tabular, text, timeseries

    return {"tabular": tabular, "text": text, "image": image, "time-series": timeseries}[modality]


def builder(modality: str) -> BuildFn:
    return _module(modality).build


def featurizer(modality: str) -> FeaturesFn:
    return _module(modality).features
