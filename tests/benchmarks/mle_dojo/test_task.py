"""``sandmle/mle_dojo`` end to end on micro replicas in MLE-Dojo's layout (offline, bwrap)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from sandmle.benchmarks.mle_dojo.task import mle_dojo
from sandmle.errors import SandmleError
from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.samples import competition_for
from sandmle.harness.solvers import copy_sample_submission

from .conftest import DOJO_IDS, SPOOKY

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


@solver
def _hand_in_answers() -> Solver:
    """Test-only: hands in the hidden answers in the sample's columns (a perfect agent)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        competition = competition_for(state.metadata)
        columns = pd.read_csv(competition.sample_submission_path, nrows=0).columns
        answers = pd.read_csv(competition.answers_path)[list(columns)]
        await sandbox().write_file(SUBMISSION_PATH, answers.to_csv(index=False))
        return state

    return solve


def _eval(dojo_dir: Path, solver: Solver, tmp_path: Path) -> EvalLog:
    log = inspect_eval(
        mle_dojo(data_dir=str(dojo_dir)),
        model="mockllm/model",
        solver=solver,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_samples=8,
    )[0]
    assert log.status == "success", log.error
    return log


def _mean(log: EvalLog, key: str) -> float:
    assert log.results is not None
    (score,) = [s for s in log.results.scores if s.name == key]
    return score.metrics["mean"].value


def test_reports_human_rank_beside_medals(dojo_dir: Path, tmp_path: Path) -> None:
    log = _eval(dojo_dir, copy_sample_submission(), tmp_path)
    assert log.samples is not None and sorted(str(s.id) for s in log.samples) == sorted(DOJO_IDS)
    for sample in log.samples:
        value = sample.scores["medal_scorer"].value
        assert isinstance(value, dict)
        assert value["valid_submission"] == 1.0  # Dojo's sample_submission.csv is public
        assert 0.0 <= value["human_rank"] < 1.0  # a constant baseline sits low on the boards
        assert value["gold_medal"] == 0.0
    assert 0.0 <= _mean(log, "human_rank") < 1.0


def test_perfect_submission_tops_the_boards(dojo_dir: Path, tmp_path: Path) -> None:
    log = _eval(dojo_dir, _hand_in_answers(), tmp_path)
    for key in ("valid_submission", "gold_medal", "human_rank"):
        assert _mean(log, key) == 1.0, key


def test_selection_and_missing_competitions(dojo_dir: Path) -> None:
    chosen = f"aerial-cactus-identification,absent,{SPOOKY}"
    task = mle_dojo(data_dir=str(dojo_dir), competitions=chosen)
    assert [s.id for s in task.dataset] == ["aerial-cactus-identification"]
    assert "not prepared" in task.metadata["excluded"]["absent"]
    assert "grader=mle-bench" in task.metadata["excluded"][SPOOKY]
    assert task.metadata["grader"] == "dojo"


def test_grader_choice_picks_the_rules(dojo_dir: Path) -> None:
    ids = f"new-york-city-taxi-fare-prediction,{SPOOKY}"
    dojo_task = mle_dojo(data_dir=str(dojo_dir), competitions=ids)
    mlebench_task = mle_dojo(data_dir=str(dojo_dir), competitions=ids, grader="mle-bench")
    assert [s.id for s in mlebench_task.dataset] == ids.split(",")
    assert mlebench_task.metadata["excluded"] == {}
    assert len(dojo_task.dataset) == 1
    with pytest.raises(SandmleError, match="grader must be"):
        mle_dojo(data_dir=str(dojo_dir), grader="kaggle")
    with pytest.raises(SandmleError, match="does not exist"):
        mle_dojo(data_dir=str(dojo_dir / "nowhere"))
