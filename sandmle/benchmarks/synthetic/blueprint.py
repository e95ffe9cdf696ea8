"""The Data Strategist's input and artifact: a task request and its blueprint (structural DNA,
mutated domain, noise, size).

A blueprint says everything about a task except its data: the MLE Developer turns it into
files, and ``generation/blueprint.json`` keeps it beside the task so a person can see why a
task is as it is. Data only (pydantic): ``GENERATOR_VERSION`` is read without numpy.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

GENERATOR_VERSION = "0.5.1"
"""Bumped whenever the same seed would give different bytes."""

Modality = Literal["tabular", "text", "image", "time-series", "audio"]
TaskType = Literal[
    "binary",
    "multiclass",
    "multilabel",
    "regression",
    "forecasting",
    "seq2seq",
    "image-to-image",
    "ranking",
]
TargetKind = Literal["prob", "label", "value", "ranked"]
IdScheme = Literal["int", "hex", "prefixed"]
MODALITIES: tuple[str, ...] = ("tabular", "text", "image", "time-series", "audio")


class StructuralDNA(BaseModel):
    """What a seed task keeps from its real competition."""

    model_config = ConfigDict(extra="forbid")

    seed_task: str
    """The real competition this structure comes from."""
    original_modality: str
    """The real competition's modality."""
    modality: Modality
    """Modality of the micro task."""
    task_type: TaskType
    """What is predicted."""
    metric: str
    """A metric registered in ``sandmle.harness.grading.metrics``."""
    target_kind: TargetKind
    """Submission cells: probabilities, labels, values or ranked id lists (MAP@k)."""
    n_outputs: int = Field(ge=1)
    """Classes (binary = 2), labels (multi-label), target columns (regression) or catalogue
    items (ranking)."""
    original_outputs: int = Field(ge=1)
    """The same count in the real competition (micro tasks cap it)."""
    ordinal: bool = False
    """Classes are ordered (graded with quadratic weighted kappa)."""
    positive: bool = False
    """Regression targets are non-negative (RMSLE-family metrics)."""
    n_numeric: int = 0
    """Informative numeric features (tabular)."""
    n_categorical: int = 0
    """Informative categorical features (tabular)."""
    id_scheme: IdScheme = "int"
    """How row ids look."""
    balance: float = Field(default=0.5, gt=0, lt=1)
    """Share of the positive class (binary) or of each label (multi-label)."""


class MutatedDomain(BaseModel):
    """New names for the entity, columns and labels: the same structure in a new world."""

    model_config = ConfigDict(extra="forbid")

    title: str
    """Competition title."""
    slug: str
    """Short kebab-case name used in the task id."""
    entity: str
    """What one row is (e.g. 'bridge inspection')."""
    id_column: str
    """Name of the id column."""
    feature_columns: list[str] = Field(default_factory=list)
    """Visible feature columns, in file order."""
    target_columns: list[str]
    """Graded submission columns."""
    class_names: list[str] = Field(default_factory=list)
    """Names of classes or labels (classification)."""
    text_column: str = ""
    """Column holding the text (text modality)."""
    series_column: str = ""
    """Column naming the series (time series)."""
    unit: str = ""
    """Unit of the regression target, for the description."""


class AdversarialNoise(BaseModel):
    """What makes the task harder than its hidden rule."""

    model_config = ConfigDict(extra="forbid")

    label_noise: float = Field(ge=0, le=0.3)
    """Share of training and test labels replaced at random (or target noise scale)."""
    n_irrelevant: int = Field(ge=0)
    """Distractor features unrelated to the target."""
    n_correlated: int = Field(ge=0)
    """Noisy copies of informative features."""
    missing_rate: float = Field(ge=0, le=0.3)
    """Share of feature cells blanked out."""
    shift: float = Field(ge=0)
    """Covariate shift between train and test, in feature standard deviations."""
    outlier_rate: float = Field(ge=0, le=0.2)
    """Share of rows with corrupted (x10) feature readings."""


class Design(BaseModel):
    """How a redrawn slot departs from the plain draw of its seed (:mod:`.redesign`).

    A slot the gate rejects is tried again with this set from the rejections' reasons: what
    decides the width of the medal bands, within the seed's structure.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    test_factor: float = Field(default=1.0, ge=1.0)
    """Test rows (series, pages) times this: the test-set noise shrinks as 1/sqrt(rows)."""
    noise_factor: float = Field(default=1.0, gt=0, le=1.0)
    """Label noise times this: sharper labels."""
    signal_factor: float = Field(default=1.0, ge=1.0)
    """The rule's strength (``params["signal"]``, where the modality has one) times this."""


class Blueprint(BaseModel):
    """The Data Strategist's output: everything but the data."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    """Competition id (folder name)."""
    backend: str
    """Generator backend that wrote it."""
    generator_version: str = GENERATOR_VERSION
    """Generator version."""
    entropy: list[int]
    """Seed sequence entropy: the secret's salt words, pack seed, task index, attempt."""
    dna: StructuralDNA
    """Structure kept from the seed task."""
    domain: MutatedDomain
    """Names of the new world."""
    noise: AdversarialNoise
    """Adversarial noise."""
    n_train: int = Field(ge=20)
    """Training rows."""
    n_test: int = Field(ge=20)
    """Test rows (graded)."""
    params: dict[str, float | int | str] = Field(default_factory=dict)
    """Modality knobs (image size, series length, signal strength)."""
    form: list[str] = Field(default_factory=list)
    """The hidden rule's form: the term kinds the developer composes (empty: its own choice)."""
    design: Design = Field(default_factory=Design)
    """The redraw's adjustments, already applied to the sizes, noise and params above."""


class TaskRequest(BaseModel):
    """What the pipeline asks the strategist for."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """Position of the task in its pack; part of the task id."""
    dna: StructuralDNA
    """Seed task structure to keep."""
    entropy: list[int]
    """Pack seed, task index, attempt."""
    design: Design = Field(default_factory=Design)
    """Adjustments of a redrawn slot (default: the plain draw)."""
