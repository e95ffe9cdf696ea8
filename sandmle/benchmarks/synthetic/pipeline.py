"""One task, end to end: the four roles, the files, the artifacts and the sanity gate.

A pack slot is tried with successive sub-seeds until an attempt passes the sanity gate, each
retry with a design widened from the last rejection's reasons (:mod:`.redesign`); the folder
layout is :mod:`.task_files`'.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import PublicData
from sandmle.benchmarks.synthetic.backend import GeneratorBackend
from sandmle.benchmarks.synthetic.backends import get_backend
from sandmle.benchmarks.synthetic.baselines import BASELINES, BaselineScores
from sandmle.benchmarks.synthetic.blueprint import Blueprint, Design, StructuralDNA, TaskRequest
from sandmle.benchmarks.synthetic.mlops import Ladder, NoisyMilestones, bootstrap_ladder
from sandmle.benchmarks.synthetic.redesign import next_design
from sandmle.benchmarks.synthetic.sanity import Failure, check_task
from sandmle.benchmarks.synthetic.streams import BOOTSTRAP, role_rng
from sandmle.benchmarks.synthetic.task_files import (
    ANSWERS_FILE,
    GENERATION_DIR,
    SUBMISSION_FLOAT_FORMAT,
    write_csv,
    write_json,
    write_prepared,
)
from sandmle.errors import CompetitionError, SandmleError
from sandmle.harness.competition import (
    PUBLIC_DIR,
    CompetitionConfig,
    GraderSpec,
    Thresholds,
    write_config,
)
from sandmle.harness.grading.metrics import get_metric
from sandmle.harness.grading.reading import read_csv_reference
from sandmle.harness.grading.report import round_score

MAX_ATTEMPTS = 8


class Rejection(BaseModel):
    """An attempt the sanity gate turned down, and why."""

    attempt: int
    entropy: list[int]
    failures: list[Failure]
    design: Design = Field(default_factory=Design)
    """The design the attempt was drawn with."""
    seed_task: str | None = None
    """The seed it was drawn from, where the slot went to a substitute later."""


class TaskOutcome(BaseModel):
    """What generating one pack slot produced."""

    model_config = ConfigDict(extra="forbid")

    index: int
    task_id: str | None = None
    """Id of the accepted task; None when every attempt was rejected."""
    seed_task: str
    modality: str
    baselines: dict[str, float | None] = Field(default_factory=dict)
    rejections: list[Rejection] = Field(default_factory=list)
    attempts: int = 0
    """Attempts made (the accepted one included), over every seed the slot tried."""
    substitute_for: str | None = None
    """The seed of the slot's own family, where its every attempt was rejected."""


def competition_config(
    bp: Blueprint, thresholds: Thresholds, options: dict[str, Any]
) -> CompetitionConfig:
    return CompetitionConfig(
        id=bp.task_id,
        name=bp.domain.title,
        metric=bp.dna.metric,
        is_lower_better=get_metric(bp.dna.metric).lower_is_better,
        id_columns=[bp.domain.id_column],
        target_columns=bp.domain.target_columns,
        thresholds=thresholds,
        grader=GraderSpec(name="standard", options=options),
        modality=bp.dna.modality,
        task_type=bp.dna.task_type,
        tags={
            "seed_task": bp.dna.seed_task,
            "generator": bp.backend,
            "generator_version": bp.generator_version,
        },
    )


def row_groups(task_type: str, ids: pd.Series) -> np.ndarray | None:
    """The unit rows are drawn in for the test-noise bootstrap, where rows are not independent:
    a page (``<image>_<row>_<col>``) or a sentence (``<sentence>_<token>``)."""
    parts = {"image-to-image": 2, "seq2seq": 1}.get(task_type)
    if parts is None:
        return None
    return ids.astype(str).str.rsplit("_", n=parts).str[0].to_numpy()


def score_baselines(
    bp: Blueprint, root: Path, predictions: dict[str, np.ndarray]
) -> tuple[BaselineScores, Ladder]:
    """Grade each baseline with the real grader, on the test set and on bootstrap resamples."""
    config = competition_config(bp, Thresholds(gold=0, silver=0, bronze=0, median=0), {})
    ids = read_csv_reference(root / PUBLIC_DIR / "test.csv")[bp.domain.id_column]
    submissions = {}
    for name in BASELINES:
        path = root / GENERATION_DIR / "submissions" / f"{name}.csv"
        write_csv(tg.submission_frame(bp, ids, predictions[name]), path, SUBMISSION_FLOAT_FORMAT)
        submissions[name] = read_csv_reference(path)
    answers = read_csv_reference(root / ANSWERS_FILE)
    groups = row_groups(bp.dna.task_type, answers[bp.domain.id_column])
    ladder = bootstrap_ladder(config, answers, submissions, role_rng(bp.entropy, BOOTSTRAP), groups)
    scores = {
        k: None if v.score is None else round_score(v.score) for k, v in ladder.scores.items()
    }
    return BaselineScores(**scores, is_lower_better=ladder.is_lower_better), ladder


def build_task(request: TaskRequest, backend: GeneratorBackend, staging: Path) -> Path:
    """Run the four roles and write the task under ``staging/<task id>``."""
    bp = backend.strategist(request)
    root = staging / bp.task_id
    task = backend.developer(bp)
    write_prepared(root, bp, task, backend)
    public = PublicData.from_folder(root / PUBLIC_DIR)
    scores, ladder = score_baselines(bp, root, backend.baselines(bp, task, public))
    generation = root / GENERATION_DIR
    for name, artifact in (("blueprint", bp), ("rule", task.rule), ("ladder", ladder)):
        write_json(artifact, generation / f"{name}.json")
    write_json(scores, generation / "baselines.json")
    milestones = backend.mlops(bp, ladder)
    write_config(competition_config(bp, milestones.thresholds, milestones.grader_options), root)
    write_json(milestones, generation / "milestones.json")
    return root


def generate_task(
    dna: StructuralDNA,
    index: int,
    seed: int,
    out_root: Path,
    backend_name: str = "procedural",
    max_attempts: int = MAX_ATTEMPTS,
    backend_options: dict[str, Any] | None = None,
    salt: list[int] | None = None,
    first_attempt: int = 0,
) -> TaskOutcome:
    """Generate pack slot ``index``; a rejected attempt is retried with the next sub-seed.

    ``salt`` (from the pack's secret, see :mod:`sandmle.benchmarks.synthetic.secret`) prefixes every entropy, so
    the public files and the generator alone cannot regenerate the answers.
    """
    backend = get_backend(backend_name, **(backend_options or {}))
    outcome = TaskOutcome(index=index, seed_task=dna.seed_task, modality=dna.modality)
    staging = out_root / f".staging-{index:03d}"
    design = Design()
    for attempt in range(first_attempt, first_attempt + max_attempts):
        entropy = [*(salt or []), seed, index, attempt]
        shutil.rmtree(staging, ignore_errors=True)
        request = TaskRequest(index=index, dna=dna, entropy=entropy, design=design)
        root, failures = _attempt(request, backend, staging)
        outcome.attempts += 1
        if root is not None and not failures:
            _accept(root, out_root, outcome)
            break
        outcome.rejections.append(
            Rejection(attempt=attempt, entropy=entropy, failures=failures, design=design)
        )
        design = next_design(design, {f.rule for f in failures})
    shutil.rmtree(staging, ignore_errors=True)
    return outcome


def _attempt(
    request: TaskRequest, backend: GeneratorBackend, staging: Path
) -> tuple[Path | None, list[Failure]]:
    try:
        root = build_task(request, backend, staging)
    except NoisyMilestones as exc:
        return None, [Failure(rule="noise_bands", reason=_portable(str(exc), staging))]
    except Exception as exc:  # recorded as a rejection with its reason, never kept
        if isinstance(exc, SandmleError) and not isinstance(exc, CompetitionError):
            raise  # a user or provider error (no model client, no key): loud, no retry
        reason = _portable(f"{type(exc).__name__}: {exc}", staging)
        return None, [Failure(rule="generation_runs", reason=reason)]
    failures = [f for f in check_task(root) if f.severity == "error"]
    return root, [f.model_copy(update={"reason": _portable(f.reason, staging)}) for f in failures]


def _portable(reason: str, staging: Path) -> str:
    """Reasons name files relative to the task, so the bytes do not depend on the output path."""
    return reason.replace(str(staging.resolve()) + "/", "").replace(str(staging) + "/", "")


def _accept(root: Path, out_root: Path, outcome: TaskOutcome) -> None:
    final = out_root / root.name
    shutil.rmtree(final, ignore_errors=True)
    root.rename(final)
    rejections = json.dumps(
        [r.model_dump(mode="json") for r in outcome.rejections], sort_keys=True, indent=2
    )
    (final / GENERATION_DIR / "rejections.json").write_text(rejections + "\n", encoding="utf-8")
    scores = json.loads((final / GENERATION_DIR / "baselines.json").read_text(encoding="utf-8"))
    outcome.task_id = final.name
    outcome.baselines = {name: scores[name] for name in BASELINES}
