"""The generator backend protocol: the four roles, typed artifact in, typed artifact out.

A backend is registered with ``@generator_backend(name)``. The pipeline, the sanity gate and
packs only talk to this protocol, so an LLM backend plugs in beside the procedural one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.baselines import predict_baselines
from sandmle.benchmarks.synthetic.blueprint import Blueprint, StructuralDNA
from sandmle.benchmarks.synthetic.developer import DevelopedTask, develop
from sandmle.benchmarks.synthetic.learners import PublicData
from sandmle.benchmarks.synthetic.mlops import Ladder, Milestones, place_milestones
from sandmle.benchmarks.synthetic.strategist import TaskRequest, plan
from sandmle.benchmarks.synthetic.writer import Description, write_description
from sandmle.errors import SandmleError


class GeneratorBackend(Protocol):
    """The four SandMLE roles."""

    name: str

    def strategist(self, request: TaskRequest) -> Blueprint:
        """Data Strategist: seed DNA → blueprint."""
        ...

    def developer(self, blueprint: Blueprint) -> DevelopedTask:
        """MLE Developer: blueprint → hidden rule and data (deterministic for a blueprint)."""
        ...

    def baselines(
        self, blueprint: Blueprint, task: DevelopedTask, public: PublicData
    ) -> dict[str, np.ndarray]:
        """MLE Developer: canonical test predictions of the learner ladder and the oracle."""
        ...

    def mlops(self, blueprint: Blueprint, ladder: Ladder) -> Milestones:
        """MLOps Engineer: grader options and noise-aware thresholds."""
        ...

    def writer(
        self, blueprint: Blueprint, task: DevelopedTask, sample: pd.DataFrame
    ) -> Description:
        """Technical Writer: description.md."""
        ...


@runtime_checkable
class ReplayingBackend(Protocol):
    """A backend whose strategist is not a function of the seed (a model's answer).

    The sanity gate's determinism rule then replays the recorded artifacts instead of
    planning the task again.
    """

    def replay_differences(self, root: Path) -> list[str]:
        """Files under ``prepared/`` that come out different when the task is replayed."""
        ...


_BACKENDS: dict[str, Callable[..., GeneratorBackend]] = {}


def generator_backend(name: str) -> Callable[[type], type]:
    """Register a backend class under ``name`` (the ``--backend`` value)."""

    def register(cls: type) -> type:
        _BACKENDS[name] = cls
        return cls

    return register


# Backends registered by a module imported on first use (the llm one pulls in Inspect's
# model layer, which `synth --help` and procedural generation do without).
_LAZY = {"llm": "sandmle.benchmarks.synthetic.llm"}


def _backend_class(name: str) -> Callable[..., GeneratorBackend] | None:
    if name not in _BACKENDS and name in _LAZY:
        importlib.import_module(_LAZY[name])
    return _BACKENDS.get(name)


def get_backend(name: str, **options: Any) -> GeneratorBackend:
    """A new backend; ``options`` go to its constructor (e.g. ``model`` for ``llm``)."""
    if _backend_class(name) is None:
        known = ", ".join(sorted(_BACKENDS))
        raise SandmleError(f"unknown generator backend {name!r} (known: {known})")
    return _BACKENDS[name](**options)


def backend_names() -> list[str]:
    return sorted({*_BACKENDS, *_LAZY})


def check_backend_covers(name: str, seeds: list[StructuralDNA]) -> None:
    """Refuse up front a seed the backend cannot write (rather than 8 rejected attempts)."""
    cls = _backend_class(name)
    unsupported = getattr(cls, "UNSUPPORTED_TASK_TYPES", frozenset())
    for dna in seeds:
        if dna.task_type in unsupported or dna.modality in unsupported:
            raise SandmleError(
                f"the {name} backend does not write {dna.modality} {dna.task_type} tasks "
                f"(seed {dna.seed_task}); pick other --seeds/--modalities or --backend procedural"
            )


@generator_backend("procedural")
class ProceduralBackend:
    """No LLM: parameterised generators, deterministic by seed."""

    name = "procedural"

    def strategist(self, request: TaskRequest) -> Blueprint:
        return plan(request, backend=self.name)

    def developer(self, blueprint: Blueprint) -> DevelopedTask:
        return develop(blueprint)

    def baselines(
        self, blueprint: Blueprint, task: DevelopedTask, public: PublicData
    ) -> dict[str, np.ndarray]:
        return predict_baselines(blueprint, task, public)

    def mlops(self, blueprint: Blueprint, ladder: Ladder) -> Milestones:
        return place_milestones(blueprint, ladder)

    def writer(
        self, blueprint: Blueprint, task: DevelopedTask, sample: pd.DataFrame
    ) -> Description:
        return write_description(blueprint, task, sample)
