"""The generator backend protocol: the four roles, typed artifact in, typed artifact out,
and the procedural backend that plays them without a model.

The pipeline, the sanity gate and packs only talk to this protocol, so an LLM backend plugs
in beside the procedural one; :mod:`.backends` finds a backend by its ``--backend`` name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.artifacts import Description, DevelopedTask, PublicData
from sandmle.benchmarks.synthetic.baselines import predict_baselines
from sandmle.benchmarks.synthetic.blueprint import Blueprint, TaskRequest
from sandmle.benchmarks.synthetic.developer import develop
from sandmle.benchmarks.synthetic.mlops import Ladder, Milestones, place_milestones
from sandmle.benchmarks.synthetic.strategist import plan
from sandmle.benchmarks.synthetic.writer import write_description


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


class ProceduralBackend:
    """No LLM: parameterised generators, deterministic by seed."""

    name = "procedural"
    UNSUPPORTED_TASK_TYPES: frozenset[str] = frozenset()
    """Modalities and task types it cannot write (it writes them all)."""

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
