"""``synth import --format sandmle-release``: SandMLE release tasks → our competition format.

A release task is ``<task>/prepared/public/{description.md, data, sample_submission.csv,
evaluator.py, answer.csv}``. We move ``answer.csv`` to ``prepared/private/answers.csv`` and
``evaluator.py`` to ``prepared/private/`` (it reads the answers), take the thresholds and
the direction from the evaluator's run on the sample submission, and map the metric to one
of ours when our grader reproduces the evaluator's scores on three probe submissions
(the sample, the answers, the answers with their rows shuffled). Otherwise the task is graded
by wrapping ``evaluator.py``. Either way the written folder is graded once more and must
match the evaluator on every probe, or the import fails.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.release_evaluator import (
    ANSWER_FILE,
    DEFAULT_TIMEOUT_S,
    EVALUATOR_FILE,
    GRADER,
    METRIC,
    EvaluatorOutput,
    run_evaluator,
)
from sandmle.errors import SandmleError
from sandmle.harness.competition import (
    PRIVATE_DIR,
    PUBLIC_DIR,
    Competition,
    CompetitionConfig,
    GraderSpec,
    load_competition,
    write_config,
)
from sandmle.harness.grading.bounded import grading
from sandmle.harness.grading.metrics import get_metric
from sandmle.harness.grading.reading import read_csv_reference
from sandmle.harness.grading.report import grade_frame, round_score

REQUIRED = ("description.md", "sample_submission.csv", EVALUATOR_FILE, ANSWER_FILE)
# sklearn names in an evaluator's source → our metrics that may match (checked on the probes).
METRIC_HINTS = {
    "roc_auc_score": ("roc_auc", "mean_columnwise_roc_auc"),
    "log_loss": ("binary_log_loss", "multiclass_log_loss"),
    "accuracy_score": ("accuracy",),
    "f1_score": ("macro_f1",),
    "cohen_kappa_score": ("quadratic_weighted_kappa",),
    "mean_squared_log_error": ("rmsle", "mean_columnwise_rmsle"),
    "mean_absolute_error": ("mae",),
    "mean_squared_error": ("rmse", "mean_columnwise_rmse"),
    "r2_score": ("r2",),
}
_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
SANITY_FILE = "ok_competitions_sanity.json"
IMPORT_REPORT = "import_report.json"


def import_release(src: Path, out: Path, timeout_s: int = DEFAULT_TIMEOUT_S) -> list[str]:
    """Convert one release task folder, or every one below ``src``; returns the new ids.

    A folder of tasks is imported task by task: a task that fails (bad layout, evaluator
    error, grades differently) or that the release's ``ok_competitions_sanity.json`` does
    not list is skipped, and ``<out>/import_report.json`` lists every task with its status
    and reason. Nothing is written when no task can be imported (a one-line error).
    """
    src, out = Path(src), Path(out)
    if not src.is_dir():
        raise SandmleError(f"{src}: folder does not exist")
    single = (src / PUBLIC_DIR).is_dir()
    tasks = [src] if single else sorted(p for p in src.iterdir() if (p / PUBLIC_DIR).is_dir())
    if not tasks:
        raise SandmleError(f"{src}: no release task folders (*/{PUBLIC_DIR}) found")
    if out.exists() and any(out.iterdir()):
        raise SandmleError(f"{out}: output folder is not empty")
    allowed = None if single else _sanity_ok(src)
    report: list[dict[str, str]] = []
    candidates = []
    for task in tasks:
        reason = _skip_reason(task, allowed)
        if reason:
            report.append({"task": task.name, "status": "skipped", "reason": reason})
        else:
            candidates.append(task)
    if not candidates:
        raise SandmleError(report[0]["reason"] if len(report) == 1 else _summary(report))
    imported = []
    for task in candidates:
        try:
            config = convert_task(task, out / task_id(task), timeout_s)
        except SandmleError as exc:
            shutil.rmtree(out / task_id(task), ignore_errors=True)
            report.append({"task": task.name, "status": "failed", "reason": str(exc)})
            continue
        imported.append(config.id)
        report.append(
            {"task": task.name, "status": "imported", "id": config.id, "metric": config.metric}
        )
    if not imported:
        shutil.rmtree(out, ignore_errors=True)
        raise SandmleError(_summary(report))
    report.sort(key=lambda r: r["task"])
    (out / IMPORT_REPORT).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return imported


def _sanity_ok(src: Path) -> set[str] | None:
    """Task names the release marks as passing its sanity checks, if it says."""
    path = src / SANITY_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SandmleError(f"{path}: not valid JSON ({exc})") from None
    if isinstance(data, dict) and isinstance(data.get("ok"), list):
        data = data["ok"]
    if isinstance(data, dict):
        return {str(k) for k, v in data.items() if v}
    if isinstance(data, list):
        return {str(v) for v in data}
    raise SandmleError(f"{path}: expected a list of task names or a name -> bool mapping")


def _skip_reason(task: Path, allowed: set[str] | None) -> str | None:
    if allowed is not None and task.name not in allowed:
        return f"{task.name}: not listed in {SANITY_FILE}"
    try:
        _check_layout(task)
    except SandmleError as exc:
        return str(exc)
    return None


def _summary(report: list[dict[str, str]]) -> str:
    failed = [r for r in report if r["status"] != "imported"]
    return f"no task imported; {len(failed)} skipped or failed, e.g. {failed[0]['reason']}"


def task_id(task: Path) -> str:
    return _ID_CHARS.sub("-", task.name).strip("-._") or "task"


def _check_layout(task: Path) -> None:
    for name in REQUIRED:
        if not (task / PUBLIC_DIR / name).is_file():
            raise SandmleError(f"{task.name}: missing {PUBLIC_DIR / name}")


def convert_task(task: Path, dest: Path, timeout_s: int = DEFAULT_TIMEOUT_S) -> CompetitionConfig:
    """Write ``dest`` in our format and check that it grades as the evaluator does."""
    public = task / PUBLIC_DIR
    sample = read_csv_reference(public / "sample_submission.csv")
    answers = read_csv_reference(public / ANSWER_FILE)
    id_column, targets = str(sample.columns[0]), [str(c) for c in sample.columns[1:]]
    absent = [c for c in [id_column, *targets] if c not in answers.columns]
    if not targets or absent:
        raise SandmleError(
            f"{task.name}: answer.csv lacks sample_submission column(s) {absent or targets}"
        )
    probes = _probes(sample, answers[[id_column, *targets]])
    expected = _evaluate(public, probes, timeout_s, task.name)
    if expected["sample"].is_lower_better is None:
        raise SandmleError(f"{task.name}: evaluator output lacks is_lower_better")
    _write_files(public, dest)
    source = (public / EVALUATOR_FILE).read_text(encoding="utf-8")
    base = CompetitionConfig(
        id=dest.name,
        name=_title(public / "description.md", dest.name),
        metric=METRIC,
        is_lower_better=expected["sample"].is_lower_better,
        id_columns=[id_column],
        target_columns=targets,
        thresholds=expected["sample"].thresholds(task.name),
        grader=GraderSpec(name=GRADER, options={"source": source, "timeout_s": timeout_s}),
        modality=_modality(public),
        tags={"source": "sandmle-release", "release_task": task.name},
    )
    config = _matching_metric(dest, base, source, probes, expected) or base
    write_config(config, dest)
    # the user chose to import this release, whose evaluator has just run: its code is trusted
    mismatch = _mismatch(load_competition(dest, trust_code=True), probes, expected)
    if mismatch:
        shutil.rmtree(dest)
        raise SandmleError(f"{task.name}: converted task grades differently: {mismatch}")
    return config


def _probes(sample: pd.DataFrame, answers: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Three submissions whose scores tell metrics apart: uninformed, perfect, half-informed."""
    shuffled = answers.copy()
    order = np.random.default_rng(0).permutation(len(answers))
    half = order[: len(order) // 2]
    targets = list(answers.columns[1:])
    shuffled.loc[half, targets] = answers.loc[np.roll(half, 1), targets].to_numpy()
    return {"sample": sample, "answers": answers, "shuffled": shuffled}


def _evaluate(
    public: Path, probes: dict[str, pd.DataFrame], timeout_s: int, name: str
) -> dict[str, EvaluatorOutput]:
    """Run the evaluator on each probe in a temp copy of the release folder (left untouched)."""
    with tempfile.TemporaryDirectory(prefix="sandmle-release-") as tmp:
        work = Path(shutil.copytree(public, Path(tmp) / "public"))
        outputs = {}
        for probe, frame in probes.items():
            frame.to_csv(Path(tmp) / f"{probe}.csv", index=False)
            outputs[probe] = run_evaluator(work, Path(tmp) / f"{probe}.csv", timeout_s)
    if outputs["sample"].invalid_reason is not None:
        raise SandmleError(
            f"{name}: evaluator rejects the sample submission: {outputs['sample'].invalid_reason}"
        )
    return outputs


def _write_files(public: Path, dest: Path) -> None:
    shutil.copytree(
        public, dest / PUBLIC_DIR, ignore=shutil.ignore_patterns(EVALUATOR_FILE, ANSWER_FILE)
    )
    (dest / PRIVATE_DIR).mkdir(parents=True, exist_ok=True)
    shutil.copy2(public / ANSWER_FILE, dest / PRIVATE_DIR / "answers.csv")
    shutil.copy2(public / EVALUATOR_FILE, dest / PRIVATE_DIR / EVALUATOR_FILE)


def _matching_metric(
    dest: Path,
    base: CompetitionConfig,
    source: str,
    probes: dict[str, pd.DataFrame],
    expected: dict[str, EvaluatorOutput],
) -> CompetitionConfig | None:
    """The first hinted metric of ours that reproduces every probe's score, if any."""
    names = [m for hint, ms in METRIC_HINTS.items() if hint in source for m in ms]
    for name in names:
        if get_metric(name).lower_is_better != base.is_lower_better:
            continue
        config = base.model_copy(
            update={"metric": name, "grader": GraderSpec(options={"extra_columns": "ignore"})}
        )
        if not _mismatch(Competition(dest, config), probes, expected):
            return config
    return None


def _mismatch(
    competition: Competition, probes: dict[str, pd.DataFrame], expected: dict[str, EvaluatorOutput]
) -> str | None:
    for probe, frame in probes.items():
        with grading(competition):  # a wrapped evaluator runs in a copy of the public folder
            ours = grade_frame(frame, competition).score
        raw = expected[probe].score
        theirs = None if raw is None else round_score(raw)
        if ours is None or theirs is None:
            if (ours is None) != (theirs is None):
                return f"{probe} submission scores {ours}, evaluator.py says {theirs}"
        elif abs(ours - theirs) > 1e-9:
            return f"{probe} submission scores {ours}, evaluator.py says {theirs}"
    return None


def _title(description: Path, default: str) -> str:
    for line in description.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return default


def _modality(public: Path) -> Literal["image", "audio", "tabular", "other"]:
    suffixes = {p.suffix.lower() for p in public.rglob("*") if p.is_file()}
    if suffixes & {".png", ".jpg", ".jpeg", ".bmp", ".tif"}:
        return "image"
    if suffixes & {".wav", ".mp3", ".flac"}:
        return "audio"
    return "tabular" if ".csv" in suffixes else "other"
