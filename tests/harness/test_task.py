"""End-to-end runs of the harness task: offline, mockllm or no model, bwrap sandbox."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelAPI, ModelOutput, modelapi
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.scorer import FLAGS
from sandmle.harness.solvers import copy_sample_submission, guard
from tests.answers import copy_answers

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


@pytest.fixture
def pack(plant_dir: Path, bike_dir: Path) -> Path:
    return plant_dir.parent


def _run(pack: Path, solver: Solver, tmp_path: Path, **task_args: object) -> EvalLog:
    logs = inspect_eval(
        synthetic(pack=str(pack), **task_args),
        model="mockllm/model",
        solver=solver,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def _metric(log: EvalLog, key: str) -> float:
    assert log.results is not None
    (score,) = [s for s in log.results.scores if s.name == key]
    return score.metrics["mean"].value


@solver
def _crash() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        raise RuntimeError("agent exploded")

    return solve


def test_sample_submission_metrics_match_grading_core(pack: Path, tmp_path: Path) -> None:
    log = _run(pack, copy_sample_submission(), tmp_path)
    assert _metric(log, "valid_submission") == 1.0
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        comp = load_competition(pack / str(sample.id))
        expected = grade_csv(comp.sample_submission_path, comp)
        value = sample.scores["medal_scorer"].value
        assert isinstance(value, dict)
        for flag in FLAGS:
            assert value[flag] == float(getattr(expected, flag)), flag
        assert value["score"] == expected.score
    # human_rank: only bike-rentals has boards; the NaN of the other is left out of the mean
    bike = next(s for s in log.samples if s.id == "bike-rentals")
    assert _metric(log, "human_rank") == bike.scores["medal_scorer"].value["human_rank"]


def test_perfect_agent_gets_gold_rates(pack: Path, tmp_path: Path) -> None:
    log = _run(pack, copy_answers(), tmp_path)
    for key in ("valid_submission", "gold_medal", "any_medal", "above_median"):
        assert _metric(log, key) == 1.0, key
    assert _metric(log, "silver_medal") == 0.0
    assert _metric(log, "human_rank") == 1.0


def test_no_submission_is_scored_invalid_not_dropped(pack: Path, tmp_path: Path) -> None:
    log = _run(pack, _crash_guarded(), tmp_path)
    assert log.samples is not None and len(log.samples) == 2
    assert _metric(log, "valid_submission") == 0.0
    for sample in log.samples:
        value = sample.scores["medal_scorer"].value
        assert value["valid_submission"] == 0.0 and math.isnan(value["score"])
        assert "no submission file" in sample.scores["medal_scorer"].metadata["invalid_reason"]


def _crash_guarded() -> Solver:
    return guard(_crash())


@modelapi(name="sandmle_test_failing")
class _FailingProvider(ModelAPI):
    """A provider whose every call fails, as a vLLM server without tool-call parsing does."""

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:  # type: ignore[no-untyped-def]
        raise RuntimeError("HTTP 400: auto tool choice requires --enable-auto-tool-choice")


@pytest.mark.parametrize("scaffold", ["react", "aide"])
def test_a_failed_model_call_is_a_sample_error_not_the_agents_zero(
    pack: Path, tmp_path: Path, scaffold: str
) -> None:
    from sandmle.scaffolds.aide import aide
    from sandmle.scaffolds.react import react

    # react's one conversation ends at the failed call; AIDE records each failed call on its
    # node and searches on, and errors once every call of the search has failed
    (log,) = inspect_eval(
        synthetic(pack=str(pack), tasks="plant-watering"),
        model="sandmle_test_failing/model",
        solver=react() if scaffold == "react" else aide(steps=2),
        log_dir=str(tmp_path / "logs"),
        display="none",
        fail_on_error=False,
    )
    (sample,) = log.samples or []
    assert sample.error is not None and "HTTP 400" in sample.error.message
    assert "model call" in sample.error.message
    assert not sample.scores  # not graded: the agent never got to work


def test_an_agent_crash_outside_the_model_is_still_scored(pack: Path, tmp_path: Path) -> None:
    log = _run(pack, _crash_guarded(), tmp_path, tasks="plant-watering")
    (sample,) = log.samples or []
    assert sample.error is None and sample.scores


def test_task_selection_and_split_file(pack: Path, tmp_path: Path) -> None:
    split = tmp_path / "split.txt"
    split.write_text("# one task\nbike-rentals\n")
    assert [s.id for s in synthetic(pack=str(pack), tasks=str(split)).dataset] == ["bike-rentals"]
    assert len(synthetic(pack=str(pack), tasks="plant-watering,bike-rentals").dataset) == 2


def test_agent_never_sees_private_paths(pack: Path) -> None:
    task = synthetic(pack=str(pack))
    for sample in task.dataset:
        assert "private" not in str(sample.input)
        assert "answers" not in str(sample.input).lower()
        assert "/home/data" in str(sample.input)


def test_submission_written_elsewhere_is_not_graded(pack: Path, tmp_path: Path) -> None:
    @solver
    def _wrong_place() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            await sandbox().exec(["cp", "/home/data/sample_submission.csv", "/home/agent/s.csv"])
            return state

        return solve

    log = _run(pack, _wrong_place(), tmp_path)
    assert _metric(log, "valid_submission") == 0.0
    frame = pd.DataFrame([s.scores["medal_scorer"].value for s in log.samples or []])
    assert (
        frame["submission_exists" if "submission_exists" in frame else "valid_submission"] == 0
    ).all()


def test_sample_hitting_its_time_limit_is_still_scored(pack: Path, tmp_path: Path) -> None:
    @solver
    def _slow() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            await sandbox().exec(["cp", "/home/data/sample_submission.csv", SUBMISSION_PATH])
            await sandbox().exec(["sleep", "60"])  # past the sample's 4 s
            return state

        return solve

    log = _run(pack, _slow(), tmp_path, time_limit=4)
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:
        assert sample.limit is not None and sample.limit.type in {"time", "working"}
        assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0
