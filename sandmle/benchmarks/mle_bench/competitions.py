"""The 22 MLE-bench-lite competitions, and MLE-bench's prepared data dirs as competition folders.

The facts (``competitions.csv``) are the grading spec's companion table
(``lite-competitions.csv``, MLE-bench commit 783b15a); the split lists (``splits/*.txt``) are
MLE-bench's ``experiments/splits``. ``mlebench prepare`` writes one folder per competition::

    <data_dir>/<id>/prepared/public/    what the agent sees
    <data_dir>/<id>/prepared/private/   the answers

:func:`competition_source` describes such a folder to the harness (entry point group
``sandmle.competition_sources``), so it grades as it is, without a ``competition.yaml``.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal, get_args

from sandmle.errors import CompetitionError, SandmleError
from sandmle.harness.competition import (
    CONFIG_FILE,
    PRIVATE_DIR,
    PUBLIC_DIR,
    CompetitionConfig,
    GraderSpec,
)

BENCHMARK = "mle-bench-lite"
GRADER_PREFIX = "mle-bench-lite/"
SPLITS = ("low", "dev", "medium", "high")
"""MLE-bench's split files carried here; ``lite`` is another name for ``low``."""

# Kaggle no longer lets new users accept these competitions' rules, so their data cannot be
# downloaded for ``mlebench prepare`` (openai/mle-bench issues #14, #24, #57, #95). They stay
# in the split and are flagged; users who prepared them earlier can still grade them.
RULES_UNAVAILABLE = frozenset(
    {
        "detecting-insults-in-social-commentary",
        "the-icml-2013-whale-challenge-right-whale-redux",
    }
)

Modality = Literal["tabular", "text", "image", "audio"]
MODALITIES: tuple[Modality, ...] = get_args(Modality)


@dataclass(frozen=True)
class LiteCompetition:
    """What the package knows about one lite competition; paths relative to ``<data_dir>/<id>``."""

    id: str
    name: str
    metric: str
    is_lower_better: bool
    id_columns: tuple[str, ...]
    """Empty for nomad2018, whose rows are matched by position."""
    target_columns: tuple[str, ...]
    """The graded columns, in the answers file's order."""
    answers: str
    sample_submission: str
    modality: Modality
    task_type: str
    awards_medals: bool
    """MLE-bench's config flag; informational, since MLE-bench computes medals regardless."""
    rules_unavailable: bool
    """Kaggle's rules can no longer be accepted, so the data cannot be downloaded anew."""


def _strip_id(path: str, competition_id: str) -> str:
    prefix = f"{competition_id}/"
    if not path.startswith(prefix):
        raise SandmleError(f"competitions.csv: {path!r} does not lie under {prefix}")
    return path[len(prefix) :]


def _modality(value: str, cid: str) -> Modality:
    for modality in MODALITIES:
        if value == modality:
            return modality
    raise SandmleError(f"competitions.csv: {cid}: unknown modality {value!r}")


def _from_row(row: dict[str, str]) -> LiteCompetition:
    cid = row["id"]
    return LiteCompetition(
        id=cid,
        name=row["name"],
        metric=row["metric"],
        is_lower_better=row["is_lower_better"] == "true",
        id_columns=() if row["id_column"] == "none" else (row["id_column"],),
        target_columns=tuple(row["target_columns"].split(";")),
        answers=_strip_id(row["answers_file"], cid),
        sample_submission=_strip_id(row["sample_submission_file"], cid),
        modality=_modality(row["modality"], cid),
        task_type=row["task_type"],
        awards_medals=row["awards_medals"] == "true",
        rules_unavailable=cid in RULES_UNAVAILABLE,
    )


@cache
def lite_competitions() -> dict[str, LiteCompetition]:
    """The 22 lite competitions by id, in MLE-bench's ``low.txt`` order."""
    text = resources.files(__package__).joinpath("competitions.csv").read_text(encoding="utf-8")
    rows = [_from_row(row) for row in csv.DictReader(text.splitlines())]
    return {c.id: c for c in rows}


def get_competition(competition_id: str) -> LiteCompetition:
    try:
        return lite_competitions()[competition_id]
    except KeyError:
        raise SandmleError(f"{competition_id!r} is not an MLE-bench-lite competition") from None


def grader_name(competition_id: str) -> str:
    """The registered grader of a lite competition, e.g. ``mle-bench-lite/leaf-classification``."""
    return GRADER_PREFIX + competition_id


def split_ids(split: str) -> list[str]:
    """Competition ids of one of MLE-bench's splits (``lite``/``low``, ``dev``, ``medium``, ``high``)."""
    name = "low" if split == "lite" else split
    if name not in SPLITS:
        raise SandmleError(f"unknown MLE-bench split {split!r} (known: lite, {', '.join(SPLITS)})")
    text = resources.files(__package__).joinpath(f"splits/{name}.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def is_prepared(folder: Path) -> bool:
    """Whether ``mlebench prepare`` has written this competition folder."""
    return (folder / PUBLIC_DIR).is_dir() and (folder / PRIVATE_DIR).is_dir()


def competition_config(folder: Path, mlebench_dir: Path | None = None) -> CompetitionConfig:
    """The config of a prepared lite competition folder ``<data_dir>/<id>``.

    Thresholds come from MLE-bench's own leaderboard when a checkout or the ``mlebench``
    package is found (``mlebench_dir``, else ``$MLEBENCH_DIR``, else the installed package),
    otherwise from the packaged table; see :mod:`.thresholds`.
    """
    from sandmle.benchmarks.mle_bench.thresholds import lite_thresholds

    lite = get_competition(folder.name)
    if not is_prepared(folder):
        raise CompetitionError(
            f"{folder}: MLE-bench data for {lite.id} is not prepared "
            f"(run `mlebench prepare -c {lite.id}`)"
        )
    entry = lite_thresholds(lite.id, mlebench_dir)
    return CompetitionConfig(
        id=lite.id,
        name=lite.name,
        metric=lite.metric,
        is_lower_better=entry.is_lower_better,
        id_columns=list(lite.id_columns),
        target_columns=list(lite.target_columns),
        answers=lite.answers,
        sample_submission=lite.sample_submission,
        thresholds=entry.config_thresholds(),
        grader=GraderSpec(name=grader_name(lite.id)),
        modality=lite.modality,
        task_type=lite.task_type,
        tags={
            "benchmark": BENCHMARK,
            "awards_medals": lite.awards_medals,
            "rules_unavailable": lite.rules_unavailable,
            "thresholds_available": entry.available,
            "thresholds_source": entry.source,
        },
    )


def competition_source(folder: Path) -> CompetitionConfig | None:
    """Entry point for ``sandmle.competition_sources``: an MLE-bench prepared competition.

    A lite competition gets our grader; any other competition MLE-bench's registry knows gets
    MLE-bench's own grader, where the ``mlebench`` package is importable. None for any other
    folder (or one with its own ``competition.yaml``); a known id whose data is not prepared
    is an error that says so, rather than "unknown layout".
    """
    folder = Path(folder)
    if (folder / CONFIG_FILE).is_file():
        return None
    if folder.name in lite_competitions():
        return competition_config(folder)
    from sandmle.benchmarks.mle_bench import upstream

    if not upstream.mlebench_available() or not is_prepared(folder):
        return None
    if folder.name not in upstream.mlebench_competition_ids():
        return None
    return upstream.native_config(folder)
