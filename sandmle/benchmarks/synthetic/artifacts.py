"""The roles' artifacts after the blueprint, as data: the hidden rule and the developed task
(the MLE Developer's), the public view of a task (what learners see), and the description
(the Technical Writer's, with the specifics a task type states exactly).

Nothing here computes anything: every role module and every modality imports these types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field


class HiddenRule(BaseModel):
    """The ground-truth function behind the labels (never shown to the agent)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    """Rule family, e.g. 'tabular-interaction', 'keyword-poisson', 'shape-class'."""
    summary: str
    """One sentence a person can read."""
    params: dict[str, Any] = Field(default_factory=dict)
    """The rule's parameters (weights, keywords, shapes)."""


class DevelopedTask(BaseModel):
    """The MLE Developer's output: tables, extra public files and the oracle's predictions.

    The developer returns the data in memory; the pipeline writes it.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    rule: HiddenRule
    """How the labels were made."""
    train: pd.DataFrame
    """train.csv: id, features, labels."""
    test: pd.DataFrame
    """test.csv: id and features only."""
    answers: pd.DataFrame
    """Private answers: id and graded columns."""
    files: dict[str, bytes] = Field(default_factory=dict)
    """Extra public files by path relative to prepared/public (images)."""
    oracle: np.ndarray
    """Canonical predictions of the rule for the test rows."""
    sample: pd.DataFrame | None = None
    """sample_submission.csv when the task has its own (e.g. seq2seq copies ``before``)."""


@dataclass
class PublicData:
    """What an agent sees: train.csv, test.csv and extra public files (images)."""

    train: pd.DataFrame
    test: pd.DataFrame
    files: Mapping[str, bytes] = field(default_factory=dict)

    @classmethod
    def from_folder(cls, public: Path) -> PublicData:
        files = {
            p.relative_to(public).as_posix(): p.read_bytes()
            for p in sorted(public.rglob("*"))
            if p.is_file() and p.suffix not in (".csv", ".md")
        }
        return cls(pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv"), files)


@dataclass(frozen=True)
class Specifics:
    """What a task type with its own files says exactly; each tuple holds phrasings to draw from.

    A task type with its own structure (seq2seq tokens, image-to-image pixels) hands these to
    the Technical Writer: what a row is, what to predict, its files, columns, id scheme and
    metric wording; the writer draws everything else as usual.
    """

    row: str
    """What one row of the CSVs is, e.g. "one pixel of a page"."""
    task: tuple[str, ...]
    """What to predict, as the object of "Predict ..."."""
    sizes: tuple[str, ...]
    """How much training and test data there is, as full sentences."""
    files: tuple[tuple[str, tuple[str, ...]], ...]
    """Every public file or folder (``train/``), in order, with phrasings of what it holds;
    a CSV's columns are appended by the writer."""
    columns: tuple[tuple[str, str], ...]
    """Every CSV column with its meaning."""
    id_scheme: str
    value_kind: str
    metric_text: str
    notes: tuple[str, ...]
    """Notes true of this task type (rows are not independent here)."""


class Description(BaseModel):
    """The Technical Writer's output."""

    model_config = ConfigDict(extra="forbid")

    markdown: str
    """The full text of description.md."""
