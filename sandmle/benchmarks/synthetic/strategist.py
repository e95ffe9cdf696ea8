"""Data Strategist (procedural): seed DNA + entropy → blueprint.

Every choice is drawn from a numpy Generator seeded by the request's entropy, so the same
request always gives the same blueprint.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict

from sandmle.benchmarks.synthetic.blueprint import (
    AdversarialNoise,
    Blueprint,
    MutatedDomain,
    StructuralDNA,
)
from sandmle.benchmarks.synthetic.domains import CATEGORY_NAMES, POOLS, DomainPool

MIN_ROWS, MAX_ROWS = 50, 200
TEST_SHARE = 0.3


class TaskRequest(BaseModel):
    """What the pipeline asks the strategist for."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """Position of the task in its pack; part of the task id."""
    dna: StructuralDNA
    """Seed task structure to keep."""
    entropy: list[int]
    """Pack seed, task index, attempt."""


def role_rng(entropy: list[int], role: int) -> np.random.Generator:
    """An independent stream per role, so changing one role never shifts another's draws."""
    return np.random.default_rng(np.random.SeedSequence([*entropy, role]))


def plan(request: TaskRequest, backend: str = "procedural") -> Blueprint:
    """Draw a mutated domain, adversarial noise and a size for the seed's structure."""
    rng = role_rng(request.entropy, 0)
    dna = request.dna
    pool = POOLS[dna.modality][int(rng.integers(len(POOLS[dna.modality])))]
    noise = _noise(dna, rng)
    n_train, n_test, params = _size(dna, rng)
    return Blueprint(
        task_id=f"{pool.slug}-{request.index:03d}",
        backend=backend,
        entropy=list(request.entropy),
        dna=dna,
        domain=_domain(dna, pool, noise, rng),
        noise=noise,
        n_train=n_train,
        n_test=n_test,
        params=params,
    )


def _noise(dna: StructuralDNA, rng: np.random.Generator) -> AdversarialNoise:
    tabular = dna.modality == "tabular"
    return AdversarialNoise(
        label_noise=round(float(rng.uniform(0.0, 0.08)), 3),
        n_irrelevant=int(rng.integers(0, 4)) if tabular else 0,
        n_correlated=int(rng.integers(0, 3)) if tabular else 0,
        missing_rate=round(float(rng.uniform(0.02, 0.1)), 3)
        if tabular and rng.random() < 0.5
        else 0.0,
        shift=round(float(rng.uniform(0.2, 0.5)), 3) if rng.random() < 0.4 else 0.0,
        outlier_rate=round(float(rng.uniform(0.02, 0.06)), 3)
        if tabular and rng.random() < 0.4
        else 0.0,
    )


def _size(dna: StructuralDNA, rng: np.random.Generator) -> tuple[int, int, dict]:
    params: dict[str, float | int | str] = {"signal": round(float(rng.uniform(1.6, 2.6)), 3)}
    if dna.modality == "time-series":
        n_series = int(rng.integers(4, 9))
        horizon = math.ceil(20 / n_series) + int(rng.integers(0, 2))
        length = min(int(rng.integers(16, 26)), MAX_ROWS // n_series)
        params.update(n_series=n_series, horizon=horizon, length=length, period=7)
        return n_series * (length - horizon), n_series * horizon, params
    if dna.modality == "image":
        params["size"] = int(rng.choice([16, 32]))
    # Column-wise AUC on a handful of positives is mostly noise: give those tasks more rows.
    low = 110 if dna.task_type == "multilabel" or dna.n_outputs > 3 else 70
    total = int(rng.integers(max(low, MIN_ROWS), MAX_ROWS + 1))
    n_test = max(20, round(total * TEST_SHARE))
    return total - n_test, n_test, params


def _domain(
    dna: StructuralDNA, pool: DomainPool, noise: AdversarialNoise, rng: np.random.Generator
) -> MutatedDomain:
    id_column = "id" if rng.random() < 0.6 else f"{pool.entity.split()[-1]}_id"
    classes = _class_names(dna, pool, rng)
    return MutatedDomain(
        title=pool.title,
        slug=pool.slug,
        entity=pool.entity,
        id_column=id_column,
        feature_columns=_feature_names(dna, pool, noise, rng),
        target_columns=_target_names(dna, pool, classes),
        class_names=classes,
        text_column=pool.text_column if dna.modality == "text" else "",
        series_column=pool.series_column if dna.modality == "time-series" else "",
        unit=pool.unit,
    )


def _feature_names(
    dna: StructuralDNA, pool: DomainPool, noise: AdversarialNoise, rng: np.random.Generator
) -> list[str]:
    if dna.modality == "time-series":
        return ["day", *pool.features]
    if dna.modality != "tabular":
        return []
    n_numeric = dna.n_numeric + noise.n_irrelevant + noise.n_correlated
    numeric = [str(c) for c in rng.permutation(pool.features)[:n_numeric]]
    categorical = [str(c) for c in rng.permutation(CATEGORY_NAMES)[: dna.n_categorical]]
    return numeric + categorical


def _class_names(dna: StructuralDNA, pool: DomainPool, rng: np.random.Generator) -> list[str]:
    if dna.task_type in ("regression", "forecasting"):
        return []
    if dna.ordinal:
        return [str(k) for k in range(dna.n_outputs)]
    return [str(c) for c in rng.permutation(pool.classes)[: dna.n_outputs]]


def _target_names(dna: StructuralDNA, pool: DomainPool, classes: list[str]) -> list[str]:
    if dna.task_type in ("regression", "forecasting"):
        names = [pool.target, f"{pool.target}_secondary", f"{pool.target}_tertiary"]
        return names[: dna.n_outputs]
    if dna.task_type == "binary":
        return [f"is_{classes[1]}"]
    if dna.target_kind == "label":
        return ["severity" if dna.ordinal else "category"]
    return list(classes)
