"""Medal thresholds of the lite competitions: MLE-bench's own leaderboards, else a packaged table.

Where the user points at an MLE-bench checkout (an argument, or ``$MLEBENCH_DIR``) or the
``mlebench`` package is importable, each competition's ``mlebench/competitions/<id>/leaderboard.csv``
is read and MLE-bench's rule (``sandmle.harness.grading.medals``) applied to it, as MLE-bench does.
Otherwise the thresholds come from ``thresholds.csv``, computed once by ``make_thresholds`` from
public leaderboards, with each row's source file, its SHA-256 and the date beside the numbers.

A competition without a public leaderboard (siim-isic-melanoma-classification) has an
*unavailable* row: empty threshold cells in the table, NaN thresholds in its config, so no
submission earns a medal or beats the median there (every comparison with NaN is false).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import logging
import math
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from sandmle.errors import SandmleError
from sandmle.harness.competition import Thresholds
from sandmle.harness.grading.medals import (
    MedalThresholds,
    read_leaderboard,
    thresholds_from_leaderboard,
)

logger = logging.getLogger(__name__)

TABLE = "thresholds.csv"
MLEBENCH_DIR_ENV = "MLEBENCH_DIR"
TABLE_COLUMNS = (
    "competition_id",
    "teams",
    "is_lower_better",
    "gold",
    "silver",
    "bronze",
    "median",
    "source",
    "sha256",
    "generated_on",
)
_LFS_POINTER = b"version https://git-lfs"


@dataclass(frozen=True)
class ThresholdEntry:
    """One competition's thresholds and where they came from."""

    competition_id: str
    is_lower_better: bool
    thresholds: MedalThresholds | None
    """None: no leaderboard was available (see the module docstring)."""
    source: str
    sha256: str = ""
    generated_on: str = ""

    @property
    def available(self) -> bool:
        return self.thresholds is not None

    def config_thresholds(self) -> Thresholds:
        """The harness's ``Thresholds``; all NaN when unavailable."""
        t = self.thresholds
        if t is None:
            return Thresholds(gold=math.nan, silver=math.nan, bronze=math.nan, median=math.nan)
        return Thresholds(gold=t.gold, silver=t.silver, bronze=t.bronze, median=t.median)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- the packaged table ----


def _number(text: str) -> float:
    return float(text) if text else math.nan


def _entry_from_row(row: dict[str, str]) -> ThresholdEntry:
    lower = row["is_lower_better"] == "true"
    thresholds = None
    if row["teams"]:
        thresholds = MedalThresholds(
            gold=_number(row["gold"]),
            silver=_number(row["silver"]),
            bronze=_number(row["bronze"]),
            median=_number(row["median"]),
            is_lower_better=lower,
            teams=int(row["teams"]),
        )
    return ThresholdEntry(
        competition_id=row["competition_id"],
        is_lower_better=lower,
        thresholds=thresholds,
        source=row["source"],
        sha256=row["sha256"],
        generated_on=row["generated_on"],
    )


def read_table(text: str) -> dict[str, ThresholdEntry]:
    """Parse a thresholds table (the format ``make_thresholds`` writes)."""
    rows = [_entry_from_row(row) for row in csv.DictReader(text.splitlines())]
    return {entry.competition_id: entry for entry in rows}


@cache
def packaged_thresholds() -> dict[str, ThresholdEntry]:
    """The packaged table, by competition id."""
    return read_table(resources.files(__package__).joinpath(TABLE).read_text(encoding="utf-8"))


# ---- MLE-bench's own leaderboards ----


def _package_dir() -> Path | None:
    # find_spec locates the package without importing it (mlebench imports heavy modules).
    spec = importlib.util.find_spec("mlebench")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def mlebench_competitions_dir(mlebench_dir: Path | None = None) -> Path | None:
    """MLE-bench's ``competitions`` folder: from ``mlebench_dir`` (a checkout or the package
    folder), else ``$MLEBENCH_DIR``, else the importable ``mlebench`` package; None if none."""
    given = mlebench_dir or os.environ.get(MLEBENCH_DIR_ENV)
    root = Path(given) if given else _package_dir()
    if root is None:
        return None
    for candidate in (root / "mlebench" / "competitions", root / "competitions"):
        if candidate.is_dir():
            return candidate
    if given:
        raise SandmleError(
            f"{root} is not an MLE-bench checkout (no mlebench/competitions folder); "
            f"check {MLEBENCH_DIR_ENV} or the path given"
        )
    return None


def mlebench_leaderboard(competition_id: str, mlebench_dir: Path | None = None) -> Path | None:
    """MLE-bench's ``leaderboard.csv`` for a competition, if present and not a Git-LFS pointer."""
    competitions = mlebench_competitions_dir(mlebench_dir)
    if competitions is None:
        return None
    path = competitions / competition_id / "leaderboard.csv"
    if not path.is_file():
        logger.warning("no MLE-bench leaderboard at %s; using the packaged thresholds", path)
        return None
    with path.open("rb") as fh:
        if fh.read(len(_LFS_POINTER)) == _LFS_POINTER:
            logger.warning(
                "%s is a Git-LFS pointer (run `git lfs pull`); using the packaged table", path
            )
            return None
    return path


def leaderboard_entry(competition_id: str, path: Path, source: str) -> ThresholdEntry:
    """Thresholds from one leaderboard file by MLE-bench's rule (direction from the file)."""
    thresholds = thresholds_from_leaderboard(read_leaderboard(path))
    return ThresholdEntry(
        competition_id=competition_id,
        is_lower_better=thresholds.is_lower_better,
        thresholds=thresholds,
        source=source,
        sha256=file_sha256(path),
    )


def lite_thresholds(competition_id: str, mlebench_dir: Path | None = None) -> ThresholdEntry:
    """A lite competition's thresholds: MLE-bench's leaderboard if found, else the table."""
    path = mlebench_leaderboard(competition_id, mlebench_dir)
    if path is not None:
        return leaderboard_entry(competition_id, path, str(path))
    try:
        return packaged_thresholds()[competition_id]
    except KeyError:
        raise SandmleError(f"no packaged thresholds for {competition_id!r}") from None
