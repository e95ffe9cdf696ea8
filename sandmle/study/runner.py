"""Run a study matrix through Inspect's ``eval_set``, so an interrupted study resumes.

``eval_set`` pairs each (benchmark, scaffold, model) cell with its log by an identifier that
covers the task, its args, the solver and the model; run again on the same log dir, finished
cells are kept, interrupted ones resume at the sample level, and nothing runs twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sandmle.specs.study import StudyConfig
from sandmle.study.evaluate import build_solver, build_task

if TYPE_CHECKING:
    from inspect_ai.util import DisplayType


def study_tasks(study: StudyConfig) -> list[Any]:
    """One Inspect task per (benchmark, scaffold) cell, each with its solver fixed."""
    from inspect_ai import task_with

    tasks = []
    for bench, scaffold in study.cells():
        args = {"sandbox": study.sandbox, **bench.args}
        task = build_task(bench.task, args)
        solver = build_solver(scaffold.solver, scaffold.args)
        dataset = task.dataset if scaffold.limit is None else task.dataset[: scaffold.limit]
        epochs = scaffold.epochs or study.epochs
        tasks.append(task_with(task, dataset=dataset, solver=solver, epochs=epochs))
    return tasks


def sample_count(study: StudyConfig, tasks: list[Any]) -> int:
    """Samples the study runs (every model, epoch and cell), from the tasks' own datasets: a
    task may leave rows out (e.g. a Dojo replica whose metric cannot grade)."""
    per_model = sum(
        min(len(task.dataset), study.limit or len(task.dataset)) * (task.epochs or 1)
        for task in tasks
    )
    return len(study.models) * per_model


def run_study(
    study: StudyConfig, display: DisplayType | None = None, tasks: list[Any] | None = None
) -> bool:
    """Run (or resume) every cell (``tasks``: ``study_tasks(study)`` when already built); True
    when all of them finished successfully."""
    from inspect_ai import eval_set
    from inspect_ai.model import get_model

    models = [get_model(m.model, **m.model_args) for m in study.models]
    success, _ = eval_set(
        tasks=study_tasks(study) if tasks is None else tasks,
        model=models,
        log_dir=str(study.resolved_log_dir()),
        limit=study.limit,
        max_samples=study.max_samples,
        max_tasks=study.max_tasks,
        retry_attempts=study.retry_attempts,
        log_buffer=study.log_buffer,
        display=display,
    )
    return bool(success)
