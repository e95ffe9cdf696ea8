"""``sandmle/synthetic``: evaluate on a synthetic pack (the built-in one by default)."""

from __future__ import annotations

from inspect_ai import Task, task

from sandmle.harness.pack import load_pack
from sandmle.harness.selection import parse_task_ids
from sandmle.harness.task import (
    DEFAULT_DISK_MB,
    DEFAULT_MAX_PROCESSES,
    DEFAULT_MEMORY_MB,
    DEFAULT_MESSAGE_LIMIT,
    DEFAULT_TIME_LIMIT,
    SandboxType,
    TaskLimits,
    competition_task,
)
from sandmle.harness.tools import DEFAULT_COMMAND_TIMEOUT


@task
def synthetic(
    pack: str | None = None,
    tasks: str | list[str] | None = None,
    sandbox: SandboxType = "bwrap",
    time_limit: int | None = DEFAULT_TIME_LIMIT,
    message_limit: int | None = DEFAULT_MESSAGE_LIMIT,
    token_limit: int | None = None,
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT,
    memory_mb: int = DEFAULT_MEMORY_MB,
    max_processes: int = DEFAULT_MAX_PROCESSES,
    disk_mb: int = DEFAULT_DISK_MB,
    warm_python: bool = True,
    epochs: int = 1,
) -> Task:
    """A synthetic pack as an Inspect task, one sample per competition.

    Args:
        pack: Pack folder; the built-in pack when omitted.
        tasks: Task ids (comma-separated or a list) or a split file; all when omitted.
        sandbox: ``bwrap`` (default, isolated), ``docker``, or ``local`` (no isolation).
        time_limit: Wall-clock seconds per sample.
        message_limit: Messages per sample.
        token_limit: Tokens per sample.
        command_timeout: Seconds per bash/python call.
        memory_mb: Memory cap per process in the sandbox.
        max_processes: Process cap in the sandbox.
        disk_mb: Disk quota of the sample's writable dirs.
        warm_python: A warm interpreter per sample, so ``python`` runs skip the ML imports.
        epochs: Runs per sample.
    """
    if pack is None:
        from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir  # generator: on use

        pack = str(builtin_pack_dir())
    loaded = load_pack(pack, parse_task_ids(tasks))
    return competition_task(
        loaded.competitions,
        name="synthetic",
        limits=TaskLimits.pick(locals()),
        metadata={
            "benchmark": "synthetic",
            "pack": loaded.manifest.name,
            "pack_version": loaded.manifest.version,
            "pack_seed": loaded.manifest.seed,
        },
    )
