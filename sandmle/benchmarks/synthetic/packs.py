"""Packs of generated tasks: ``pack.yaml`` plus one competition folder per task.

Tasks are generated in parallel processes; each is seeded from (secret, pack seed, index,
attempt) only, so the bytes do not depend on the number of workers, their order, the output
folder or whether the run was interrupted and resumed (:mod:`.slots`). The secret is stored
in ``<pack>/generation/secret.txt`` (private side).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from sandmle.benchmarks.synthetic.backends import check_backend_covers
from sandmle.benchmarks.synthetic.blueprint import GENERATOR_VERSION, StructuralDNA
from sandmle.benchmarks.synthetic.pipeline import (
    MAX_ATTEMPTS,
    Rejection,
    TaskOutcome,
    generate_task,
)
from sandmle.benchmarks.synthetic.redesign import substitutes
from sandmle.benchmarks.synthetic.sanity import Failure
from sandmle.benchmarks.synthetic.secret import (
    SECRET_FILE,
    check_secret,
    new_secret,
    read_secret,
    salt_words,
    write_secret,
)
from sandmle.benchmarks.synthetic.seeds import select_seeds
from sandmle.benchmarks.synthetic.slots import (
    SLOTS_DIR,
    clear_unfinished,
    load_outcomes,
    run_jobs,
    save_outcome,
)
from sandmle.benchmarks.synthetic.task_files import GENERATION_DIR, write_json
from sandmle.benchmarks.synthetic.transfer import transfer_failures
from sandmle.errors import SandmleError
from sandmle.harness.pack import PACK_FILE, PackManifest, PackTask, write_manifest

if TYPE_CHECKING:
    from inspect_ai.model import Model

TRANSFER_ROUNDS = 3
"""Times a task the rest of the pack already solves is regenerated before its slot is dropped."""
SEED_DNA_FILE = "seed_dna.json"
"""The DNA a pack was generated from, when it was read from a seed's description."""
SPEC_FILE = "spec.json"
"""The spec (less its secret) of a run in progress: a resumed run must ask for the same."""
TRANSFER_STATE_FILE = "transfer.json"
"""The transfer round a run is in (see ``_GateRound``); gone once the pack is written."""
REASON_CHARS = 160


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


SUBSTITUTE_STRIDE = 1000
"""Attempt numbers of the k-th substitute seed start at k times this (disjoint entropies)."""


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
    substitutes: tuple[StructuralDNA, ...] = ()
    """Seeds of the same task type, tried in order only if every attempt on ``dna`` fails."""

    def run(self, first_attempt: int = 0) -> TaskOutcome:
        outcome = self._generate(self.dna, first_attempt)
        for k, other in enumerate(self.substitutes, start=1):
            if outcome.task_id is not None:
                break
            again = self._generate(other, first_attempt + k * SUBSTITUTE_STRIDE)
            for rejection in outcome.rejections:
                rejection.seed_task = rejection.seed_task or outcome.seed_task
            again.rejections = [*outcome.rejections, *again.rejections]
            again.attempts += outcome.attempts
            again.substitute_for = self.dna.seed_task
            outcome = again
        return outcome

    def _generate(self, dna: StructuralDNA, first_attempt: int) -> TaskOutcome:
        return generate_task(
            dna,
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
    max_tokens: int | None = None,
) -> list[TaskOutcome]:
    """Write the pack to ``out`` (empty, absent, or a run of the same spec interrupted before
    its ``pack.yaml``: then the finished slots are kept); outcomes in index order.

    Slots draw from the seed table (``spec``'s modalities and seed ids), or all from ``dna``
    (a seed read from its own description, recorded in ``generation/seed_dna.json``). A slot
    whose seed fails on every attempt goes to another seed of its task type (of ``spec``'s
    modalities), recorded in ``pack.yaml``. ``model`` (an Inspect model or its name) plays
    the llm backend's roles instead of ``spec.model``; ``max_tokens`` caps each of its answers.
    """
    out = Path(out)
    secret = _prepare_folder(spec, out)
    if dna is not None:
        write_json(dna, out / GENERATION_DIR / SEED_DNA_FILE)
    seeds = [dna] if dna is not None else select_seeds(spec.modalities, spec.seed_ids)
    pool = [] if dna is not None else select_seeds(spec.modalities)
    check_backend_covers(spec.backend, seeds[: spec.n])
    model = model if model is not None else spec.model
    options: dict[str, Any] | None = None
    if model not in (None, ""):
        options = {"model": model, **({"max_tokens": max_tokens} if max_tokens else {})}
    salt = salt_words(secret)
    jobs = []
    for i in range(spec.n):
        own = seeds[i % len(seeds)]
        others = tuple(substitutes(own, pool)) if pool else ()
        jobs.append(SlotJob(own, i, spec.seed, out, spec.backend, options, salt, others))
    done = _recorded(out)
    clear_unfinished(out, done.values())
    todo = [(job, 0) for job in jobs if job.index not in done]
    workers = workers or min(os.cpu_count() or 1, 8)
    outcomes = run_jobs(todo, workers, progress, lambda o: save_outcome(out, o))
    outcomes = sorted([*done.values(), *outcomes], key=lambda o: o.index)
    outcomes = _transfer_gate(out, jobs, outcomes, workers, progress)
    write_manifest(_manifest(spec, outcomes), out)
    shutil.rmtree(out / SLOTS_DIR, ignore_errors=True)
    return outcomes


def _recorded(out: Path) -> dict[int, TaskOutcome]:
    """The slots a killed run finished whose task is still there (or due to be regenerated
    by the transfer round in progress); a slot whose task folder is gone is redone."""
    state_file = out / GENERATION_DIR / TRANSFER_STATE_FILE
    due: set[str] = set()
    if state_file.is_file():
        due = set(_GateRound.model_validate_json(state_file.read_text(encoding="utf-8")).failures)
    return {
        i: o
        for i, o in load_outcomes(out).items()
        if o.task_id is None or o.task_id in due or (out / o.task_id).is_dir()
    }


def _prepare_folder(spec: PackSpec, out: Path) -> str:
    """Create ``out`` or check it holds an interrupted run of ``spec``; the pack's secret."""
    spec_file = out / GENERATION_DIR / SPEC_FILE
    recorded = spec.model_dump_json(exclude={"secret"}, indent=2) + "\n"
    if out.exists() and any(out.iterdir()):
        if (out / PACK_FILE).exists() or not spec_file.is_file():
            raise SandmleError(f"{out}: output folder is not empty")
        if spec_file.read_text(encoding="utf-8") != recorded:
            raise SandmleError(f"{out}: holds an interrupted run of another pack spec")
        secret = read_secret(out / SECRET_FILE)
        if spec.secret is not None and spec.secret != secret:
            raise SandmleError(f"{out}: holds an interrupted run with another secret")
        return secret
    secret = spec.secret if spec.secret is not None else new_secret()
    check_secret(secret)
    out.mkdir(parents=True, exist_ok=True)
    write_secret(out, secret)
    spec_file.write_text(recorded, encoding="utf-8")
    return secret


class _GateRound(BaseModel):
    """The transfer round in progress (``generation/transfer.json``): a run killed while
    it regenerates resumes the same round, so the bytes match an uninterrupted run."""

    round: int
    failures: dict[str, str]
    """Task id -> reason, as the gate found them at the start of the round."""


def _transfer_gate(
    out: Path, jobs: list[SlotJob], outcomes: list[TaskOutcome], workers: int, progress: bool
) -> list[TaskOutcome]:
    """Regenerate the tasks the rest of the pack already solves; after a few rounds their
    slots go to a seed of their task type the gate does not group with them."""
    state_file = out / GENERATION_DIR / TRANSFER_STATE_FILE
    first_round = 0
    if state_file.is_file():  # resumed inside a round: finish its regenerations first
        state = _GateRound.model_validate_json(state_file.read_text(encoding="utf-8"))
        _regenerate(out, jobs, outcomes, state, workers, progress)
        first_round = state.round + 1
    for round_ in range(first_round, TRANSFER_ROUNDS + 1):
        ids = [o.task_id for o in outcomes if o.task_id]
        failures = transfer_failures(out, ids, progress, workers)
        if not failures:
            break
        state = _GateRound(round=round_, failures=failures)
        partial = state_file.with_suffix(".partial")
        partial.write_text(state.model_dump_json(indent=2) + "\n", encoding="utf-8")
        partial.replace(state_file)  # whole or absent: a resumed run reads the same round
        _regenerate(out, jobs, outcomes, state, workers, progress)
    state_file.unlink(missing_ok=True)
    return outcomes


def _regenerate(
    out: Path,
    jobs: list[SlotJob],
    outcomes: list[TaskOutcome],
    state: _GateRound,
    workers: int,
    progress: bool,
) -> None:
    """Regenerate the slots of ``state``'s failures still in ``outcomes``, recording each
    slot as it finishes (a slot already regenerated by a killed run is not redone)."""
    reruns = []
    for outcome in [o for o in outcomes if o.task_id in state.failures]:
        shutil.rmtree(out / str(outcome.task_id), ignore_errors=True)
        job = jobs[outcome.index]
        if state.round == TRANSFER_ROUNDS:  # still solved by the others: another family
            job = replace(job, dna=_outside_transfer(job), substitutes=())
        reruns.append((job, MAX_ATTEMPTS * (state.round + 1)))

    def record(again: TaskOutcome) -> None:
        before = outcomes[again.index]
        rejected = Rejection(
            attempt=-1,
            entropy=[],
            failures=[Failure(rule="transfer", reason=state.failures[str(before.task_id)])],
            seed_task=before.seed_task,
        )
        again.rejections = [*before.rejections, rejected, *again.rejections]
        again.attempts += before.attempts
        if again.seed_task != jobs[again.index].dna.seed_task:
            again.substitute_for = jobs[again.index].dna.seed_task
        outcomes[again.index] = again
        save_outcome(out, again)

    run_jobs(reruns, workers, progress, record, "regenerating")


def _outside_transfer(job: SlotJob) -> StructuralDNA:
    """A substitute the transfer gate does not compare with the slot's modality."""
    others = [s for s in job.substitutes if s.modality != job.dna.modality]
    return (others or list(job.substitutes) or [job.dna])[0]


def _manifest(spec: PackSpec, outcomes: list[TaskOutcome]) -> PackManifest:
    tasks = [
        PackTask(
            id=o.task_id,
            modality=o.modality,
            seed_task=o.seed_task,
            baselines=o.baselines,
            attempts=o.attempts,
            rejections=[_reason(r) for r in o.rejections],
            substitute_for=o.substitute_for,
        )
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


def _reason(rejection: Rejection) -> str:
    """One line per rejected attempt: its first failed rule and why."""
    first = rejection.failures[0] if rejection.failures else None
    text = f"{first.rule}: {first.reason}" if first else "rejected"
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


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
