"""Lite competitions written in MLE-bench's prepared layout under a tmp dir, graded end to end."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

import sandmle.benchmarks.mle_bench.graders  # noqa: F401  (registers the graders)
from sandmle.benchmarks.mle_bench import thresholds
from sandmle.benchmarks.mle_bench.competitions import competition_source, get_competition
from sandmle.harness.competition import Competition
from sandmle.harness.grading.report import CompetitionReport, grade_csv

MakeCompetition = Callable[[str, str], Competition]
Grade = Callable[[Competition, str], CompetitionReport]


@pytest.fixture(autouse=True)
def _no_mlebench_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thresholds come from the packaged table unless a test points at a checkout, even where
    the real ``mlebench`` package happens to be installed."""
    monkeypatch.delenv("MLEBENCH_DIR", raising=False)
    monkeypatch.setattr(thresholds, "_package_dir", lambda: None)


def write_prepared(data_dir: Path, competition_id: str, answers: str) -> Path:
    """``<data_dir>/<id>/prepared/{public,private}`` with the answers and a sample submission."""
    lite = get_competition(competition_id)
    folder = data_dir / competition_id
    for relative, text in ((lite.answers, answers), (lite.sample_submission, answers)):
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "prepared" / "public").mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def make_competition(tmp_path: Path) -> MakeCompetition:
    def make(competition_id: str, answers: str) -> Competition:
        folder = write_prepared(tmp_path / "data", competition_id, answers)
        config = competition_source(folder)
        assert config is not None
        return Competition(folder.resolve(), config)

    return make


@pytest.fixture
def grade(tmp_path: Path) -> Grade:
    counter = itertools.count()

    def run(competition: Competition, submission: str) -> CompetitionReport:
        path = tmp_path / f"submission_{next(counter)}.csv"
        path.write_text(submission, encoding="utf-8")
        return grade_csv(path, competition)

    return run
