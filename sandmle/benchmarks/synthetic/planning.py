"""The Data Strategist's draws: adversarial noise, a mutated domain, a rule form and a size.

Each draw takes the strategist's stream (``streams.STRATEGIST``) and the seed's DNA, so the
same request gives the same blueprint. The generic plan (:mod:`.strategist`) calls them in a
fixed order; a modality that plans its own blueprints (audio, seq2seq, image-to-image,
ranking) calls the ones it needs, in its own order.
"""

from __future__ import annotations

import numpy as np

from sandmle.benchmarks.synthetic.blueprint import (
    AdversarialNoise,
    Blueprint,
    MutatedDomain,
    StructuralDNA,
    TaskRequest,
)
from sandmle.benchmarks.synthetic.domains import CATEGORY_NAMES, DomainPool

Params = dict[str, float | int | str]
TRAIN_ROWS = {"tabular": (200, 400), "text": (250, 450), "image": (250, 400)}
TEST_ROWS = (500, 800)
# A binary table grades one yes/no label per test row on one logit, so its score is noisy.
# On labels (accuracy), which side of the logit a row falls: with the usual soft logit a
# quarter of the rows are coin flips for every learner, so constant..oracle spans ~0.2
# accuracy and a CV-tuned model, which learns most of one additive logit, sits within ~4 sigma
# of the rule's form; labels are made sharper. On probabilities (AUC), with ~650 test rows
# the sd is ~0.019 AUC while generic..structure spans ~0.07-0.09 (~4.5 sigma, the gate needs
# 6): sharper labels do not help there (sigma shrinks, but the generic model catches up in
# step), more rows do (the sd shrinks as 1/sqrt(rows)). Both get 3x the test rows.
LABEL_BINARY_SHARPNESS = 3.0
BINARY_TABLE_TEST_FACTOR = 3
PERIODS = (7, 12, 24)
TABULAR_TERMS = ("product", "step", "sine", "square", "group", "missing")
SERIES_TERMS = ("trend", "event", "changepoint", "harmonic", "series-season")
TEXT_MODES = ("count", "negation", "bigram", "presence")
SHAPES = ("circle", "square", "triangle", "cross", "ring", "bar", "diamond", "frame")


def new_blueprint(
    request: TaskRequest,
    backend: str,
    domain: MutatedDomain,
    noise: AdversarialNoise,
    sizes: tuple[int, int],
    params: Params,
    form: list[str],
) -> Blueprint:
    """The blueprint of ``request``'s slot: id from the domain's slug and the slot index."""
    return Blueprint(
        task_id=f"{domain.slug}-{request.index:03d}",
        backend=backend,
        entropy=list(request.entropy),
        dna=request.dna,
        domain=domain,
        noise=noise,
        n_train=sizes[0],
        n_test=sizes[1],
        params=params,
        form=form,
    )


def draw_noise(dna: StructuralDNA, rng: np.random.Generator) -> AdversarialNoise:
    """Label noise and covariate shift for every task; distractor, correlated, blank and
    corrupted features for tables only."""
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


def draw_size(dna: StructuralDNA, rng: np.random.Generator) -> tuple[int, int, Params]:
    """Micro training sets, but test sets large enough that a medal is more than noise."""
    params: Params = {"signal": round(float(rng.uniform(2.0, 3.0)), 3)}
    if dna.modality == "time-series":
        n_series = int(rng.integers(16, 31))
        period = int(rng.choice(PERIODS))
        horizon = int(rng.integers(10, 17))
        length = horizon + int(rng.integers(3 * period // 2 + 20, 3 * period + 40))
        params.update(n_series=n_series, horizon=horizon, length=length, period=period)
        return n_series * (length - horizon), n_series * horizon, params
    if dna.modality == "image":
        params["size"] = int(rng.choice([24, 32]))
    low, high = TRAIN_ROWS[dna.modality]
    n_train = int(rng.integers(low, high + 1))
    many = dna.task_type == "multilabel" or dna.n_outputs > 3
    n_test = int(rng.integers(*TEST_ROWS)) + (300 if many else 0)
    if binary_table(dna):  # after every draw: other seeds' blueprints stay the same
        if dna.target_kind == "label":
            params["signal"] = round(float(params["signal"]) * LABEL_BINARY_SHARPNESS, 3)
        n_test *= BINARY_TABLE_TEST_FACTOR
    return n_train, n_test, params


def binary_table(dna: StructuralDNA) -> bool:
    """A tabular yes/no task: on labels (titanic, accuracy) or probabilities (AUC)."""
    return dna.modality == "tabular" and dna.task_type == "binary"


def draw_form(dna: StructuralDNA, rng: np.random.Generator) -> list[str]:
    """The rule's term kinds, composed from the modality's library."""
    if dna.modality == "tabular":
        library = [t for t in TABULAR_TERMS if t != "group" or dna.n_categorical]
        chosen = rng.choice(library, int(rng.integers(2, 5)), replace=False)
        return ["linear", *sorted(str(t) for t in chosen)]
    if dna.modality == "time-series":
        kept = [t for t in SERIES_TERMS if rng.random() < 0.5]
        return ["level", "season", *kept]
    if dna.modality == "text":
        length = str(rng.choice(["short", "long"]))
        return [str(rng.choice(TEXT_MODES)), f"keywords={int(rng.integers(3, 13))}", length]
    shapes = [str(s) for s in rng.permutation(SHAPES)]
    return [f"shapes={','.join(shapes)}"]


def draw_domain(
    dna: StructuralDNA, pool: DomainPool, noise: AdversarialNoise, rng: np.random.Generator
) -> MutatedDomain:
    """New names from ``pool``: id column, feature columns, classes and targets."""
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


def rule_signature(bp: Blueprint) -> tuple[str, ...]:
    """The part of the rule's form that changes the task (for counting distinct tasks).

    For images only the shapes that carry a class (in order) and the set of distractor
    shapes count; the order of the spare shapes changes nothing.
    """
    if bp.dna.modality != "image" or not bp.form or not bp.form[0].startswith("shapes="):
        return tuple(bp.form)  # denoising forms list degradation kinds, not shapes
    shapes = bp.form[0].split("=", 1)[1].split(",")
    used = 3 if bp.dna.task_type == "binary" else bp.dna.n_outputs
    if bp.dna.task_type == "regression" or bp.dna.ordinal:
        used = 2
    return (*shapes[:used], "|", *sorted(shapes[used:]))
