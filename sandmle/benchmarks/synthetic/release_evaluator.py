"""The published SandMLE release's ``evaluator.py``: running it, and a grader that wraps it.

A release task ships ``prepared/public/evaluator.py``; ``python evaluator.py
--submission_path X``, run beside ``answer.csv``, prints one JSON object. The keys, as the
release's own scoring tool (SandMLE ``SynScoreTool``) reads them: ``score``,
``is_lower_better``, ``gold_threshold``, ``silver_threshold``, ``bronze_threshold`` and
``median_threshold``. A non-zero exit, or a null score, means the submission is invalid.

A task whose metric we cannot match is graded by ``sandmle-release-evaluator``, which runs
the evaluator (trusted release code, kept in ``grader.options.source``) on the host in a
subprocess with a timeout. As in the release, its working directory holds the task's public
files (so an evaluator may read ``test.csv``) beside ``answer.csv``: a fresh temp copy per
run, never the competition's own folder, which agents' sandboxes mount.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from sandmle.errors import CompetitionError, InvalidSubmission, SandmleError, validation_message
from sandmle.harness.competition import Competition, CompetitionConfig, Thresholds
from sandmle.harness.grading.bounded import graded_competition
from sandmle.harness.grading.metrics import metric
from sandmle.harness.grading.registry import grader

EVALUATOR_FILE = "evaluator.py"
ANSWER_FILE = "answer.csv"
SUBMISSION_FILE = "submission.csv"
GRADER = "sandmle-release-evaluator"
METRIC = "sandmle_release_evaluator"
DEFAULT_TIMEOUT_S = 120
THRESHOLD_KEYS = {
    "gold": "gold_threshold",
    "silver": "silver_threshold",
    "bronze": "bronze_threshold",
    "median": "median_threshold",
}


class EvaluatorError(SandmleError):
    """The evaluator itself misbehaved: it timed out or printed no JSON."""


class EvaluatorOutput(BaseModel):
    """What one evaluator run printed (other keys are kept but unused)."""

    model_config = ConfigDict(extra="allow")

    score: float | None = None
    """The submission's score; None when the evaluator found it invalid."""
    is_lower_better: bool | None = None
    """Direction of the metric."""
    gold_threshold: float | None = None
    """Gold milestone."""
    silver_threshold: float | None = None
    """Silver milestone."""
    bronze_threshold: float | None = None
    """Bronze milestone."""
    median_threshold: float | None = None
    """Median milestone."""
    invalid_reason: str | None = None
    """Set by us when the run exited non-zero or gave no score."""

    def thresholds(self, source: str) -> Thresholds:
        values = {name: getattr(self, key) for name, key in THRESHOLD_KEYS.items()}
        missing = [THRESHOLD_KEYS[n] for n, v in values.items() if v is None or math.isnan(v)]
        if missing:
            raise SandmleError(f"{source}: evaluator output lacks {', '.join(missing)}")
        return Thresholds(**values)


def run_evaluator(
    workdir: Path, submission: Path, timeout_s: int = DEFAULT_TIMEOUT_S
) -> EvaluatorOutput:
    """Run ``workdir/evaluator.py`` on ``submission`` with ``workdir`` as its cwd."""
    argv = [sys.executable, EVALUATOR_FILE, "--submission_path", str(submission.resolve())]
    try:
        proc = subprocess.run(
            argv, cwd=workdir, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired:
        raise EvaluatorError(f"{EVALUATOR_FILE} ran past {timeout_s}s") from None
    if proc.returncode != 0:
        return EvaluatorOutput(invalid_reason=_last_line(proc.stderr or proc.stdout))
    output = _parse(proc.stdout)
    if output.score is None or not math.isfinite(output.score):
        reason = str(output.model_extra.get("error") or "") if output.model_extra else ""
        output.invalid_reason = reason or "the evaluator gave no score"
    return output


def _parse(stdout: str) -> EvaluatorOutput:
    """The whole stdout as JSON, else its last line that is a JSON object."""
    candidates = [stdout.strip()] + [ln.strip() for ln in reversed(stdout.splitlines())]
    for text in candidates:
        if text.startswith("{"):
            try:
                return EvaluatorOutput.model_validate(json.loads(text))
            except (ValueError, ValidationError):
                continue
    raise EvaluatorError(f"{EVALUATOR_FILE} printed no JSON object: {_last_line(stdout)!r}")


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1].strip()[:300] if lines else "no output"


class ReleaseOptions(BaseModel):
    """Options of the ``sandmle-release-evaluator`` grader."""

    model_config = ConfigDict(extra="forbid")

    source: str
    """The evaluator's source code (a copy also lies in prepared/private/evaluator.py)."""
    timeout_s: int = DEFAULT_TIMEOUT_S
    """Seconds one evaluator run may take."""


@grader(GRADER, runs_pack_code=True)
def release_evaluator_grader(
    submission: pd.DataFrame, answers: pd.DataFrame, config: CompetitionConfig
) -> float:
    """Run the evaluator in a temp copy of the public folder holding answer.csv too.

    The public folder is known when the grading core names the competition
    (``bounded.grading``: bounded grading and the import check do); otherwise the
    evaluator runs beside answer.csv alone, as an evaluator that reads no public file needs.
    """
    try:
        options = ReleaseOptions.model_validate(config.grader.options)
    except ValidationError as exc:
        raise CompetitionError(f"grader.options.{validation_message(exc)}") from None
    competition = graded_competition()
    if competition is not None and competition.config.id != config.id:
        competition = None  # named for another grading: not this task's folder
    with tempfile.TemporaryDirectory(prefix="sandmle-release-") as tmp:
        work = evaluator_workdir(Path(tmp), competition, options.source, answers)
        path = Path(tmp) / "submission" / SUBMISSION_FILE
        path.parent.mkdir()
        submission.to_csv(path, index=False)
        output = run_evaluator(work, path, options.timeout_s)
    if output.invalid_reason is not None:
        raise InvalidSubmission(f"evaluator.py: {output.invalid_reason}")
    return float(output.score)  # type: ignore[arg-type]  # set when invalid_reason is None


def evaluator_workdir(
    tmp: Path, competition: Competition | None, source: str, answers: pd.DataFrame
) -> Path:
    """``tmp/public``: a copy of the public files, the evaluator and the answers, as released."""
    work = tmp / "public"
    if competition is not None and competition.public_dir.is_dir():
        shutil.copytree(competition.public_dir, work)
    else:
        work.mkdir()
    (work / EVALUATOR_FILE).write_text(source, encoding="utf-8")
    if competition is not None and competition.answers_path.is_file():
        shutil.copyfile(competition.answers_path, work / ANSWER_FILE)  # the release's bytes
    else:
        answers.to_csv(work / ANSWER_FILE, index=False)
    return work


@metric(METRIC, lower_is_better=False)
def release_evaluator_metric(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Names the metric of a wrapped evaluator; its direction is set in competition.yaml."""
    raise CompetitionError(f"metric {METRIC} is computed by the {GRADER} grader, not directly")
