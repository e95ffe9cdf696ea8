"""Published results, read from a small versioned file, shown as "reported, not reproduced".

They are a separate frame: nothing here enters the sample frame, so no paired test, rank or
verdict can include them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from pydantic import BaseModel, Field, HttpUrl, ValidationError

from sandmle.errors import SandmleError

REFERENCES_FILE = Path(__file__).with_name("references.yaml")
STATUS = "reported, not reproduced"
COLUMNS = ["name", "benchmark", "Any medal %", "status", "source", "url"]


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
    any_medal: float = Field(ge=0, le=100)
    """Any-medal rate in percent, as printed in the source."""
    source: str
    """Where the number is printed (paper, section or table)."""
    url: HttpUrl
    """A link to the source."""


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
            [r.name, r.benchmark, f"{r.any_medal:.1f}", STATUS, r.source, str(r.url)]
            for r in references.rows
        ],
        columns=COLUMNS,
    )
