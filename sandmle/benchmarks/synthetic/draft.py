"""One description draft: the facts every description states exactly, and the state a
rendering draws from (the task's data, the writer's random stream and the section layout).

The section renderers (:mod:`.sections`, :mod:`.data_section`) take a :class:`Draft`; every
wording they pick comes from its stream, in rendering order, so a draft is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, Specifics
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.phrases import ID_SCHEMES, LAYOUTS, METRIC_TEXT
from sandmle.harness.grading.metrics import get_metric


@dataclass(frozen=True)
class Facts:
    """What every description states exactly, whatever its wording."""

    metric: str
    metric_text: str
    direction: str
    id_column: str
    id_scheme: str
    id_example: str
    submission_columns: list[str]
    value_kind: str
    example: str
    n_test: int

    @classmethod
    def of(cls, bp: Blueprint, sample: pd.DataFrame, spec: Specifics | None = None) -> Facts:
        lower = get_metric(bp.dna.metric).lower_is_better
        kind = {"prob": "a probability", "label": "a label", "value": "a number"}
        metric_text = METRIC_TEXT.get(bp.dna.metric, bp.dna.metric.replace("_", " "))
        if bp.dna.metric.startswith("map_at_"):  # a ranking: say what a cell holds and how
            k = int(bp.dna.metric.rsplit("_", 1)[1])
            kind["ranked"] = f"up to {k} item ids separated by single spaces, most likely first"
            metric_text = (
                f"mean average precision at {k} (MAP@{k}): per row, the precision at each rank "
                f"where a listed id is one the row really took, summed and divided by the "
                f"smaller of {k} and the number taken, then averaged over rows"
            )
        return cls(
            metric=bp.dna.metric,
            metric_text=spec.metric_text if spec else metric_text,
            direction="lower is better" if lower else "higher is better",
            id_column=bp.domain.id_column,
            id_scheme=spec.id_scheme
            if spec
            else ID_SCHEMES.get(bp.dna.id_scheme, "unique strings"),
            id_example=str(sample.iloc[0, 0]) if len(sample) else "",
            submission_columns=[str(c) for c in sample.columns],
            value_kind=spec.value_kind if spec else kind.get(bp.dna.target_kind, "a value"),
            example=sample.head(3).to_csv(index=False, lineterminator="\n", float_format="%.6g"),
            n_test=len(sample),
        )


class Draft:
    """One rendering: the task's data plus the writer's random stream."""

    def __init__(
        self,
        bp: Blueprint,
        task: DevelopedTask,
        sample: pd.DataFrame,
        rng: np.random.Generator,
        spec: Specifics | None = None,
    ) -> None:
        self.bp, self.task, self.sample, self.rng, self.spec = bp, task, sample, rng, spec
        self.facts = Facts.of(bp, sample, spec)
        self.layout = LAYOUTS[int(rng.integers(len(LAYOUTS)))]

    def pick(self, options: tuple[str, ...] | list[str]) -> str:
        """One of ``options``, drawn from the writer's stream."""
        return options[int(self.rng.integers(len(options)))]
