"""An evaluation's cells on a Ray cluster (``eval.backend: ray`` of a reproduce profile).

Each (model, benchmark, scaffold) cell of the study is one Ray task: Inspect's ``eval_set``
over that cell alone, on whichever node has the CPUs, GPUs, memory and custom resources the
cell declares, writing its log to a folder of its own under the study's log dir. The cell is
the very one ``eval_set`` runs in-process (the same task, solver, model and limits), so its
samples are too. A cell whose worker or node died is run again by Ray on another node; its
``eval_set`` resumes from the samples its log already holds (the log dir must be a folder
every node shares). Run again on the same log dir, finished cells are kept, as in-process.

``<log_dir>/ray-cells.jsonl`` gets one line per cell and run: its folder, node, host and
outcome. A cell's samples put their sandboxes in a folder of the cell's own, recorded in a
ledger beside the logs (``<log_dir>/.cells/``) while it runs: a cell killed with its node
(or its worker) cannot clean up, so every cell that starts first releases what dead cells of
its host left (their sandboxes' processes, cgroups, quota mounts and folders). Ray is imported
here only: ``pip install "sandmle[ray]"``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

from sandmle.errors import SandmleError
from sandmle.harness.sandbox import process_start_time, release_sandboxes
from sandmle.specs.study import EvalRay, StudyConfig

CELL_LOG = "ray-cells.jsonl"
LEDGER = ".cells"
"""Under the study's log dir: one record per running cell (host, pid, its sandboxes' folder)."""

CELL_PREFIX = "sandmle-cell-"
"""Each running cell's folder in the host's temp folder (its sandboxes, its TMPDIR)."""


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


def run_cell(study: StudyConfig, ledger: str) -> dict[str, Any]:
    """One cell's ``eval_set`` (on a Ray worker), its sandboxes in a folder of its own that
    ``ledger`` records while it runs; whether it finished, where it ran, and how many dead
    cells' leftovers it released first."""
    import ray

    from sandmle.study.runner import run_study

    swept = sweep_cells(Path(ledger))
    work = Path(tempfile.mkdtemp(prefix=CELL_PREFIX)).resolve()
    (work / "tmp").mkdir()
    record = Path(ledger) / f"{work.name}.cell"  # not .json: no Inspect log
    pid = os.getpid()
    line = {
        "host": socket.gethostname(),
        "pid": pid,
        "start": process_start_time(pid),
        "work": str(work),
    }
    record.write_text(json.dumps(line), encoding="utf-8")
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"], tempfile.tempdir = str(work / "tmp"), None  # the samples' sandboxes
    try:
        success = run_study(study, display="none")
    finally:
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before
        tempfile.tempdir = None
        _release(work)
        record.unlink(missing_ok=True)
    node = ray.get_runtime_context().get_node_id()
    return {"success": success, "node_id": node, "host": socket.gethostname(), "swept": swept}


def sweep_cells(ledger: Path) -> int:
    """Release what cells of this host whose process died left (a killed cell cannot clean
    up); how many. A running cell's record, or another host's, is left alone."""
    ledger.mkdir(parents=True, exist_ok=True)
    swept = 0
    for path in sorted(ledger.glob("*.cell")):
        try:
            line = json.loads(path.read_text(encoding="utf-8"))
            host, pid, start, work = line["host"], line["pid"], line["start"], Path(line["work"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not ours
        if host != socket.gethostname() or process_start_time(pid) == start:
            continue
        if _cell_folder(work):  # a record names the folder: only ever a cell's own is removed
            _release(work)
        path.unlink(missing_ok=True)
        swept += 1
    return swept


def _cell_folder(work: Path) -> bool:
    """Whether ``work`` is what ``run_cell`` makes: ``sandmle-cell-*`` right in this host's
    temp folder, not a link (the ledger lives in a shared out dir that others can write)."""
    root = Path(tempfile.gettempdir()).resolve()
    return work.name.startswith(CELL_PREFIX) and work.parent == root and not work.is_symlink()


def _release(work: Path) -> None:
    release_sandboxes(work / "tmp")  # processes left in the samples' cgroups, mounts, folders
    shutil.rmtree(work, ignore_errors=True)


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
    # a fresh worker per cell (max_calls): its model, grading server and temp folder go with it
    task = ray.remote(max_calls=1)(run_cell).options(**options)
    cells = cell_studies(study)
    root = study.resolved_log_dir()
    root.mkdir(parents=True, exist_ok=True)
    ledger = str((root / LEDGER).resolve())
    refs = [task.remote(single, ledger) for _, single in cells]
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
