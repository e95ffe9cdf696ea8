"""``sandmle/synthetic``: evaluate on a synthetic pack (the built-in one by default)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from sandmle.errors import prerequisite_errors
from sandmle.harness.pack import load_pack
from sandmle.harness.selection import parse_task_ids
from sandmle.harness.task import TaskLimits, competition_task


@task
@prerequisite_errors
def synthetic(
    pack: str | None = None,
    tasks: str | list[str] | None = None,
    **limits: Any,
) -> Task:
    """A synthetic pack as an Inspect task, one sample per competition.

    Args:
        pack: Pack folder; the built-in pack when omitted.
        tasks: Task ids (comma-separated or a list) or a split file; all when omitted.
        **limits: ``profile`` (``micro`` default, ``mle-bench`` for MLE-bench's budget) and any
            ``TaskLimits`` field (``sandbox``, ``time_limit``, ``message_limit``,
            ``file_size_mb``, ``cpus``, ``threads``, ``shm_mb``, ``warm_python``, ...), which
            overrides the profile's value; an unknown one is an error.
    """
    if pack is None:
        from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir  # generator: on use

        pack = str(builtin_pack_dir())
    loaded = load_pack(pack, parse_task_ids(tasks))
    return competition_task(
        loaded.competitions,
        name="synthetic",
        limits=TaskLimits.from_args(limits),
        metadata={
            "benchmark": "synthetic",
            "pack": loaded.manifest.name,
            "pack_version": loaded.manifest.version,
            "pack_seed": loaded.manifest.seed,
        },
    )
