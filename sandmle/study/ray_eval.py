"""An evaluation's cells on a Ray cluster (``eval.backend: ray`` of a reproduce profile).

Each (model, benchmark, scaffold) cell of the study is one Ray task: Inspect's ``eval_set``
over that cell alone, on whichever node has the CPUs, GPUs, memory and custom resources the
cell declares, writing its log to a folder of its own under the study's log dir. The cell is
the very one ``eval_set`` runs in-process (the same task, solver, model and limits), so its
samples are too. A cell whose worker or node died is run again by Ray on another node; its
``eval_set`` resumes from the samples its log already holds (the log dir must be a folder
every node shares). Run again on the same log dir, finished cells are kept, as in-process.

``<log_dir>/ray-cells.jsonl`` gets one line per cell and run: its folder, node, host and
outcome. Ray is imported here only: ``pip install "sandmle[ray]"``.
"""

from __future__ import annotations

import json
import re
import socket
from typing import Any

from sandmle.errors import SandmleError
from sandmle.specs.study import EvalRay, StudyConfig

CELL_LOG = "ray-cells.jsonl"


def cell_studies(study: StudyConfig) -> list[tuple[str, StudyConfig]]:
    """One study per (model, benchmark, scaffold) cell, each logging to its own folder under
    the study's (named by the cell's place in the matrix, so a rerun finds it again)."""
    root = study.resolved_log_dir()
    cells = []
    for m, model in enumerate(study.models):
        for bench, scaffold in study.cells():
            s = study.scaffolds.index(scaffold)
            solver = re.sub(r"[^A-Za-z0-9_-]+", "-", scaffold.solver.rpartition("/")[2])[-40:]
            name = f"m{m}-{bench.key}-s{s}-{solver}".strip("-")
            single = study.model_copy(
                update={
                    "models": [model], "benchmarks": [bench],
                    "scaffolds": [scaffold.model_copy(update={"benchmarks": None})],
                    "log_dir": str(root / name), "max_tasks": 1,
                }
            )  # fmt: skip
            cells.append((name, single))
    return cells


def run_cell(study: StudyConfig) -> dict[str, Any]:
    """One cell's ``eval_set`` (on a Ray worker): whether it finished, and where it ran."""
    import ray

    from sandmle.study.runner import run_study

    success = run_study(study, display="none")
    node = ray.get_runtime_context().get_node_id()
    return {"success": success, "node_id": node, "host": socket.gethostname()}


def run_study_on_ray(study: StudyConfig, settings: EvalRay) -> bool:
    """Run (or resume) every cell of ``study`` on the Ray cluster; True when all finished."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=settings.address, log_to_driver=False)
    options: dict[str, Any] = {
        "num_cpus": settings.cpus_per_cell,
        "num_gpus": settings.gpus_per_cell,
        "resources": dict(settings.resources),
        "max_retries": settings.retries,  # a worker or node that died: run again, resumed
        "retry_exceptions": False,  # the cell's own error is its outcome, not retried
    }
    if settings.memory_per_cell_mb:
        options["memory"] = settings.memory_per_cell_mb * 1024 * 1024
    if settings.spread:
        options["scheduling_strategy"] = "SPREAD"
    task = ray.remote(run_cell).options(**options)
    cells = cell_studies(study)
    refs = [task.remote(single) for _, single in cells]
    root = study.resolved_log_dir()
    root.mkdir(parents=True, exist_ok=True)
    outcomes = []
    with (root / CELL_LOG).open("a", encoding="utf-8") as log:
        for (name, _), ref in zip(cells, refs, strict=True):
            try:
                outcome = {**ray.get(ref), "error": None}
            except ray.exceptions.RayError as exc:
                first = str(exc).strip().splitlines() or [type(exc).__name__]
                outcome = {"success": False, "node_id": None, "host": None, "error": first[-1]}
            outcomes.append(outcome)
            log.write(json.dumps({"cell": name, **outcome}) + "\n")
    return all(o["success"] for o in outcomes)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise SandmleError('eval.backend: ray needs Ray: pip install "sandmle[ray]"') from None
    return ray
