"""Running a pack's slots: in parallel, with progress, and resumable after an interruption.

Each finished slot's outcome is saved to ``<pack>/generation/slots/<index>.json`` as soon as
it comes back, so a killed run started again on the same folder skips what is done (a slot
is seeded from the secret, pack seed, index and attempt only, so redoing one gives the same
bytes). Progress is a rich bar on a terminal and plain lines otherwise (logs, CI, nohup).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Protocol, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sandmle.benchmarks.synthetic.pipeline import TaskOutcome
from sandmle.benchmarks.synthetic.task_files import GENERATION_DIR

SLOTS_DIR = f"{GENERATION_DIR}/slots"
LINE_EVERY_S = 10.0
"""Seconds between plain progress lines (also one per 5% of the slots)."""


class Job(Protocol):
    @property
    def index(self) -> int: ...

    def run(self, first_attempt: int = 0) -> TaskOutcome: ...


def slot_path(out: Path, index: int) -> Path:
    return out / SLOTS_DIR / f"{index:05d}.json"


def save_outcome(out: Path, outcome: TaskOutcome) -> None:
    path = slot_path(out, outcome.index)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(outcome.model_dump_json(indent=2) + "\n", encoding="utf-8")
    partial.replace(path)  # whole or absent, even if the run is killed mid-write


def load_outcomes(out: Path) -> dict[int, TaskOutcome]:
    """Outcomes of the slots a previous run finished, by index."""
    folder = out / SLOTS_DIR
    if not folder.is_dir():
        return {}
    outcomes = [
        TaskOutcome.model_validate_json(p.read_text(encoding="utf-8"))
        for p in sorted(folder.glob("*.json"))
    ]
    return {o.index: o for o in outcomes}


def clear_unfinished(out: Path, done: Iterable[TaskOutcome]) -> None:
    """Remove what an interrupted run left behind: staging folders and unrecorded tasks."""
    kept = {o.task_id for o in done if o.task_id} | {GENERATION_DIR}
    for entry in out.iterdir():
        if entry.is_dir() and entry.name not in kept:
            shutil.rmtree(entry)


def run_jobs(
    jobs: Sequence[tuple[Job, int]],
    workers: int,
    progress: bool,
    on_done: Callable[[TaskOutcome], None],
    label: str = "generating",
) -> list[TaskOutcome]:
    """Run ``(job, first_attempt)`` pairs over ``workers`` processes, calling ``on_done`` as
    each finishes; outcomes in index order."""
    outcomes: list[TaskOutcome] = []
    with _reporter(len(jobs), progress, label) as report:
        if workers <= 1 or len(jobs) <= 1:
            for job, first in jobs:
                outcomes.append(_finish(job.run(first), on_done, report))
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                pending: set[Future[TaskOutcome]] = {
                    pool.submit(_run_job, job, first) for job, first in jobs
                }
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    outcomes += [_finish(f.result(), on_done, report) for f in finished]
    return sorted(outcomes, key=lambda o: o.index)


def _run_job(job: Job, first_attempt: int) -> TaskOutcome:
    return job.run(first_attempt)


def _finish(
    outcome: TaskOutcome,
    on_done: Callable[[TaskOutcome], None],
    report: Callable[[TaskOutcome], None],
) -> TaskOutcome:
    on_done(outcome)
    report(outcome)
    return outcome


class _reporter:
    """A rich bar on a terminal, plain lines without one, nothing when progress is off."""

    def __init__(self, total: int, enabled: bool, label: str, stream: TextIO | None = None):
        self.total, self.enabled, self.label = total, enabled, label
        self.stream = stream or sys.stderr
        self.terminal = enabled and Console(file=self.stream).is_terminal
        self.done = self.empty = self.attempts = 0
        self.start = self.last = time.monotonic()
        self.bar: Progress | None = None

    def __enter__(self) -> Callable[[TaskOutcome], None]:
        if self.terminal:
            columns = (TextColumn(self.label), BarColumn(), MofNCompleteColumn())
            self.bar = Progress(*columns, TimeElapsedColumn(), console=Console(file=self.stream))
            self.bar.start()
            self.bar_task = self.bar.add_task(self.label, total=self.total)
        elif self.enabled:
            self._line(f"{self.label}: {self.total} slot(s)")
        return self.advance

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
        elif self.enabled and self.done:
            self._status()

    def advance(self, outcome: TaskOutcome) -> None:
        self.done += 1
        self.empty += outcome.task_id is None
        self.attempts += outcome.attempts
        if self.bar is not None:
            self.bar.advance(self.bar_task)
            return
        now, step = time.monotonic(), max(1, self.total // 20)
        if self.enabled and (now - self.last >= LINE_EVERY_S or self.done % step == 0):
            if self.done < self.total:
                self._status()

    def _status(self) -> None:
        self.last = time.monotonic()
        elapsed = self.last - self.start
        left = elapsed / self.done * (self.total - self.done)
        self._line(
            f"{self.label}: {self.done}/{self.total} slot(s), {self.attempts} attempt(s), "
            f"{self.empty} empty, {elapsed:.0f} s elapsed, ~{left:.0f} s left"
        )

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)
