"""Packs of generated tasks: ``pack.yaml`` plus one competition folder per task.

Tasks are generated in parallel processes; each is seeded from (secret, pack seed, index,
attempt) only, so the bytes do not depend on the number of workers, their order or the
output folder. The secret is stored in ``<pack>/generation/secret.txt`` (private side).
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sandmle.benchmarks.synthetic.backends import check_backend_covers
from sandmle.benchmarks.synthetic.blueprint import GENERATOR_VERSION, StructuralDNA
from sandmle.benchmarks.synthetic.pipeline import (
    MAX_ATTEMPTS,
    Rejection,
    TaskOutcome,
    generate_task,
)
from sandmle.benchmarks.synthetic.sanity import Failure
from sandmle.benchmarks.synthetic.secret import check_secret, new_secret, salt_words, write_secret
from sandmle.benchmarks.synthetic.seeds import select_seeds
from sandmle.benchmarks.synthetic.task_files import GENERATION_DIR, write_json
from sandmle.benchmarks.synthetic.transfer import transfer_failures
from sandmle.errors import SandmleError
from sandmle.harness.pack import PackManifest, PackTask, write_manifest

if TYPE_CHECKING:
    from inspect_ai.model import Model

TRANSFER_ROUNDS = 3
"""Times a task the rest of the pack already solves is regenerated before its slot is dropped."""
SEED_DNA_FILE = "seed_dna.json"
"""The DNA a pack was generated from, when it was read from a seed's description."""


class PackSpec(BaseModel):
    """What to generate."""

    model_config = ConfigDict(extra="forbid")

    name: str = "synthetic"
    """Pack name (pack.yaml)."""
    n: int = Field(default=12, ge=1)
    """Number of tasks."""
    seed: int = 0
    """Pack seed."""
    modalities: list[str] | None = None
    """Keep only seeds of these modalities."""
    seed_ids: list[str] | None = None
    """Keep only these seed tasks."""
    backend: str = "procedural"
    """Generator backend."""
    model: str | None = None
    """Inspect model that plays the roles (``llm`` backend only)."""
    version: str = "1"
    """Pack version (pack.yaml)."""
    secret: str | None = Field(default=None, repr=False)
    """Salt of the generation seed (see ``secret``); a fresh random one when omitted."""


@dataclass(frozen=True)
class SlotJob:
    """One pack slot to generate (picklable: it crosses into a worker process)."""

    dna: StructuralDNA
    index: int
    seed: int
    out: Path
    backend: str
    options: dict[str, Any] | None
    salt: list[int]

    def run(self, first_attempt: int = 0) -> TaskOutcome:
        return generate_task(
            self.dna,
            self.index,
            self.seed,
            self.out,
            backend_name=self.backend,
            max_attempts=MAX_ATTEMPTS,
            backend_options=self.options,
            salt=self.salt,
            first_attempt=first_attempt,
        )


def generate_pack(
    spec: PackSpec,
    out: Path,
    workers: int | None = None,
    progress: bool = True,
    dna: StructuralDNA | None = None,
    model: str | Model | None = None,
) -> list[TaskOutcome]:
    """Write the pack to ``out`` (which must be empty or absent); outcomes in index order.

    Slots draw from the seed table (``spec``'s modalities and seed ids), or all from ``dna``
    (a seed read from its own description, recorded in ``generation/seed_dna.json``).
    ``model`` (an Inspect model or its name) plays the llm backend's roles instead of
    ``spec.model``.
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise SandmleError(f"{out}: output folder is not empty")
    out.mkdir(parents=True, exist_ok=True)
    seeds = [dna] if dna is not None else select_seeds(spec.modalities, spec.seed_ids)
    check_backend_covers(spec.backend, seeds[: spec.n])
    secret = spec.secret if spec.secret is not None else new_secret()
    check_secret(secret)
    write_secret(out, secret)
    if dna is not None:
        write_json(dna, out / GENERATION_DIR / SEED_DNA_FILE)
    model = model if model is not None else spec.model
    options = {"model": model} if model not in (None, "") else None
    salt = salt_words(secret)
    jobs = [
        SlotJob(seeds[i % len(seeds)], i, spec.seed, out, spec.backend, options, salt)
        for i in range(spec.n)
    ]
    outcomes = _run(jobs, workers or min(os.cpu_count() or 1, 8), progress)
    outcomes = _transfer_gate(out, jobs, outcomes)
    write_manifest(_manifest(spec, outcomes), out)
    return outcomes


def _transfer_gate(
    out: Path, jobs: list[SlotJob], outcomes: list[TaskOutcome]
) -> list[TaskOutcome]:
    """Regenerate the tasks the rest of the pack already solves; drop them after a few rounds."""
    for round_ in range(TRANSFER_ROUNDS + 1):
        failures = transfer_failures(out, [o.task_id for o in outcomes if o.task_id])
        if not failures:
            break
        for outcome in [o for o in outcomes if o.task_id in failures]:
            reason = failures[str(outcome.task_id)]
            shutil.rmtree(out / str(outcome.task_id))
            rejected = Rejection(
                attempt=-1, entropy=[], failures=[Failure(rule="transfer", reason=reason)]
            )
            if round_ == TRANSFER_ROUNDS:  # still solved by the others: the slot stays empty
                outcome.task_id, outcome.baselines = None, {}
                outcome.rejections.append(rejected)
                continue
            again = jobs[outcome.index].run(first_attempt=MAX_ATTEMPTS * (round_ + 1))
            again.rejections = [*outcome.rejections, rejected, *again.rejections]
            outcomes[outcome.index] = again
    return outcomes


def _run(jobs: list[SlotJob], workers: int, progress: bool) -> list[TaskOutcome]:
    columns = (TextColumn("generating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    outcomes: list[TaskOutcome] = []
    with Progress(*columns, disable=not progress) as bar:
        task = bar.add_task("tasks", total=len(jobs))
        if workers <= 1:
            for job in jobs:
                outcomes.append(job.run())
                bar.advance(task)
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for outcome in pool.map(_generate, jobs, chunksize=1):
                    outcomes.append(outcome)
                    bar.advance(task)
    return sorted(outcomes, key=lambda o: o.index)


def _generate(job: SlotJob) -> TaskOutcome:
    return job.run()


def _manifest(spec: PackSpec, outcomes: list[TaskOutcome]) -> PackManifest:
    tasks = [
        PackTask(id=o.task_id, modality=o.modality, seed_task=o.seed_task, baselines=o.baselines)
        for o in outcomes
        if o.task_id is not None
    ]
    return PackManifest(
        name=spec.name,
        version=spec.version,
        seed=spec.seed,
        generator_version=GENERATOR_VERSION,
        tasks=tasks,
    )


def regenerate_into(spec: PackSpec, final: Path, workers: int | None = None) -> None:
    """Generate next to ``final`` and move into place, so a half-written pack is never seen."""
    staging = final.with_name(final.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    outcomes = generate_pack(spec, staging, workers=workers, progress=False)
    failed = [o.index for o in outcomes if o.task_id is None]
    if failed:
        raise SandmleError(f"pack {spec.name}: slots {failed} were rejected on every attempt")
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
