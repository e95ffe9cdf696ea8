"""``sandmle/mle_dojo``: MLE-Dojo's prepared competitions as an Inspect task.

Graded by MLE-Dojo's own rules by default (``-T grader=dojo``, see
:mod:`sandmle.benchmarks.mle_dojo.graders`), or by MLE-bench's (``-T grader=mle-bench``).
Scores carry the medal flags (thresholds from the private board by MLE-bench's rule) and
``human_rank``, MLE-Dojo's HumanRank: the position score averaged over the private and public
boards. A competition that is not prepared, or that nothing can grade, is left out with a
warning naming it and its reason in the task metadata (``excluded``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from inspect_ai import Task, task

import sandmle.benchmarks.mle_bench.graders  # noqa: F401  (registers the lite graders)
import sandmle.benchmarks.mle_dojo.upstream  # noqa: F401  (registers mle-dojo/native)
from sandmle.benchmarks.mle_dojo.competitions import (
    BENCHMARK,
    DEFAULT_DATA_DIR,
    DEFAULT_GRADER,
    GraderChoice,
    load_dojo_competition,
    prepared_ids,
)
from sandmle.errors import CompetitionError, SandmleError
from sandmle.harness.competition import Competition
from sandmle.harness.selection import parse_task_ids
from sandmle.harness.task import TaskLimits, competition_task

logger = logging.getLogger(__name__)


def load_dojo(
    data_dir: Path, ids: list[str], grader: GraderChoice = DEFAULT_GRADER
) -> tuple[list[Competition], dict[str, str]]:
    """The gradable competitions among ``ids`` and, for the rest, why each was left out."""
    loaded: list[Competition] = []
    excluded: dict[str, str] = {}
    for cid in ids:
        try:
            loaded.append(load_dojo_competition(data_dir / cid, grader=grader))
        except CompetitionError as exc:
            logger.warning("leaving %s out of the dataset: %s", cid, exc)
            excluded[cid] = str(exc)
    if not loaded:
        detail = next(iter(excluded.values()), "no prepared competition found")
        raise SandmleError(f"no gradable MLE-Dojo competition under {data_dir}; {detail}")
    return loaded, excluded


@task
def mle_dojo(
    data_dir: str | None = None,
    competitions: str | list[str] | None = None,
    grader: GraderChoice = DEFAULT_GRADER,
    **limits: Any,
) -> Task:
    """MLE-Dojo competitions prepared by MLE-Dojo's ``prepare/mle.py``, one sample each.

    The agent is the standard tool loop unless ``--solver sandmle/dojo`` picks Dojo's own loop.

    Args:
        data_dir: MLE-Dojo's data dir; ``./data/prepared`` (MLE-Dojo's default) if omitted.
        competitions: Ids (comma-separated, a list, or a split file); every prepared one if omitted.
        grader: ``dojo`` (default): MLE-Dojo's own validation and metric; ``mle-bench``:
            MLE-bench's grader of the same competition (where the answers carry its columns).
        **limits: ``profile`` (``micro`` default, ``mle-bench`` for MLE-bench's budget) and any
            ``TaskLimits`` field (``sandbox``, ``time_limit``, ``message_limit``, ``gpus``, ...),
            which overrides the profile's value.
    """
    root = Path(data_dir or DEFAULT_DATA_DIR).expanduser().resolve()
    if not root.is_dir():
        raise SandmleError(f"MLE-Dojo data dir {root} does not exist (set -T data_dir=...)")
    ids = parse_task_ids(competitions) or prepared_ids(root)
    if grader not in ("dojo", "mle-bench"):
        raise SandmleError(f"grader must be 'dojo' or 'mle-bench', not {grader!r}")
    loaded, excluded = load_dojo(root, ids, grader)
    return competition_task(
        loaded,
        name="mle_dojo",
        limits=TaskLimits.from_args(limits),
        metadata={
            "benchmark": BENCHMARK,
            "data_dir": str(root),
            "grader": grader,
            "excluded": excluded,
        },
    )
