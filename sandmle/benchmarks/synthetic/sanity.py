"""The sanity gate: every rule a task must pass before it enters a pack.

Each rule is a function ``(competition) -> list[Failure]`` registered in ``RULES``; a rule
that crashes on a broken task is itself reported as that rule's failure.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel

from sandmle.benchmarks.synthetic.baselines import BASELINES
from sandmle.benchmarks.synthetic.determinism import regenerated_differences
from sandmle.benchmarks.synthetic.leaks import find_leaks
from sandmle.benchmarks.synthetic.mlops import MIN_BAND_SIGMA
from sandmle.errors import SandmleError
from sandmle.harness.competition import (
    CONFIG_FILE,
    Competition,
    load_competition,
    metric_direction,
)
from sandmle.harness.grading.report import CompetitionReport, grade_csv
from sandmle.harness.pack import PACK_FILE, read_manifest, task_folder

Severity = Literal["error", "warning"]


class Failure(BaseModel):
    """One broken rule."""

    rule: str
    """Rule name, e.g. 'ids_disjoint'."""
    reason: str
    """What is wrong, in one line."""
    severity: Severity = "error"
    """Errors reject the task; warnings are reported only."""


Rule = Callable[[Competition], list[Failure]]
RULES: dict[str, Rule] = {}


def rule(name: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        RULES[name] = fn
        return fn

    return register


def check_task(root: Path, rules: list[str] | None = None) -> list[Failure]:
    """Run the sanity rules on one task folder."""
    try:
        competition = load_competition(root)
    except SandmleError as exc:
        return [Failure(rule="competition_loads", reason=str(exc))]
    failures: list[Failure] = []
    for name in rules or list(RULES):
        try:
            failures += RULES[name](competition)
        except Exception as exc:  # a broken task can break a check: that is a failure too
            failures.append(
                Failure(rule=name, reason=f"check crashed: {type(exc).__name__}: {exc}")
            )
    return failures


def _grade(competition: Competition, relative: str) -> CompetitionReport:
    path = competition.root / relative
    if not path.is_file():
        raise FileNotFoundError(f"{relative} is missing")
    return grade_csv(path, competition)


@rule("thresholds_monotonic")
def check_thresholds(competition: Competition) -> list[Failure]:
    t = competition.config.thresholds
    if t is None:
        return [Failure(rule="thresholds_monotonic", reason="no explicit thresholds")]
    sign = -1 if metric_direction(competition.config) else 1
    values = [sign * v for v in (t.gold, t.silver, t.bronze, t.median)]
    if all(a > b for a, b in zip(values, values[1:], strict=False)):
        return []
    return [
        Failure(
            rule="thresholds_monotonic",
            reason=f"gold={t.gold}, silver={t.silver}, "
            f"bronze={t.bronze}, median={t.median} are not strictly ordered",
        )
    ]


@rule("sample_below_median")
def check_sample(competition: Competition) -> list[Failure]:
    """The unmodified sample submission must score strictly below the median."""
    report = _grade(competition, competition.config.sample_submission)
    if not report.valid_submission:
        return [
            Failure(
                rule="sample_below_median",
                reason=f"sample submission invalid: {report.invalid_reason}",
            )
        ]
    if report.above_median or report.any_medal or report.score == report.median_threshold:
        return [
            Failure(
                rule="sample_below_median",
                reason=f"sample submission scores {report.score}, not below median "
                f"{report.median_threshold}",
            )
        ]
    return []


@rule("grading_runs")
def check_grading(competition: Competition) -> list[Failure]:
    failures = []
    for name in BASELINES:
        report = _grade(competition, f"generation/submissions/{name}.csv")
        if not report.valid_submission:
            failures.append(
                Failure(
                    rule="grading_runs",
                    reason=f"{name} submission invalid: {report.invalid_reason}",
                )
            )
    return failures


@rule("ladder_medals")
def check_ladder(competition: Competition) -> list[Failure]:
    """Best constant below median; generic learner between median and gold; structure gold."""
    reports = {
        name: _grade(competition, f"generation/submissions/{name}.csv")
        for name in ("constant", "generic", "structure")
    }
    problems = []
    constant, generic, structure = reports["constant"], reports["generic"], reports["structure"]
    if constant.above_median or constant.score == constant.median_threshold:
        problems.append(f"best constant scores {constant.score}, not below median")
    if not generic.above_median:
        problems.append(f"generic learner scores {generic.score}, not above median")
    if generic.gold_medal:
        problems.append(f"generic learner scores {generic.score}, gold")
    if not structure.gold_medal:
        problems.append(
            f"structure-aware learner scores {structure.score}, short of gold "
            f"{structure.gold_threshold}"
        )
    return [Failure(rule="ladder_medals", reason=p) for p in problems]


@rule("noise_bands")
def check_bands(competition: Competition) -> list[Failure]:
    """Adjacent milestones are at least MIN_BAND_SIGMA bootstrap sds apart."""
    path = competition.root / "generation/ladder.json"
    sigma = json.loads(path.read_text(encoding="utf-8"))["sigma"]
    t = competition.config.thresholds
    if t is None:
        return [Failure(rule="noise_bands", reason="no explicit thresholds")]
    values = [t.median, t.bronze, t.silver, t.gold]
    widths = [abs(b - a) / sigma for a, b in zip(values, values[1:], strict=False)]
    if min(widths) >= MIN_BAND_SIGMA - 1e-3:  # thresholds are rounded to 5 decimals
        return []
    shown = ", ".join(f"{w:.2f}" for w in widths)
    return [
        Failure(
            rule="noise_bands",
            reason=f"bands are {shown} sigma wide (sigma={sigma:.4g}), need {MIN_BAND_SIGMA}",
        )
    ]


@rule("oracle_not_answers")
def check_oracle(competition: Competition) -> list[Failure]:
    """A reference oracle equal to the answers file is the answers, not a rule."""
    answers = pd.read_csv(competition.answers_path)
    oracle = pd.read_csv(competition.root / "generation/submissions/oracle.csv")
    id_column = competition.config.id_columns[0]
    targets = competition.config.target_columns
    merged = answers.merge(oracle, on=id_column, suffixes=("", "_oracle"))
    same = [
        np.isclose(
            pd.to_numeric(merged[c], errors="coerce"),
            pd.to_numeric(merged[f"{c}_oracle"], errors="coerce"),
        ).mean()
        if pd.api.types.is_numeric_dtype(merged[c])
        else (merged[c].astype(str) == merged[f"{c}_oracle"].astype(str)).mean()
        for c in targets
    ]
    if len(merged) and min(same) >= 0.99:
        return [
            Failure(rule="oracle_not_answers", reason="the oracle's submission equals the answers")
        ]
    return []


@rule("ids_disjoint")
def check_ids(competition: Competition) -> list[Failure]:
    id_column = competition.config.id_columns[0]
    train = pd.read_csv(competition.public_dir / "train.csv")[id_column]
    test = pd.read_csv(competition.public_dir / "test.csv")[id_column]
    answers = pd.read_csv(competition.answers_path)[id_column]
    failures = []
    shared = sorted(set(train) & set(test), key=str)
    if shared:
        failures.append(
            Failure(
                rule="ids_disjoint",
                reason=f"{len(shared)} id(s) in both train and test, e.g. {shared[0]!r}",
            )
        )
    if train.duplicated().any() or test.duplicated().any():
        failures.append(
            Failure(rule="ids_disjoint", reason="duplicate ids in train.csv or test.csv")
        )
    if set(test) != set(answers):
        failures.append(
            Failure(rule="ids_disjoint", reason="test.csv ids differ from the answers' ids")
        )
    return failures


@rule("deterministic")
def check_determinism(competition: Competition) -> list[Failure]:
    differences = regenerated_differences(competition.root)
    if not differences:
        return []
    return [
        Failure(
            rule="deterministic",
            reason=f"regenerating gives different bytes for {', '.join(differences[:3])}",
        )
    ]


@rule("no_answer_leak")
def check_leak(competition: Competition) -> list[Failure]:
    return [Failure(rule="no_answer_leak", reason=reason) for reason in find_leaks(competition)]


@rule("description_matches_files")
def check_description(competition: Competition) -> list[Failure]:
    return [
        Failure(rule="description_matches_files", reason=r)
        for r in description_mismatches(competition.public_dir)
    ]


_ENTRY = re.compile(r"^- `([^`]+)`(.*)$")


def description_mismatches(public: Path) -> list[str]:
    """Files and columns named in the Data section versus those that exist, both ways."""
    text = (public / "description.md").read_text(encoding="utf-8")
    section = text.split("## Data", 1)[1].split("\n## ", 1)[0] if "## Data" in text else ""
    problems, named = [], set()
    for line in section.splitlines():
        match = _ENTRY.match(line.strip())
        if not match:
            continue
        name, rest = match.group(1).rstrip("/"), match.group(2)
        named.add(name)
        if not (public / name).exists():
            problems.append(f"description names {name!r}, which does not exist")
        elif "Columns:" in rest and name.endswith(".csv"):
            problems += _column_mismatches(
                public / name, re.findall(r"`([^`]+)`", rest.split("Columns:", 1)[1])
            )
    for entry in sorted(p.name for p in public.iterdir() if p.name != "description.md"):
        if entry not in named:
            problems.append(f"{entry!r} exists but the description does not name it")
    return problems


def _column_mismatches(path: Path, listed: list[str]) -> list[str]:
    header = list(pd.read_csv(path, nrows=0).columns)
    missing = [c for c in listed if c not in header]
    unlisted = [c for c in header if c not in listed]
    return [f"description names column {c!r}, which {path.name} lacks" for c in missing] + [
        f"column {c!r} of {path.name} is not described" for c in unlisted
    ]


def check_directory(root: Path, workers: int | None = None) -> dict[str, list[Failure]]:
    """Failures per task for a pack folder (or a single task folder), tasks checked in
    ``workers`` processes (default: one per core, at most 8).

    A pack's own failures (a ``pack.yaml`` that does not load, a task id that is a path, a
    task folder that is a symlink) are reported under ``pack.yaml``; its tasks are those the
    manifest lists and those found beside it.
    """
    root = Path(root)
    if (root / CONFIG_FILE).is_file():
        return {root.name: check_task(root)}
    results, tasks = _pack_tasks(root)
    if not tasks and not results:
        raise SandmleError(f"{root}: no task folders (*/{CONFIG_FILE}) found")
    workers = min(workers or os.cpu_count() or 1, 8, max(len(tasks), 1))
    if workers <= 1:
        return results | {task.name: check_task(task) for task in tasks}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        checked = dict(zip([t.name for t in tasks], pool.map(check_task, tasks), strict=True))
    return results | checked


def _pack_tasks(root: Path) -> tuple[dict[str, list[Failure]], list[Path]]:
    """The pack's own failures, and the task folders to check (links out of the pack refused)."""
    failures: list[Failure] = []
    found = {p.name for p in root.iterdir() if (p / CONFIG_FILE).is_file()}
    try:
        manifest = read_manifest(root)
    except SandmleError as exc:
        manifest = None
        failures.append(Failure(rule="pack_loads", reason=str(exc)))
    listed = [t.id for t in manifest.tasks] if manifest is not None else []
    tasks = []
    for task_id in sorted(set(listed) | found):
        try:
            tasks.append(task_folder(root, task_id))
        except SandmleError as exc:
            failures.append(Failure(rule="pack_loads", reason=str(exc)))
    return ({PACK_FILE: failures} if failures else {}), tasks
