"""``sandmle/mle_bench_lite`` and ``sandmle/mle_bench``: MLE-bench's prepared data as Inspect tasks.

Data comes from ``mlebench prepare`` (``<data_dir>/<id>/prepared/{public,private}``), by
default MLE-bench's own location: ``mlebench/registry.py`` sets
``DEFAULT_DATA_DIR = Path(appdirs.user_cache_dir()) / "mle-bench" / "data"``, i.e.
``~/.cache/mle-bench/data`` on Linux (``$XDG_CACHE_HOME`` if set), ``~/Library/Caches/mle-bench/data``
on macOS and ``%LOCALAPPDATA%\\mle-bench\\data`` on Windows.

A competition whose data is not prepared is left out with a warning naming it, and its reason is
kept in the task metadata (``excluded``), so it never counts as a failed sample. The two
competitions whose Kaggle rules can no longer be accepted stay in the split, flagged in their
sample metadata (``rules_unavailable``).
"""

from __future__ import annotations

import logging
import math
import os
import sys
from pathlib import Path
from typing import Any

from inspect_ai import Task, task, task_with

import sandmle.benchmarks.mle_bench.graders  # noqa: F401  (registers the graders)
from sandmle.benchmarks.mle_bench.competitions import (
    BENCHMARK,
    is_prepared,
    lite_competitions,
    split_ids,
)
from sandmle.benchmarks.mle_bench.cross_check import cross_checked_medal_scorer
from sandmle.benchmarks.mle_bench.upstream import (
    INSTALL_HINT,
    mlebench_available,
    mlebench_default_data_dir,
    mlebench_is_prepared,
    mlebench_split_ids,
)
from sandmle.errors import CompetitionError, SandmleError
from sandmle.harness.competition import CONFIG_FILE, Competition, load_competition
from sandmle.harness.selection import parse_task_ids
from sandmle.harness.task import TaskLimits, competition_task

logger = logging.getLogger(__name__)


def default_data_dir() -> Path:
    """MLE-bench's default data dir: its own ``DEFAULT_DATA_DIR`` where ``mlebench`` is
    importable, else the same rule, ``appdirs.user_cache_dir()/mle-bench/data``."""
    if mlebench_available():
        return mlebench_default_data_dir()
    if sys.platform == "darwin":
        cache = Path.home() / "Library" / "Caches"
    elif os.name == "nt":
        cache = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    else:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return (cache / "mle-bench" / "data").resolve()


def competition_ids(split: str, competitions: str | list[str] | None) -> list[str]:
    """The split's ids (a split name or a split file), narrowed to ``competitions`` if given."""
    if Path(split).suffix:
        ids = parse_task_ids(split) or []
    else:
        from_mlebench = mlebench_split_ids(split) if mlebench_available() else None
        ids = from_mlebench if from_mlebench is not None else split_ids(split)
    chosen = parse_task_ids(competitions)
    if chosen is None:
        return ids
    unknown = [c for c in chosen if c not in ids]
    if unknown:
        raise SandmleError(f"not in split {split!r}: {', '.join(unknown)}")
    return chosen


def exclusion_reason(folder: Path) -> str | None:
    """Why ``folder`` cannot be a sample, or None when it loads as a competition."""
    cid = folder.name
    if not is_prepared(folder):
        hint = f"run `mlebench prepare -c {cid} --data-dir {folder.parent}`"
        lite = lite_competitions().get(cid)
        if lite is not None and lite.rules_unavailable:
            hint += " (Kaggle no longer lets new users accept its rules; use data prepared earlier)"
        return f"MLE-bench data for {cid} is not prepared under {folder.parent}: {hint}"
    if cid in lite_competitions() or (folder / CONFIG_FILE).is_file():
        return None
    if not mlebench_available():
        return f"{cid} is graded by MLE-bench's own grader: {INSTALL_HINT}"
    if not mlebench_is_prepared(folder):
        return f"MLE-bench's is_dataset_prepared says {cid} is not prepared under {folder.parent}"
    return None


def load_split(data_dir: Path, ids: list[str]) -> tuple[list[Competition], dict[str, str]]:
    """The loadable competitions and, for the rest, why each was left out."""
    loaded: list[Competition] = []
    excluded: dict[str, str] = {}
    for cid in ids:
        reason = exclusion_reason(data_dir / cid)
        if reason is None:
            try:
                # lite: our grader; others: MLE-bench's (see ``competition_source``)
                loaded.append(load_competition(data_dir / cid))
                continue
            except CompetitionError as exc:
                reason = str(exc)
        logger.warning("leaving %s out of the dataset: %s", cid, reason)
        excluded[cid] = reason
    if not loaded:
        raise SandmleError(
            f"no competition of the split is prepared under {data_dir}; "
            f"first: {next(iter(excluded.values()), 'empty split')}"
        )
    return loaded, excluded


def unknown_thresholds(competitions: list[Competition]) -> dict[str, str]:
    """Competitions without medal thresholds (no leaderboard), and why; warned about loudly."""
    unknown = {}
    for competition in competitions:
        thresholds = competition.config.thresholds
        if thresholds is not None and math.isnan(thresholds.gold):
            source = str(competition.config.tags.get("thresholds_source", "no leaderboard"))
            unknown[competition.id] = source
            logger.warning(
                "MEDAL THRESHOLDS UNKNOWN for %s (%s): it is graded, but no submission can "
                "earn a medal or beat the median there",
                competition.id,
                source,
            )
    return unknown


def flag_samples(task_: Task) -> None:
    """Copy each competition's benchmark flags into its sample's metadata."""
    for sample in task_.dataset:
        lite = lite_competitions().get(str(sample.id))
        metadata = sample.metadata if sample.metadata is not None else {}
        metadata["benchmark"] = BENCHMARK if lite else "mle-bench"
        metadata["rules_unavailable"] = bool(lite and lite.rules_unavailable)
        metadata["awards_medals"] = bool(lite and lite.awards_medals)
        sample.metadata = metadata


def build_task(
    split: str,
    data_dir: str | None,
    competitions: str | list[str] | None,
    cross_check: bool,
    limits: TaskLimits,
) -> Task:
    """The task both ``mle_bench`` and ``mle_bench_lite`` return."""
    root = Path(data_dir).expanduser().resolve() if data_dir else default_data_dir()
    loaded, excluded = load_split(root, competition_ids(split, competitions))
    if cross_check and not mlebench_available():
        logger.warning("cross_check: the mlebench package is not importable; grading without it")
    lite = split in ("lite", "low")
    unknown = unknown_thresholds(loaded)
    built = competition_task(
        loaded,
        name="mle_bench_lite" if lite else "mle_bench",
        metadata={
            "benchmark": BENCHMARK if lite else "mle-bench",
            "split": split,
            "data_dir": str(root),
            "excluded": excluded,
            "thresholds_unknown": unknown,
            "cross_check": cross_check,
        },
        limits=limits,
    )
    flag_samples(built)
    return task_with(built, scorer=cross_checked_medal_scorer()) if cross_check else built


@task
def mle_bench(
    split: str = "lite",
    data_dir: str | None = None,
    competitions: str | list[str] | None = None,
    cross_check: bool = False,
    **limits: Any,
) -> Task:
    """MLE-bench competitions prepared by ``mlebench prepare``, one sample per competition.

    Args:
        split: ``lite`` (= ``low``), ``dev``, ``medium``, ``high``, or a split file (one id a line).
        data_dir: MLE-bench's data dir; its default location (``~/.cache/mle-bench/data``) if omitted.
        competitions: Only these ids of the split (comma-separated or a list).
        cross_check: Also grade with MLE-bench's grader where ``mlebench`` is importable.
        **limits: ``profile`` (``micro`` default, ``mle-bench`` for MLE-bench's budget) and any
            ``TaskLimits`` field (``sandbox``, ``time_limit``, ``message_limit``, ``gpus``, ...),
            which overrides the profile's value.
    """
    return build_task(
        split,
        data_dir,
        competitions,
        cross_check,
        limits=TaskLimits.from_args(limits),
    )


@task
def mle_bench_lite(
    data_dir: str | None = None,
    competitions: str | list[str] | None = None,
    cross_check: bool = False,
    **limits: Any,
) -> Task:
    """The 22 MLE-bench-lite competitions (``mle_bench`` with ``split=lite``); same arguments."""
    return build_task(
        "lite",
        data_dir,
        competitions,
        cross_check,
        limits=TaskLimits.from_args(limits),
    )
