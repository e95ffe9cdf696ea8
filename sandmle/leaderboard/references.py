"""Published results, read from a small versioned file, shown as "reported, not reproduced".

They are a separate frame: nothing here enters the sample frame, so no paired test, rank or
verdict can include them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from pydantic import BaseModel, Field, HttpUrl, ValidationError, model_validator

from sandmle.errors import SandmleError

REFERENCES_FILE = Path(__file__).with_name("references.yaml")
STATUS = "reported, not reproduced"
COLUMNS = ["name", "benchmark", "Any medal %", "Valid %", "status", "source", "url"]


class ReferenceRow(BaseModel):
    """One published result."""

    name: str
    """How the row is named in the table."""
    model: str
    """The model as the source names it."""
    scaffold: str
    """The agent scaffold as the source names it."""
    benchmark: str
    """The benchmark, with its size: published numbers are rarely on sandmle's tasks."""
    any_medal: float | None = Field(default=None, ge=0, le=100)
    """Any-medal rate in percent, as printed in the source (None: the source gives none)."""
    valid_submission: float | None = Field(default=None, ge=0, le=100)
    """Valid-submission rate in percent, where the source prints one."""
    source: str
    """Where the number is printed (paper, section or table)."""
    url: HttpUrl
    """A link to the source."""

    @model_validator(mode="after")
    def _has_a_figure(self) -> ReferenceRow:
        if self.any_medal is None and self.valid_submission is None:
            raise ValueError(f"{self.name}: give any_medal or valid_submission (a figure)")
        return self


class References(BaseModel):
    """The file: a version and its rows."""

    version: int = Field(ge=1)
    """Bumped on every change to the rows."""
    rows: list[ReferenceRow]
    """The published results."""


def load_references(path: Path = REFERENCES_FILE) -> References:
    """The reference file, validated; a one-line error naming the file if it is broken."""
    try:
        return References.model_validate(yaml.safe_load(path.read_text()))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise SandmleError(f"{path}: not a valid reference file ({first})") from None


def reference_table(references: References) -> pd.DataFrame:
    """The rows as the app and the export show them, each marked ``STATUS``."""
    return pd.DataFrame(
        [
            [
                r.name,
                r.benchmark,
                _percent(r.any_medal),
                _percent(r.valid_submission),
                STATUS,
                r.source,
                str(r.url),
            ]
            for r in references.rows
        ],
        columns=COLUMNS,
    )


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"
