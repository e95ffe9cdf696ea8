"""The full MLE-bench, through the ``mlebench`` package when it is importable.

``mlebench`` is then the source of truth for what it knows: its registry (every competition,
names, answers and sample-submission paths), its splits (``experiments/splits`` of a checkout),
its default data dir, ``is_dataset_prepared``, its graders for the competitions outside the
lite set (``mle-bench/native``) and its leaderboards. The 22 lite competitions keep our own
graders, which ``-T cross_check=true`` compares with MLE-bench's.

A leaderboard that is missing or a Git-LFS pointer leaves the competition's thresholds
unknown: it is still graded, no medal can be earned, and the task says so in a warning and in
its metadata (``thresholds_unknown``).
"""

from __future__ import annotations

import importlib.util
import logging
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sandmle.benchmarks.mle_bench.thresholds import (
    ThresholdEntry,
    leaderboard_entry,
    mlebench_leaderboard,
)
from sandmle.errors import CompetitionError, InvalidSubmission
from sandmle.harness.competition import (
    PRIVATE_DIR,
    PUBLIC_DIR,
    CompetitionConfig,
    GraderSpec,
)
from sandmle.harness.grading.metrics import metric
from sandmle.harness.grading.registry import grader

logger = logging.getLogger(__name__)

NATIVE_GRADER = "mle-bench/native"
NATIVE_METRIC = "mle_bench"
BENCHMARK = "mle-bench"
INSTALL_HINT = (
    "install MLE-bench's `mlebench` package (not on PyPI: `git clone` openai/mle-bench, "
    "`git lfs pull`, `pip install -e .`)"
)


def mlebench_available() -> bool:
    return importlib.util.find_spec("mlebench") is not None


@cache
def _registry() -> Any:
    from mlebench.registry import registry

    return registry


def registry_for(data_dir: Path) -> Any:
    """MLE-bench's registry pointed at ``data_dir``."""
    return _registry().set_data_dir(Path(data_dir))


@cache
def mlebench_competition_ids() -> frozenset[str]:
    """Every competition id MLE-bench's registry lists."""
    return frozenset(_registry().list_competition_ids())


def mlebench_default_data_dir() -> Path:
    """MLE-bench's own ``DEFAULT_DATA_DIR``."""
    from mlebench.registry import DEFAULT_DATA_DIR

    return Path(DEFAULT_DATA_DIR)


def mlebench_split_ids(split: str) -> list[str] | None:
    """The split as ``experiments/splits/<split>.txt`` of MLE-bench's checkout, if it has one."""
    name = "low" if split == "lite" else split
    path = Path(_registry().get_splits_dir()) / f"{name}.txt"
    if not path.is_file():
        return None
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


def mlebench_competition(competition_id: str, data_dir: Path) -> Any:
    """MLE-bench's ``Competition``; a competition it cannot load is a ``CompetitionError``."""
    try:
        return registry_for(data_dir).get_competition(competition_id)
    except Exception as exc:  # noqa: BLE001 - e.g. a grader whose own dependency is missing
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CompetitionError(f"MLE-bench cannot load {competition_id}: {reason}") from None


def mlebench_is_prepared(folder: Path) -> bool:
    """MLE-bench's ``is_dataset_prepared`` for ``<data_dir>/<id>``."""
    from mlebench.data import is_dataset_prepared

    try:
        competition = mlebench_competition(folder.name, folder.parent)
    except CompetitionError:
        return False
    return bool(is_dataset_prepared(competition))


def native_thresholds(competition_id: str) -> ThresholdEntry:
    """Thresholds from MLE-bench's leaderboard; unknown (NaN) when it is absent or a pointer."""
    path = mlebench_leaderboard(competition_id)
    if path is not None:
        return leaderboard_entry(competition_id, path, str(path))
    return ThresholdEntry(
        competition_id=competition_id,
        is_lower_better=False,
        thresholds=None,
        source=f"no MLE-bench leaderboard for {competition_id} (missing or a Git-LFS pointer)",
    )


def _relative(path: Path, folder: Path) -> str:
    return Path(path).resolve().relative_to(folder.resolve()).as_posix()


def native_config(folder: Path) -> CompetitionConfig:
    """Our config of a prepared non-lite competition, graded by MLE-bench's own grader."""
    competition = mlebench_competition(folder.name, folder.parent)
    answers = Path(competition.answers)
    if answers.suffix != ".csv":
        raise CompetitionError(
            f"{folder.name}: MLE-bench's answers are {answers.name}, not a CSV table; "
            "sandmle grades CSV answers only (grade it with `mlebench grade-sample`)"
        )
    sample = Path(competition.sample_submission)
    public_copy = folder / PUBLIC_DIR / sample.name
    if public_copy.is_file():  # prepare.py writes some samples to private and public alike
        sample = public_copy
    header = list(pd.read_csv(sample, nrows=0).columns)
    entry = native_thresholds(folder.name)
    return CompetitionConfig(
        id=folder.name,
        name=str(competition.name),
        metric=NATIVE_METRIC,
        is_lower_better=entry.is_lower_better,
        id_columns=header[:1],
        target_columns=header[1:] or header[:1],
        answers=_relative(answers, folder),
        sample_submission=_relative(sample, folder),
        description=f"{PUBLIC_DIR}/description.md",
        thresholds=entry.config_thresholds(),
        grader=GraderSpec(name=NATIVE_GRADER, options={"competition": folder.name}),
        tags={
            "benchmark": BENCHMARK,
            "thresholds_available": entry.available,
            "thresholds_source": entry.source,
            "private_dir": PRIVATE_DIR,
        },
    )


@metric(NATIVE_METRIC, lower_is_better=False)
def mle_bench_metric(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Placeholder name for "MLE-bench's grader decides"; see the ``mle-bench/native`` grader."""
    raise CompetitionError("metric 'mle_bench' is computed by the mle-bench/native grader only")


@grader(NATIVE_GRADER)
def native_grader(
    submission: pd.DataFrame, answers: pd.DataFrame, config: CompetitionConfig
) -> float:
    """MLE-bench's ``grade_fn`` of the competition; its ``InvalidSubmissionError`` is ours."""
    from mlebench.grade_helpers import InvalidSubmissionError

    competition_id = str(config.grader.options.get("competition", config.id))
    grade = _registry().get_competition(competition_id).grader.grade_fn
    try:
        return float(grade(submission, answers))
    except InvalidSubmissionError as exc:
        raise InvalidSubmission(f"MLE-bench: {' '.join(str(exc).split())}") from None
