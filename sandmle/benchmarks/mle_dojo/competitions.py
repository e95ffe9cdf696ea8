"""MLE-Dojo's prepared data as sandmle competitions.

MLE-Dojo's ``prepare/mle.py`` (MLE-Dojo/MLE-Dojo, default ``--data-dir ./data/prepared``) writes::

    <data_dir>/<id>/data/public/    the competition's files, description.txt, sample_submission.csv
    <data_dir>/<id>/data/private/   test_answer.csv, private_leaderboard.csv, public_leaderboard.csv

(the two boards are copied from ``mledojo/competitions/<id>/info/``, columns ``rank,score``,
best first; some competitions have only one). sandmle's format wants ``prepared/{public,private}``
and a ``competition.yaml``, and never writes into the user's data, so each Dojo competition gets a
*view*: a folder in the user cache holding the yaml and two symlinks to Dojo's folders.

Thresholds come from the private board by MLE-bench's rule (direction from the board);
HumanRank averages the position score over whichever boards exist, as MLE-Dojo does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from sandmle.benchmarks.mle_bench.competitions import (
    get_competition,
    grader_name,
    lite_competitions,
)
from sandmle.benchmarks.mle_dojo import graders as dojo_graders
from sandmle.errors import CompetitionError
from sandmle.harness.competition import (
    Competition,
    CompetitionConfig,
    GraderSpec,
    HumanLeaderboards,
    Thresholds,
    load_competition,
    write_config,
)

BENCHMARK = "mle-dojo"
DEFAULT_DATA_DIR = Path("data/prepared")
"""MLE-Dojo's ``prepare/mle.py --data-dir`` default, relative to where it is run."""
PUBLIC = Path("data/public")
PRIVATE = Path("data/private")
ANSWERS = "test_answer.csv"
BOARDS = ("private_leaderboard.csv", "public_leaderboard.csv")
VIEWS_ENV = "SANDMLE_DOJO_VIEWS"
NATIVE_GRADER = "mle-dojo/native"
GraderChoice = Literal["dojo", "mle-bench"]
DEFAULT_GRADER: GraderChoice = "dojo"
NATIVE_METRIC = "mle_dojo"


def is_prepared(folder: Path) -> bool:
    """Whether MLE-Dojo's prepare wrote this folder (the files its ``Competition`` requires)."""
    required = (PUBLIC / "description.txt", PUBLIC / "sample_submission.csv", PRIVATE / ANSWERS)
    return all((folder / path).is_file() for path in required)


def prepared_ids(data_dir: Path) -> list[str]:
    return sorted(p.name for p in data_dir.iterdir() if p.is_dir() and is_prepared(p))


def mledojo_metric_class(competition_id: str) -> type | None:
    """MLE-Dojo's metric class for a competition, where the ``mledojo`` package is importable."""
    if importlib.util.find_spec("mledojo") is None:
        return None
    from mledojo.competitions import get_metric

    return get_metric(competition_id)


@dataclass(frozen=True)
class Grading:
    """How a Dojo competition is graded, or why it cannot be."""

    grader: GraderSpec | None
    metric: str
    unsupported: str | None = None
    is_lower_better: bool | None = None
    """Set where the metric name does not say it (MLE-Dojo's rules)."""


def choose_grading(folder: Path, grader: GraderChoice = DEFAULT_GRADER) -> Grading:
    """How ``folder`` is graded under ``grader``.

    ``dojo``: our implementation of MLE-Dojo's own rules where we have it, else MLE-Dojo's
    metric class (``mledojo`` importable). ``mle-bench``: our lite grader (MLE-bench's rules)
    when the answers have MLE-bench's columns, else MLE-Dojo's metric class.
    """
    cid = folder.name
    if grader == "dojo":
        if cid in dojo_graders.UNGRADABLE:
            return Grading(None, NATIVE_METRIC, f"{cid}: {dojo_graders.UNGRADABLE[cid]}")
        if cid in dojo_graders.RULES:
            rule = dojo_graders.RULES[cid]
            spec = GraderSpec(name=dojo_graders.GRADER_PREFIX + cid)
            return Grading(spec, NATIVE_METRIC, is_lower_better=rule.lower_is_better)
    elif cid in lite_competitions():
        lite = get_competition(cid)
        header = list(pd.read_csv(folder / PRIVATE / ANSWERS, nrows=0).columns)
        if set(lite.id_columns) | set(lite.target_columns) <= set(header):
            return Grading(GraderSpec(name=grader_name(cid)), lite.metric)
    if mledojo_metric_class(cid) is not None:
        return Grading(GraderSpec(name=NATIVE_GRADER, options={"competition": cid}), NATIVE_METRIC)
    reason = (
        f"{cid}: unsupported, no sandmle metric for it and MLE-Dojo's metric class is unavailable "
        "(pip install MLE-Dojo's `mledojo` package to grade it with its own metric)"
    )
    return Grading(None, NATIVE_METRIC, reason)


def _view_path(board: str) -> str:
    return f"prepared/private/{board}"


def dojo_config(folder: Path, grading: Grading) -> CompetitionConfig:
    """Our config of a prepared Dojo competition (paths relative to its view)."""
    cid = folder.name
    boards = [b for b in BOARDS if (folder / PRIVATE / b).is_file()]
    lite = lite_competitions().get(cid)
    human = None
    if boards:
        public = _view_path(BOARDS[1]) if len(boards) == 2 else None
        human = HumanLeaderboards(private=_view_path(boards[0]), public=public)
    nan = float("nan")
    return CompetitionConfig(
        id=cid,
        name=lite.name if lite else cid.replace("-", " ").title(),
        metric=grading.metric,
        is_lower_better=grading.is_lower_better,
        id_columns=list(lite.id_columns) if lite else ["id"],
        target_columns=list(lite.target_columns) if lite else ["target"],
        answers=_view_path(ANSWERS),
        sample_submission="prepared/public/sample_submission.csv",
        description="prepared/public/description.txt",
        leaderboard=_view_path(boards[0]) if boards else None,
        thresholds=None if boards else Thresholds(gold=nan, silver=nan, bronze=nan, median=nan),
        human_leaderboards=human,
        grader=grading.grader or GraderSpec(),
        modality=lite.modality if lite else "other",
        task_type=lite.task_type if lite else "",
        tags={"benchmark": BENCHMARK, "dojo_folder": str(folder), "leaderboards": boards},
    )


def views_root() -> Path:
    """Where views live: ``$SANDMLE_DOJO_VIEWS``, else the user cache."""
    given = os.environ.get(VIEWS_ENV)
    if given:
        return Path(given)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "sandmle" / "mle-dojo-views"


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink():
        link.unlink()
    link.symlink_to(target.resolve(), target_is_directory=True)


def write_view(folder: Path, config: CompetitionConfig, root: Path | None = None) -> Path:
    """The view of ``folder``: ``competition.yaml`` plus ``prepared/{public,private}`` symlinks."""
    key = hashlib.sha256(str(folder.resolve().parent).encode()).hexdigest()[:12]
    view = (root or views_root()) / key / folder.name
    (view / "prepared").mkdir(parents=True, exist_ok=True)
    _link(view / "prepared" / "public", folder / PUBLIC)
    _link(view / "prepared" / "private", folder / PRIVATE)
    write_config(config, view)
    return view


def load_dojo_competition(
    folder: Path, views: Path | None = None, grader: GraderChoice = DEFAULT_GRADER
) -> Competition:
    """A prepared Dojo competition as a sandmle competition (through its view)."""
    if not is_prepared(folder):
        raise CompetitionError(
            f"MLE-Dojo data for {folder.name} is not prepared under {folder.parent} "
            f"(run MLE-Dojo's `python prepare/mle.py --competitions {folder.name} "
            f"--data-dir {folder.parent}`)"
        )
    grading = choose_grading(folder, grader)
    if grading.unsupported:
        raise CompetitionError(grading.unsupported)
    view = write_view(folder, dojo_config(folder, grading), views)
    return load_competition(view, linked_dirs=True)  # the view links to the user's own data
