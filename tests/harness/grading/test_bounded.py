"""Grading in a forked child under caps, and the header check that runs before parsing."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandmle.errors import SandmleError
from sandmle.harness.competition import Competition, load_competition
from sandmle.harness.grading.bounded import GradingLimits, grade_csv_bounded
from sandmle.harness.grading.report import grade_csv, is_grader_error

PATHOLOGICAL_CPU_S = 2.0  # the sandbox issue's bound on host CPU for a hostile header


@pytest.fixture
def plant(plant_dir: Path) -> Competition:
    return load_competition(plant_dir)


def _wide_csv(path: Path, columns: int) -> Path:
    header = ",".join(f"c{i}" for i in range(columns))
    path.write_text(header + "\n" + ",".join("1" for _ in range(columns)) + "\n")
    return path


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _comparable(report) -> dict:
    data = report.model_dump()
    data.pop("created_at")
    return data


@pytest.mark.parametrize(
    ("columns", "reason"),
    [(100_000, "header has 100,000 columns"), (200_000, "header line is longer than 1.0 MiB")],
)
def test_a_pathologically_wide_csv_is_invalid_at_once(
    plant: Competition, tmp_path: Path, columns: int, reason: str
) -> None:
    path = _wide_csv(tmp_path / "submission.csv", columns)
    start = _cpu_s()
    report = grade_csv(path, plant)
    spent = _cpu_s() - start
    assert not report.valid_submission and not is_grader_error(report)
    assert report.invalid_reason.startswith(reason) and "\n" not in report.invalid_reason
    assert spent < PATHOLOGICAL_CPU_S  # 31 s before the header check; milliseconds now
    assert _comparable(grade_csv_bounded(path, plant)) == _comparable(report)


def test_a_header_at_the_column_limit_is_still_parsed(plant: Competition, tmp_path: Path) -> None:
    sample = pd.read_csv(plant.sample_submission_path)
    # 2 + 998 = the 1000-column floor: extra columns are ignored, as before
    extras = pd.DataFrame(0, index=sample.index, columns=[f"extra{i}" for i in range(998)])
    frame = pd.concat([sample, extras], axis=1)
    path = tmp_path / "submission.csv"
    frame.to_csv(path, index=False)
    assert grade_csv(path, plant).valid_submission


def _submissions(plant: Competition, tmp_path: Path) -> list[Path]:
    sample = pd.read_csv(plant.sample_submission_path)
    answers = pd.read_csv(plant.answers_path)
    rng = np.random.default_rng(0)
    noisy = sample.assign(needs_water=rng.random(len(sample)))
    files = {
        "sample.csv": sample,
        "perfect.csv": answers,
        "noisy.csv": noisy,
        "missing_row.csv": noisy.iloc[1:],
        "out_of_range.csv": noisy.assign(needs_water=noisy.needs_water + 1),
    }
    paths = []
    for name, frame in files.items():
        frame.to_csv(tmp_path / name, index=False)
        paths.append(tmp_path / name)
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "binary.csv").write_bytes(b"id,x\n\x00\x01")
    return [*paths, tmp_path / "empty.csv", tmp_path / "binary.csv", tmp_path / "absent.csv"]


def test_bounded_grading_gives_the_same_reports(plant: Competition, tmp_path: Path) -> None:
    for path in _submissions(plant, tmp_path):
        assert _comparable(grade_csv_bounded(path, plant)) == _comparable(grade_csv(path, plant))


def test_a_broken_competition_still_raises(plant: Competition, tmp_path: Path) -> None:
    plant.answers_path.unlink()
    with pytest.raises(SandmleError, match="answers file"):
        grade_csv_bounded(plant.sample_submission_path, plant)


SLOW_ROWS = 4_000_000
"""A submission (~50 MB) that no machine parses within the tests' 0.05 s limit (400,000 rows
once finished in time on an idle machine)."""


def _big_submission(plant: Competition, tmp_path: Path, rows: int) -> Path:
    lines = plant.sample_submission_path.read_text().splitlines()
    path = tmp_path / "submission.csv"
    body = "\n".join(lines[1:]) + "\n"
    path.write_text(lines[0] + "\n" + body * (rows // (len(lines) - 1)))
    return path


def test_a_grading_past_its_time_limit_is_a_grader_error(
    plant: Competition, tmp_path: Path
) -> None:
    path = _big_submission(plant, tmp_path, SLOW_ROWS)
    start = time.monotonic()
    report = grade_csv_bounded(path, plant, GradingLimits(timeout_s=0.05))
    assert time.monotonic() - start < 30  # killed, not waited for
    assert is_grader_error(report) and "time limit" in report.invalid_reason
    assert report.submission_exists and not report.valid_submission


def test_a_grading_past_its_memory_limit_is_a_grader_error(
    plant: Competition, tmp_path: Path
) -> None:
    path = _big_submission(plant, tmp_path, 2_000_000)  # 30 MB: parsing needs new mappings
    # 1 MiB is far below what the warm server has mapped already: any allocation fails
    report = grade_csv_bounded(path, plant, GradingLimits(memory_mb=1))
    assert is_grader_error(report), report.invalid_reason
    assert "memory" in report.invalid_reason or "died" in report.invalid_reason


def test_the_agent_is_told_a_grader_failure_apart_from_a_bad_file(
    plant: Competition, tmp_path: Path
) -> None:
    from sandmle.harness.tools import feedback_text

    slow = grade_csv_bounded(
        _big_submission(plant, tmp_path, SLOW_ROWS), plant, GradingLimits(timeout_s=0.05)
    )
    assert feedback_text(slow, False).startswith("The check could not finish: grader error (")
    wide = grade_csv_bounded(_wide_csv(tmp_path / "wide.csv", 100_000), plant)
    assert feedback_text(wide, False) == f"Invalid submission: {wide.invalid_reason}"


def test_a_dead_grading_server_is_started_again(plant: Competition) -> None:
    from sandmle.harness.grading import bounded

    server = bounded._server()
    server._process.kill()
    server._process.wait()
    report = grade_csv_bounded(plant.sample_submission_path, plant)
    assert report.valid_submission
    assert bounded._server() is not server
