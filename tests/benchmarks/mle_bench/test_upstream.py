"""The full MLE-bench through ``mlebench``, and what happens without it or without leaderboards."""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from typer.testing import CliRunner

from sandmle.benchmarks.mle_bench import thresholds, upstream
from sandmle.benchmarks.mle_bench.competitions import split_ids
from sandmle.benchmarks.mle_bench.replicas.build import build_replicas
from sandmle.benchmarks.mle_bench.task import mle_bench, mle_bench_lite
from sandmle.cli import app
from sandmle.errors import SandmleError
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.solvers import copy_sample_submission

FIND_PACKAGE = thresholds._package_dir  # the conftest stubs it out for the other tests
SIIM = "siim-isic-melanoma-classification"
HAS_MLEBENCH = upstream.mlebench_available()
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


@pytest.fixture(scope="module")
def dev_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dev")
    build_replicas(out, split_ids("dev"))
    return out


def test_dev_split_without_mlebench_says_how_to_install_it(
    dev_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sandmle.benchmarks.mle_bench.task.mlebench_available", lambda: False)
    with pytest.raises(SandmleError, match="install MLE-bench's `mlebench` package"):
        mle_bench(split="dev", data_dir=str(dev_dir))


def test_dev_replicas_have_their_answers_and_samples(dev_dir: Path) -> None:
    assert sorted(p.name for p in dev_dir.iterdir()) == sorted(split_ids("dev"))
    for folder in dev_dir.iterdir():
        public, private = folder / "prepared" / "public", folder / "prepared" / "private"
        assert (public / "description.md").is_file() and any(private.iterdir())


@pytest.fixture
def siim_dir(tmp_path: Path) -> Path:
    build_replicas(tmp_path / "data", [SIIM])
    return tmp_path / "data"


def test_unknown_thresholds_are_loud(siim_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        task = mle_bench_lite(data_dir=str(siim_dir), competitions=SIIM)
    assert SIIM in task.metadata["thresholds_unknown"]
    assert "MEDAL THRESHOLDS UNKNOWN" in caplog.text


def test_sandmle_grade_prints_no_bare_nan(siim_dir: Path) -> None:
    folder = siim_dir / SIIM
    sample = folder / "prepared" / "public" / "sample_submission.csv"
    result = CliRunner().invoke(app, ["grade", str(sample), "-c", str(folder)])
    assert result.exit_code == 0, result.output
    assert "NaN" not in result.output
    report = json.loads(result.output)
    assert report["gold_threshold"] is None and report["thresholds"].startswith("unknown")


def test_siim_medals_from_mlebench_leaderboard_when_present(
    siim_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = tmp_path / "checkout" / "mlebench" / "competitions" / SIIM / "leaderboard.csv"
    board.parent.mkdir(parents=True)
    scores = [0.95 - 0.002 * k for k in range(200)]  # AUC: higher is better, best first
    pd.DataFrame({"teamName": [f"t{k}" for k in range(200)], "score": scores}).to_csv(
        board, index=False
    )
    monkeypatch.setenv("MLEBENCH_DIR", str(board.parents[3]))
    competition = load_competition(siim_dir / SIIM)
    assert competition.config.tags["thresholds_available"]
    answers = competition.answers_path
    report = grade_csv(answers, competition)
    assert report.score == 1.0 and report.gold_medal and not math.isnan(report.gold_threshold)
    board.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:00\n")
    assert not load_competition(siim_dir / SIIM).config.tags["thresholds_available"]


@needs_bwrap
@pytest.mark.skipif(not HAS_MLEBENCH, reason="MLE-bench's mlebench package is not importable")
def test_dev_split_runs_and_agrees_with_mlebench(
    dev_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(thresholds, "_package_dir", FIND_PACKAGE)
    task = mle_bench(split="dev", data_dir=str(dev_dir), cross_check=True)
    assert sorted(str(s.id) for s in task.dataset) == sorted(split_ids("dev"))
    (log,) = inspect_eval(
        task, model="mockllm/model", solver=copy_sample_submission(),
        log_dir=str(tmp_path / "logs"), display="none", max_samples=4,
    )  # fmt: skip
    assert log.status == "success", log.error
    for sample in log.samples or []:
        score = sample.scores["cross_checked_medal_scorer"]
        assert score.value["valid_submission"] == 1.0, sample.id
        assert score.metadata["cross_check"]["agree"], (sample.id, score.metadata["cross_check"])
